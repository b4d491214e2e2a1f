"""What the session knows about one configured MCP server, and which of its tools are offered.

A server's tools pass two filters before the model sees them: the config's `enabled_tools` /
`disabled_tools` (decided when the server lists its tools) and what the user turned off for this
session with `/mcp off` (decided at every sync, so `/mcp on` brings them back without a restart).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import McpServerConfig
from .schema import McpTool

Status = str  # disabled | starting | connected | failed | crashed | closed


@dataclass
class McpPrompt:
    """One prompt a server offers, as the slash command `/<command>`."""

    server: str
    name: str  # the server's name for it
    command: str  # mcp__server__prompt, without the slash
    description: str
    arguments: list[dict[str, Any]] = field(default_factory=list)  # name, description, required


@dataclass
class ServerState:
    """One configured server (read and written under the manager's lock)."""

    name: str
    config: McpServerConfig
    status: Status = "starting"
    error: str | None = None
    tools: list[McpTool] = field(default_factory=list)  # listed, usable and allowed by config
    hidden: list[str] = field(default_factory=list)  # tool names config's enabled/disabled_tools leave out
    skipped: list[str] = field(default_factory=list)  # tools that cannot be offered, and why
    warnings: list[str] = field(default_factory=list)  # shown once each (a server's stdout junk, its errors)
    unknown: list[str] = field(default_factory=list)  # names in enabled/disabled_tools it does not list
    prompts: list[McpPrompt] = field(default_factory=list)
    resources: bool = False  # it offers resources (the resource tools cover it)
    log_path: Path | None = None
    off: bool = False  # turned off for this session (/mcp off NAME)
    tools_off: set[str] = field(default_factory=set)  # public names turned off for this session
    settled: threading.Event = field(default_factory=threading.Event, repr=False)
    broken: bool = field(default=False, repr=False)  # a call found the connection gone (session thread)
    # The loop thread's own (never copied by a snapshot):
    client: Any = field(default=None, repr=False)  # mcp.Client while connected
    log: Any = field(default=None, repr=False)  # logs.ServerLog of the connection
    wake: Any = field(default=None, repr=False)  # anyio.Event: something for the holding task to do
    scope: Any = field(default=None, repr=False)  # anyio.CancelScope of a start-up or a restart's wait
    closing: bool = field(default=False, repr=False)  # close() or /mcp restart asked for it
    lost: str | None = field(default=None, repr=False)  # why the connection went, when it did
    relist: bool = field(default=False, repr=False)  # the server said its tools changed
    reprompt: bool = field(default=False, repr=False)  # ... or its prompts
    recount: bool = field(default=False, repr=False)  # ... or its resources
    screen: Any = field(default=None, repr=False)  # screen.ToolScreen of the connection
    restart_now: bool = field(default=False, repr=False)  # /mcp restart on a connected server
    last_auto_restart: float = field(default=-1e9, repr=False)  # time.monotonic() of the last one
    warned: set[str] = field(default_factory=set, repr=False)  # kinds and lines of warning already shown

    def copy(self) -> ServerState:
        """The user-visible part, for snapshots."""
        return ServerState(
            self.name,
            self.config,
            self.status,
            self.error,
            list(self.tools),
            list(self.hidden),
            list(self.skipped),
            list(self.warnings),
            list(self.unknown),
            list(self.prompts),
            self.resources,
            self.log_path,
            self.off,
            set(self.tools_off),
        )

    @property
    def usable(self) -> bool:
        """Connected and not turned off: its tools, prompts and resources are offered."""
        return self.status == "connected" and not self.off

    def offered(self) -> list[McpTool]:
        """The tools the model sees. A server that stopped keeps them: a restart brings them back, and
        the tool list (and vLLM's prefix cache) stays as it was meanwhile."""
        return [] if self.off else [t for t in self.tools if t.public not in self.tools_off]


def configured_in(config: McpServerConfig, tool: McpTool) -> bool:
    """Whether config's `enabled_tools` / `disabled_tools` let `tool` through (either name counts)."""
    names = {tool.name, tool.public}
    if config.enabled_tools is not None and not names & set(config.enabled_tools):
        return False
    return not names & set(config.disabled_tools)


def unknown_names(config: McpServerConfig, tools: list[McpTool]) -> list[str]:
    """Names in `enabled_tools` / `disabled_tools` that match no tool the server lists."""
    known = {n for t in tools for n in (t.name, t.public)}
    listed = [*(config.enabled_tools or []), *config.disabled_tools]
    return [n for n in dict.fromkeys(listed) if n not in known]


def unknown_warning(config: McpServerConfig, name: str) -> str:
    """The warning for one of `unknown_names`, as the session says it and `mcp list` shows it."""
    key = "enabled_tools" if name in (config.enabled_tools or []) else "disabled_tools"
    return f"{key} names {name!r}, a tool the server does not list"


_PHRASES = {
    "starting": "is starting (or restarting) and not ready yet",
    "failed": "could not be started",
    "crashed": "has stopped",
    "closed": "has been closed",
    "disabled": "is disabled",
}


def unavailable(state: ServerState) -> str:
    """What the model is told when it calls a tool of a server it cannot use right now."""
    if state.status == "connected" and state.off:
        return f"The user turned MCP server {state.name} off for this session. Continue without its tools."
    why = f" ({state.error})" if state.error and state.status != "starting" else ""
    phrase = _PHRASES.get(state.status, f"is {state.status}")
    if state.status == "starting":
        return f"MCP server {state.name} {phrase}. Try the call again in a moment, or continue without it."
    return (
        f"MCP server {state.name} {phrase}{why}. Its tools cannot be used unless the user restarts it "
        f"(/mcp restart {state.name}); continue without them."
    )
