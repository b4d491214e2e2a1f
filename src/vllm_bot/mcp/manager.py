"""The MCP manager: the configured servers, connected by the SDK on one background event-loop thread.

The session's thread never blocks on a server it has not asked anything: `start()` returns at once,
`call()` waits for one answer at most the call timeout. A server that cannot start, times out or
dies costs its own tools only: the user gets a notice (`take_notices`), the model an error result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import threading
import time
from collections.abc import Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..calls import ToolResult
from ..config import McpConfig, McpServerConfig
from .connection import describe_failure, leaf, list_all_tools, open_client
from .names import NameTable, sanitize
from .results import convert_result
from .schema import McpTool, convert_listing

CALL_GRACE = 5.0  # seconds past the call timeout before we stop waiting for the loop thread itself
CLOSE_TIMEOUT = 10.0  # the SDK gives a stdio server 2 s to exit on EOF, then 2 s after SIGTERM
Status = str  # disabled | starting | connected | failed | crashed | closed


@dataclass
class ServerState:
    """What the session knows about one configured server (read under the manager's lock)."""

    name: str
    config: McpServerConfig
    status: Status = "starting"
    error: str | None = None
    tools: list[McpTool] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    log_path: Path | None = None
    settled: threading.Event = field(default_factory=threading.Event, repr=False)
    client: Any = field(default=None, repr=False)  # mcp.Client while connected (loop thread)
    stop: Any = field(default=None, repr=False)  # anyio.Event: close a connected server
    scope: Any = field(default=None, repr=False)  # anyio.CancelScope: abandon a start-up
    closing: bool = field(default=False, repr=False)  # close() asked for it (loop thread)


class McpManager:
    def __init__(
        self,
        config: McpConfig,
        workspace: Path,
        *,
        log_dir: Path | None = None,
        reserved: Iterable[str] = (),
        output_limit: int = 30000,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.log_dir = log_dir
        self.output_limit = output_limit
        self.names = NameTable(reserved)
        self.servers: dict[str, ServerState] = {}
        for name, server in config.servers.items():
            self.names.server(name)  # server parts are fixed in config order: deterministic names
            state = ServerState(name, server, "starting" if server.enabled else "disabled")
            if not server.enabled:
                state.settled.set()
            self.servers[name] = state
        self._lock = threading.Lock()
        self._notices: list[tuple[str, str]] = []
        self._by_public: dict[str, McpTool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._futures: dict[str, concurrent.futures.Future[None]] = {}

    # -- lifecycle (session thread) -----------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting every enabled server in the background; returns immediately."""
        if self._loop is not None or not any(s.config.enabled for s in self.servers.values()):
            return
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="vllm-bot-mcp", daemon=True)
        self._thread.start()
        for state in self.servers.values():
            if state.config.enabled:
                self._launch(state)

    def restart(self, name: str) -> bool:
        """Connect `name` again after it failed, crashed or was closed; False if it is not restartable."""
        state = self.servers.get(name)
        if state is None or self._loop is None or state.status not in ("failed", "crashed", "closed"):
            return False
        previous = self._futures.get(name)
        if previous is not None:
            concurrent.futures.wait([previous], CLOSE_TIMEOUT)  # the old connection winds down
            if not previous.done():
                return False
        with self._lock:
            state.status, state.error, state.closing = "starting", None, False
            state.settled.clear()
        self._launch(state)
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every enabled server is connected or has failed; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for state in self.servers.values():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not state.settled.wait(remaining):
                return False
        return True

    def close(self) -> None:
        """Stop every server (stdin closed, then the process tree killed) and the loop thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for state in self.servers.values():
            loop.call_soon_threadsafe(self._stop, state)
        concurrent.futures.wait(list(self._futures.values()), CLOSE_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None

    # -- what the session reads ---------------------------------------------------------------------

    def snapshot(self) -> list[ServerState]:
        """Copies of the server states, in config order."""
        with self._lock:
            return [
                ServerState(s.name, s.config, s.status, s.error, list(s.tools), list(s.skipped), s.log_path)
                for s in self.servers.values()
            ]

    def tools(self) -> list[McpTool]:
        """Every tool of every server that has connected, in config then listing order."""
        with self._lock:
            return [t for s in self.servers.values() for t in s.tools]

    def definitions(self) -> list[dict[str, Any]]:
        return [t.definition for t in self.tools()]

    def find(self, public: str) -> McpTool | None:
        with self._lock:
            return self._by_public.get(public)

    def pending(self) -> list[str]:
        with self._lock:
            return [s.name for s in self.servers.values() if s.status == "starting"]

    def take_notices(self) -> list[tuple[str, str]]:
        """(level, message) pairs for the user since the last call."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    # -- calls (session thread) ---------------------------------------------------------------------

    def call(self, public: str, arguments: dict[str, Any], call_id: str = "") -> ToolResult:
        """Run one MCP tool and wait for its result; every failure becomes an error result."""
        tool = self.find(public)
        if tool is None:
            return ToolResult(call_id, public, "error", f"{public} is not an MCP tool of this session.")
        state = self.servers[tool.server]
        if state.status != "connected" or self._loop is None:
            return self._error(call_id, tool, _unavailable(state))
        timeout = state.config.timeout or self.config.timeout
        future = asyncio.run_coroutine_threadsafe(
            self._call(state, tool.name, arguments, timeout), self._loop
        )
        try:
            raw = future.result(timeout + CALL_GRACE)
        except KeyboardInterrupt:
            future.cancel()
            raise
        except concurrent.futures.TimeoutError:
            future.cancel()
            raw = None
        except Exception as e:  # boundary: whatever the server or transport did, the session goes on
            return self._failed_call(call_id, tool, state, e)
        if raw is None:
            self._notice("warning", f"MCP server {state.name}: {tool.name} timed out after {timeout:g} s")
            return self._error(
                call_id,
                tool,
                f"{tool.name} on MCP server {state.name} did not answer within {timeout:g} s and was "
                "cancelled. Try a smaller request, or continue without this tool.",
            )
        return convert_result(call_id, public, raw, self.output_limit)

    async def _call(self, state: ServerState, name: str, arguments: dict[str, Any], timeout: float) -> Any:
        """The result in wire form, or None when `timeout` ran out (the request is cancelled)."""
        import anyio

        with anyio.move_on_after(timeout):
            result = await state.client.call_tool(name, arguments)
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return None

    def _failed_call(self, call_id: str, tool: McpTool, state: ServerState, exc: Exception) -> ToolResult:
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        error = leaf(exc)
        if isinstance(error, MCPError) and error.code != CONNECTION_CLOSED:
            return self._error(
                call_id,
                tool,
                f"MCP server {state.name} rejected the call: {error.message}. "
                "Check the arguments against the tool's parameters.",
            )
        reason = describe_failure(error, state.config)
        if isinstance(error, MCPError):  # the connection is gone: the server exited or hung up
            self._lost(state, reason + self._tail(state))
            return self._error(
                call_id,
                tool,
                f"MCP server {state.name} stopped while running {tool.name} ({reason}). Its tools "
                "cannot be used for the rest of this session; continue without them.",
            )
        self._notice("warning", f"MCP server {state.name}: {tool.name} failed: {reason}")
        return self._error(call_id, tool, f"{tool.name} on MCP server {state.name} failed: {reason}.")

    def _error(self, call_id: str, tool: McpTool, message: str) -> ToolResult:
        return ToolResult(call_id, tool.public, "error", message)

    def _lost(self, state: ServerState, reason: str) -> None:
        with self._lock:
            if state.status != "connected":
                return
            state.status, state.error = "crashed", reason
        self._notice("warning", f"MCP server {state.name} stopped: {reason}")
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop, state)

    # -- the loop thread ----------------------------------------------------------------------------

    def _launch(self, state: ServerState) -> None:
        assert self._loop is not None
        self._futures[state.name] = asyncio.run_coroutine_threadsafe(self._serve(state), self._loop)

    def _stop(self, state: ServerState) -> None:
        state.closing = True  # seen by a _serve that has not begun yet
        if state.stop is not None:
            state.stop.set()
        if state.scope is not None and state.status == "starting":
            state.scope.cancel()

    async def _serve(self, state: ServerState) -> None:
        """Connect, list the tools, then hold the connection open until stopped."""
        import anyio

        state.stop = anyio.Event()
        startup = self.config.startup_timeout
        key = f"mcp.servers.{state.name}"
        errlog = self._open_log(state)
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + startup) as state.scope:
                if state.closing:
                    state.scope.cancel()
                async with AsyncExitStack() as stack:
                    client = await open_client(stack, key, state.config, self.workspace, errlog)
                    listing = await list_all_tools(client)
                    state.scope.deadline = math.inf  # connected: from now on only `stop` ends it
                    self._connected(state, client, listing)
                    await state.stop.wait()
            if state.closing and state.status == "starting":
                with self._lock:
                    state.status = "closed"
            elif state.scope.cancelled_caught and state.status == "starting":
                reason = f"no answer within {startup:g} s (mcp.startup_timeout)"
                self._start_failed(state, reason + self._tail(state))
        except Exception as e:  # boundary: a broken server must not take the session down
            if state.status == "starting":
                self._start_failed(state, describe_failure(e, state.config) + self._tail(state))
            else:
                self._lost(state, describe_failure(e, state.config))
        finally:
            errlog.close()
            with self._lock:
                state.client = state.scope = None
                if state.status == "connected":
                    state.status = "closed"
            state.settled.set()

    def _connected(self, state: ServerState, client: Any, listing: list[dict[str, Any]]) -> None:
        tools, skipped = convert_listing(state.name, listing, self.names)
        with self._lock:
            state.status, state.client, state.tools, state.skipped = "connected", client, tools, skipped
            self._by_public.update({t.public: t for t in tools})
        for reason in skipped:
            self._notice("warning", f"MCP server {state.name}: skipped {reason}")
        state.settled.set()

    def _start_failed(self, state: ServerState, reason: str) -> None:
        with self._lock:
            state.status, state.error = "failed", reason
        self._notice("warning", f"MCP server {state.name} is not available: {reason}")

    def _open_log(self, state: ServerState) -> TextIO:
        """The file a stdio server's stderr goes to (`.vllm-bot/mcp/<name>.log`), or the null device."""
        if self.log_dir is not None:
            path = self.log_dir / f"{sanitize(state.name)}.log"
            try:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                log = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by _serve)
            except OSError as e:
                self._notice("warning", f"MCP server {state.name}: no log file ({e}); its stderr is dropped")
            else:
                state.log_path = path
                return log
        return open(os.devnull, "w", encoding="utf-8")

    def _tail(self, state: ServerState, lines: int = 3) -> str:
        """ "; its stderr ends: ..." with the last lines the server wrote, if any."""
        if state.log_path is None or not state.log_path.is_file():
            return ""
        with open(state.log_path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 2000))
            text = f.read().decode("utf-8", "replace")
        last = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return f"; its stderr ends: {' | '.join(last)[:300]}" if last else ""

    def _notice(self, level: str, message: str) -> None:
        with self._lock:
            self._notices.append((level, message))


_STATE_PHRASES = {
    "starting": "is still starting",
    "failed": "could not be started",
    "crashed": "has stopped",
    "closed": "has been closed",
    "disabled": "is disabled",
}


def _unavailable(state: ServerState) -> str:
    why = f" ({state.error})" if state.error else ""
    phrase = _STATE_PHRASES.get(state.status, f"is {state.status}")
    return f"MCP server {state.name} {phrase}{why}. Its tools cannot be used now; continue without them."
