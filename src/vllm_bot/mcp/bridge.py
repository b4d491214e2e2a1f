"""MCP tools inside a session: the manager's tools registered with the executor, on the session thread.

The servers connect in the background (`start`). `sync` runs on the session's own thread at safe
points — before a task starts and before the interactive prompt — so the executor's definitions only
change between requests: the system prompt (cached per tool set) and vLLM's prefix cache change once,
when a server's tools arrive, never in the middle of a request.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..calls import ToolResult
from ..config import Config
from ..events import Emit, Notice
from ..tools.definitions import tool_names
from .manager import McpManager
from .report import call_preview, log_dir_in
from .schema import McpTool

Preview = Callable[[str, dict[str, Any]], str | None]


class McpTools:
    def __init__(self, config: Config, workspace: Path, state_dir: Path | None) -> None:
        self.config = config
        self.workspace = workspace
        self.state_dir = state_dir
        self.manager: McpManager | None = None
        self.registered: set[str] = set()
        self._executor: Any = None
        self._gate: Any = None
        self._emit: Emit | None = None

    @property
    def configured(self) -> bool:
        return any(s.enabled for s in self.config.mcp.servers.values())

    def start(self, executor: Any, gate: Any, emit: Emit) -> None:
        """Begin connecting the servers in the background; returns at once."""
        self._executor, self._gate, self._emit = executor, gate, emit
        if not self.configured or self.manager is not None:
            return
        self.manager = McpManager(
            self.config.mcp,
            self.workspace,
            log_dir=log_dir_in(self.state_dir) if self.state_dir else None,
            reserved=tool_names(executor.definitions),
            output_limit=self.config.tools.output_limit,
        )
        self.manager.start()

    def sync(self, *, wait: bool = False) -> None:
        """Show the servers' notices and register the tools of servers that have connected.

        With `wait`, servers still starting are waited for (bounded by mcp.startup_timeout), so the
        first request already carries their tools.
        """
        manager = self.manager
        if manager is None or self._emit is None:
            return
        pending = manager.pending()
        if wait and pending:
            self._emit(Notice("info", f"waiting for MCP server(s) to start: {', '.join(pending)}"))
            manager.wait(self.config.mcp.startup_timeout + 5)
        self._flush_notices()
        for tool in manager.tools():
            if tool.public not in self.registered:
                self._executor.register(tool.definition, self._handler(manager, tool.public))
                self.registered.add(tool.public)
                if self.allowed(tool):
                    self._gate.grants.tools.add(tool.public)

    def allowed(self, tool: McpTool) -> bool:
        """Allowlisted in config: the whole server (`allow: true`) or this tool by either name."""
        allow = self.config.mcp.servers[tool.server].allow
        if isinstance(allow, bool):
            return allow
        return tool.name in allow or tool.public in allow

    def preview(self, fallback: Preview | None) -> Preview:
        """The approval preview: the server and its hints for MCP tools, `fallback` for the rest."""

        def preview(name: str, arguments: dict[str, Any]) -> str | None:
            tool = self.manager.find(name) if self.manager else None
            if tool is not None:
                return call_preview(tool)
            return fallback(name, arguments) if fallback else None

        return preview

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()

    def _handler(self, manager: McpManager, public: str) -> Callable[..., ToolResult]:
        """The executor calls this with the call's arguments as keywords; the executor sets the id."""

        def handler(**arguments: Any) -> ToolResult:
            result = manager.call(public, arguments)
            self._flush_notices()
            return result

        return handler

    def _flush_notices(self) -> None:
        if self.manager is None or self._emit is None:
            return
        for level, message in self.manager.take_notices():
            self._emit(Notice(level, message))
