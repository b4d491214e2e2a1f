"""Helpers for the MCP tests: the SDK-written test servers and a registry stand-in for the executor."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vllm_bot.calls import ToolCall, ToolResult
from vllm_bot.config import McpServerConfig, ToolsConfig

SERVERS = Path(__file__).resolve().parent / "mcp_servers"


def stdio(name: str, **kw: Any) -> McpServerConfig:
    """A config entry that runs tests/mcp_servers/<name>.py over stdio."""
    return McpServerConfig(command=sys.executable, args=[str(SERVERS / f"{name}.py")], **kw)


def stdio_json(name: str, **kw: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / f"{name}.py")], **kw}


def jsonrpc_json(where: Path, tools: list[Any], **spec: Any) -> dict[str, Any]:
    """A config entry (as in config.json) for tests/mcp_servers/jsonrpc.py, the raw JSON-RPC server,
    listing `tools` exactly as given (its spec is written to `where`/jsonrpc-N.json)."""
    path = where / f"jsonrpc-{len(list(where.glob('jsonrpc-*.json')))}.json"
    path.write_text(json.dumps({"tools": tools, **spec}))
    return {"command": sys.executable, "args": [str(SERVERS / "jsonrpc.py"), str(path)]}


def jsonrpc(where: Path, tools: list[Any], **spec: Any) -> McpServerConfig:
    return McpServerConfig(**jsonrpc_json(where, tools, **spec))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(port: int, command: list[str] | None = None, env: dict[str, str] | None = None) -> Any:
    """An MCP server over streamable HTTP on 127.0.0.1:port (basic.py unless `command` is given),
    once it accepts connections."""
    proc = subprocess.Popen(
        command or [sys.executable, str(SERVERS / "basic.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the HTTP test server exited") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the HTTP test server did not start")


# Reference servers nobody here wrote, installed by .ci/run into .mcp-servers/ (git-ignored): the
# PyPI ones in a venv of their own, server-everything from npm. Locally their tests skip with these
# commands; in CI (CI=true) a missing one fails the test.
REFERENCE = Path(__file__).resolve().parents[1] / ".mcp-servers"
REFERENCE_INSTALL = {
    "pypi": "python3 -m venv .mcp-servers/venv && .mcp-servers/venv/bin/pip install "
    "mcp-server-time==2026.10.19 mcp-server-git==2026.10.19",
    "npm": "npm install --prefix .mcp-servers/npm @modelcontextprotocol/server-everything@2026.8.31",
}
REFERENCE_PATHS = {
    "time": ("pypi", REFERENCE / "venv" / "bin" / "mcp-server-time"),
    "git": ("pypi", REFERENCE / "venv" / "bin" / "mcp-server-git"),
    "everything": (
        "npm",
        REFERENCE
        / "npm"
        / "node_modules"
        / "@modelcontextprotocol"
        / "server-everything"
        / "dist"
        / "index.js",
    ),
}


def reference_command(name: str) -> list[str]:
    """The command that starts reference server `name` over stdio; skips (fails in CI) without it."""
    source, path = REFERENCE_PATHS[name]
    node = shutil.which("node")
    if not path.exists() or (source == "npm" and node is None):
        message = (
            f"reference MCP server {name} is not installed; from the checkout: {REFERENCE_INSTALL[source]}"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return [str(node), str(path)] if source == "npm" else [str(path)]


class RegistryExecutor:
    """Stand-in for the ToolExecutor of issue 3 while it is not on main: only the interface MCP
    tools use (definitions, register(definition, handler), execute_call, preview). The handler is
    called with the call's arguments as keywords; the executor stamps the call's id on the result."""

    def __init__(self) -> None:
        self.definitions: list[dict[str, Any]] = []
        self.handlers: dict[str, Any] = {}

    def register(self, definition: dict[str, Any], handler: Any) -> None:
        self.definitions.append(definition)
        self.handlers[definition["function"]["name"]] = handler

    def execute_call(self, call: ToolCall, **kw: Any) -> ToolResult:
        result = self.handlers[call.name](**call.arguments)
        return dataclasses.replace(result, tool_call_id=call.id, name=call.name)

    def preview(self, name: str, args: dict[str, Any]) -> str | None:
        return None

    def prefetch(self, calls: list[ToolCall]) -> None:
        pass


def make_executor(workspace: Path) -> Any:
    """The real ToolExecutor when the tools package is there, else the registry stand-in."""
    try:
        from vllm_bot.tools import ToolExecutor
    except ImportError:
        return RegistryExecutor()
    return ToolExecutor(workspace, ToolsConfig(), state_dir=workspace / ".vllm-bot")


@contextmanager
def managers(tmp_path: Path) -> Iterator[Any]:
    """Inside: `make(servers, **mcp_config)` starts a manager (its logs in tmp_path/logs) and waits for
    its servers to settle; every manager made is closed at the end."""
    from vllm_bot.config import McpConfig
    from vllm_bot.mcp.manager import McpManager

    made: list[McpManager] = []

    def make(servers: dict[str, McpServerConfig], **config: Any) -> McpManager:
        m = McpManager(McpConfig(servers=servers, **config), tmp_path, log_dir=tmp_path / "logs")
        made.append(m)
        m.start()
        assert m.wait(60)
        return m

    try:
        yield make
    finally:
        for m in made:
            m.close()


def wait_until(condition: Any, timeout: float = 30.0) -> None:
    """Poll `condition()` until it is true; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true in time")
        time.sleep(0.05)
