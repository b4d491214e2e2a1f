"""MCP tools inside a session: the manager's tools registered with the executor, on the session thread.

The servers connect in the background (`start`). `sync` runs on the session's own thread at safe
points — before a task starts and before the interactive prompt — so the executor's definitions only
change between requests: the system prompt (cached per tool set) and vLLM's prefix cache change when
a server's tools arrive or change, or the user turns some off, never in the middle of a request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..calls import ToolCall, ToolResult
from ..config import Config
from ..events import Emit, Notice
from ..tools.definitions import tool_names
from ..tools.executor import CONTEXT_PARAMS
from .schema import McpTool

if TYPE_CHECKING:  # the manager (asyncio) and resources are imported only when a server is configured
    from .manager import McpManager

Preview = Callable[[ToolCall], str | None]
Handler = Callable[..., ToolResult]


class McpTools:
    def __init__(self, config: Config, workspace: Path, state_dir: Path | None) -> None:
        self.config = config
        self.workspace = workspace
        self.state_dir = state_dir
        self.manager: McpManager | None = None
        self.registered: dict[str, dict[str, Any]] = {}  # public name -> the definition registered
        self._executor: Any = None
        self._gate: Any = None
        self._emit: Emit | None = None
        self._choice_warned = False

    @property
    def configured(self) -> bool:
        return any(s.enabled for s in self.config.mcp.servers.values())

    def start(self, executor: Any, gate: Any, emit: Emit) -> None:
        """Begin connecting the servers in the background; returns at once."""
        self._executor, self._gate, self._emit = executor, gate, emit
        if not self.config.mcp.servers or self.manager is not None:
            return
        from . import resources
        from .manager import McpManager
        from .report import log_dir_in

        self.manager = McpManager(
            self.config.mcp,
            self.workspace,
            log_dir=log_dir_in(self.state_dir) if self.state_dir else None,
            reserved=[*tool_names(executor.definitions), *resources.TOOL_NAMES],
            output_limit=self.config.tools.output_limit,
        )
        self.manager.start()

    def sync(self, *, wait: bool = False) -> None:
        """Show the servers' notices and make the executor serve exactly the tools on offer now.

        With `wait`, servers still starting are waited for (bounded by mcp.startup_timeout), so the
        first request already carries their tools.
        """
        manager = self.manager
        if manager is None or self._emit is None:
            return
        pending = manager.pending()
        if wait and pending:
            plural = "s" if len(pending) > 1 else ""
            self._emit(Notice("info", f"waiting for MCP server{plural} to start: {', '.join(pending)}"))
            manager.wait(self.config.mcp.startup_timeout + 5)
        self._flush_notices()
        wanted = {t.public: (t.definition, self._tool_handler(manager, t)) for t in manager.tools()}
        servers = manager.resource_servers()
        if servers:
            from . import resources

            handlers = self._resource_handlers(manager)
            wanted.update(
                {
                    d["function"]["name"]: (d, handlers[d["function"]["name"]])
                    for d in resources.definitions(servers)
                }
            )
        self._reconcile(wanted)
        self._check_tool_choice()

    def _check_tool_choice(self) -> None:
        """A vllm.tool_choice naming an MCP tool that is not offered (its server failed, or the user
        turned it off) is sent as "auto" by the model client; say so once each time it happens."""
        choice = self.config.vllm.tool_choice
        missing = choice not in ("auto", "none", "required") and choice not in tool_names(
            self._executor.definitions
        )
        if missing and not self._choice_warned and self._emit is not None:
            self._emit(
                Notice("warning", f"vllm.tool_choice names {choice}, which is not offered now; using auto")
            )
        self._choice_warned = missing

    def _reconcile(self, wanted: dict[str, tuple[dict[str, Any], Handler]]) -> None:
        for name in [n for n, d in self.registered.items() if wanted.get(n, (None,))[0] != d]:
            self._executor.unregister(name)
            del self.registered[name]
        for name, (definition, handler) in wanted.items():
            if name in self.registered:
                continue
            self._executor.register(definition, handler)
            self.registered[name] = definition
            tool = self.manager.find(name) if self.manager else None
            if tool is None or self.allowed(tool):  # the resource tools only read
                self._gate.grants.tools.add(name)

    def allowed(self, tool: McpTool) -> bool:
        """Allowlisted in config: the whole server (`allow: true`) or this tool by either name."""
        allow = self.config.mcp.servers[tool.server].allow
        if isinstance(allow, bool):
            return allow
        return tool.name in allow or tool.public in allow

    def preview(self, fallback: Preview | None) -> Preview:
        """The approval preview: the server and its hints for MCP tools, `fallback` for the rest."""

        def preview(call: ToolCall) -> str | None:
            tool = self.manager.find(call.name) if self.manager else None
            if tool is not None:
                from .report import call_preview

                return call_preview(tool)
            return fallback(call) if fallback else None

        return preview

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()

    def _tool_handler(self, manager: McpManager, tool: McpTool) -> Handler:
        """The executor calls this with the call's arguments as keywords (and, when no parameter of
        the tool has the same name, the cancel event and the output callback); it sets the id."""
        properties = tool.definition["function"]["parameters"].get("properties") or {}

        def handler(**arguments: Any) -> ToolResult:
            result = manager.call(tool.public, arguments)
            self._flush_notices()
            return result

        def interruptible(
            *, cancel: threading.Event | None = None, on_output: Any = None, **arguments: Any
        ) -> ToolResult:
            result = manager.call(tool.public, arguments, cancel=cancel, on_output=on_output)
            self._flush_notices()
            return result

        return handler if set(properties) & set(CONTEXT_PARAMS) else interruptible

    def _resource_handlers(self, manager: McpManager) -> dict[str, Handler]:
        from . import resources

        limit = self.config.tools.output_limit

        def listing(*, cancel: threading.Event | None = None, server: str | None = None) -> ToolResult:
            return resources.list_resources(manager, server, limit, cancel)

        def reading(*, cancel: threading.Event | None = None, server: str, uri: str) -> ToolResult:
            return resources.read_resource(manager, server, uri, limit, cancel)

        return {resources.LIST_TOOL: listing, resources.READ_TOOL: reading}

    def _flush_notices(self) -> None:
        if self.manager is None or self._emit is None:
            return
        for level, message in self.manager.take_notices():
            self._emit(Notice(level, message))
