"""The MCP manager: the configured servers, connected by the SDK on one background event-loop thread.

The session's thread never blocks on a server it has not asked anything: `start()` returns at once,
`call()` waits for one answer, at most the call timeout (longer while the server reports progress,
never past mcp.max_call_time), and stops at the user's Ctrl-C. A server that cannot start, times out
or dies costs its own tools only: the user gets a notice (`take_notices`), the model an error result.
The loop thread's side (connecting, restarting, following changes) is serving.Supervisor.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..calls import ToolResult
from ..config import McpConfig
from .invocation import POLL, Cancelled, Request, TimedOut, Work, wait_for
from .logs import current, route_sdk_logs, unroute_sdk_logs
from .results import convert_result
from .schema import McpTool
from .serving import RESTART_DELAY, Supervisor
from .state import McpPrompt, ServerState, unavailable
from .trouble import call_failure, cancelled_message, timed_out, timeout_message

CLOSE_TIMEOUT = 10.0  # the SDK gives a stdio server 2 s to exit on EOF, then 2 s after SIGTERM
Output = Callable[[str], None]


class McpError(Exception):
    """A request other than a tool call (a resource, a prompt) failed; the message says why."""


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
        self.output_limit = output_limit
        self._lock = threading.Lock()
        self._notices: list[tuple[str, str]] = []
        self.supervisor = Supervisor(config, workspace, log_dir, self._lock, self._notice, set(reserved))
        self.servers: dict[str, ServerState] = {}
        for name, server in config.servers.items():
            state = ServerState(name, server, "starting" if server.enabled else "disabled")
            if not server.enabled:
                state.settled.set()
            self.servers[name] = state
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._futures: dict[str, concurrent.futures.Future[None]] = {}

    # -- lifecycle (session thread) -----------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting every enabled server in the background; returns immediately."""
        if self._loop is not None or not any(s.config.enabled for s in self.servers.values()):
            return
        self._ensure_loop()
        for state in self.servers.values():
            if state.config.enabled:
                self._launch(state)

    def restart(self, name: str) -> bool:
        """Connect `name` again (whatever its state but starting); False if it cannot be restarted now."""
        state = self.servers.get(name)
        if state is None or state.status == "starting":
            return False
        self._ensure_loop()
        assert self._loop is not None
        if state.status == "connected":
            with self._lock:
                state.status, state.error, state.restart_now = "starting", None, True
                state.last_auto_restart = -1e9  # a restart the user asked for earns a new automatic one
                state.settled.clear()
            self._loop.call_soon_threadsafe(self.supervisor.wake, state)
            return True
        previous = self._futures.get(name)
        if previous is not None:
            concurrent.futures.wait([previous], CLOSE_TIMEOUT)  # the old connection winds down
            if not previous.done():
                return False
        with self._lock:
            state.status, state.error, state.closing = "starting", None, False
            state.last_auto_restart = -1e9  # a restart the user asked for earns a new automatic one
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
            loop.call_soon_threadsafe(self.supervisor.stop, state)
        concurrent.futures.wait(list(self._futures.values()), CLOSE_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None
        unroute_sdk_logs()

    # -- what the session reads ---------------------------------------------------------------------

    def snapshot(self) -> list[ServerState]:
        """Copies of the server states, in config order."""
        with self._lock:
            return [s.copy() for s in self.servers.values()]

    def tools(self) -> list[McpTool]:
        """The tools offered to the model, in config then listing order (what the user turned off
        for the session is left out)."""
        with self._lock:
            return [t for s in self.servers.values() for t in s.offered()]

    def definitions(self) -> list[dict[str, Any]]:
        return [t.definition for t in self.tools()]

    def find(self, public: str) -> McpTool | None:
        """Any tool a server listed under this public name, offered or not."""
        with self._lock:
            return next((t for s in self.servers.values() for t in s.tools if t.public == public), None)

    def prompts(self) -> list[McpPrompt]:
        with self._lock:
            return [p for s in self.servers.values() if s.usable for p in s.prompts]

    def resource_servers(self) -> list[str]:
        """The servers the model may list and read resources of."""
        with self._lock:
            return [s.name for s in self.servers.values() if s.usable and s.resources]

    def pending(self) -> list[str]:
        with self._lock:
            return [s.name for s in self.servers.values() if s.status == "starting"]

    def take_notices(self) -> list[tuple[str, str]]:
        """(level, message) pairs for the user since the last call."""
        with self._lock:
            notices, self._notices = self._notices, []
        return notices

    def set_off(self, server: str, tools: list[str], off: bool) -> list[str]:
        """Turn a server (no `tools`) or some of its tools off or on for the session; returns the
        names it did not know."""
        state = self.servers[server]
        with self._lock:
            if not tools:
                state.off = off
                return []
            by_name = {n: t.public for t in state.tools for n in (t.name, t.public)}
            unknown = [n for n in tools if n not in by_name]
            chosen = {by_name[n] for n in tools if n in by_name}
            state.tools_off = state.tools_off | chosen if off else state.tools_off - chosen
            return unknown

    # -- requests (session thread) ------------------------------------------------------------------

    def call(
        self,
        public: str,
        arguments: dict[str, Any],
        call_id: str = "",
        *,
        cancel: threading.Event | None = None,
        on_output: Output | None = None,
    ) -> ToolResult:
        """Run one MCP tool and wait for its result; every failure becomes an error result."""
        tool = self.find(public)
        if tool is None:
            return ToolResult(call_id, public, "error", f"{public} is not an MCP tool of this session.")
        state = self.servers[tool.server]
        self._await_restart(state, cancel)
        if not state.usable or self._loop is None:
            return ToolResult(call_id, public, "error", unavailable(state))

        async def work(on_progress: Any) -> Any:
            result = await state.client.call_tool(tool.name, arguments, progress_callback=on_progress)
            return result.model_dump(by_alias=True, exclude_none=True, mode="json")

        try:
            raw = self._request(state, work, cancel=cancel, on_output=on_output)
        except Cancelled:
            return ToolResult(call_id, public, "error", cancelled_message(tool))
        except TimedOut as e:
            why = timed_out(e, state, self._timeout(state), self.config)
            self._notice("warning", f"MCP server {state.name}: {tool.name} {why} and was cancelled")
            return ToolResult(call_id, public, "error", timeout_message(why, tool))
        except Exception as e:  # boundary: whatever the server or transport did, the session goes on
            return ToolResult(call_id, public, "error", self._failed(state, tool, e))
        readable = state.name if state.resources else None  # its resource links can be read
        return convert_result(call_id, public, raw, self.output_limit, server=readable)

    def request(self, server: str, work: Work, *, cancel: threading.Event | None = None) -> Any:
        """Run `work(on_progress)` with the server's connected client as `state.client`; raises
        McpError (for the model or the user) when the server cannot be asked or the request fails."""
        state = self.servers.get(server)
        if state is None:
            raise McpError(f"there is no MCP server named {server!r} in this session")
        self._await_restart(state, cancel)
        if not state.usable or self._loop is None:
            raise McpError(unavailable(state))
        try:
            return self._request(state, work, cancel=cancel)
        except Cancelled:
            raise McpError("cancelled by the user") from None
        except TimedOut as e:
            raise McpError(timeout_message(timed_out(e, state, self._timeout(state), self.config))) from None
        except Exception as e:  # boundary: the transport's and server's failures become one message
            raise McpError(self._failed(state, None, e)) from None

    def client(self, server: str) -> Any:
        """The server's connected `mcp.Client` (use it only inside `request` work)."""
        return self.servers[server].client

    def _request(
        self,
        state: ServerState,
        work: Work,
        *,
        cancel: threading.Event | None,
        on_output: Output | None = None,
    ) -> Any:
        assert self._loop is not None
        request = Request(self._timeout(state), self.config.max_call_time)
        return wait_for(self._loop, request, self._bound(state, work), cancel=cancel, on_output=on_output)

    def _bound(self, state: ServerState, work: Work) -> Work:
        """`work` with the SDK's complaints about it going to the server's log."""

        async def bound(on_progress: Any) -> Any:
            log = state.log
            if log is None:
                return await work(on_progress)
            with current(log):
                return await work(on_progress)

        return bound

    def _await_restart(self, state: ServerState, cancel: threading.Event | None) -> None:
        """A server being restarted is waited for (at most its start-up time), so a call right after
        it stopped finds it back rather than failing."""
        deadline = time.monotonic() + self.config.startup_timeout + RESTART_DELAY
        while state.tools and time.monotonic() < deadline and not (cancel is not None and cancel.is_set()):
            with self._lock:
                broken = state.broken and state.status == "connected"
                if not (broken or self._restart_coming(state)):
                    return
            time.sleep(POLL)

    def _restart_coming(self, state: ServerState) -> bool:
        """Whether the server is being restarted, or just stopped and its supervisor is about to
        restart it (it has marked it crashed and not yet decided: once per window, it will)."""
        if state.status == "starting":
            return True
        future = self._futures.get(state.name)
        deciding = state.status == "crashed" and future is not None and not future.done()
        return deciding and self.supervisor.may_restart(state)

    def _timeout(self, state: ServerState) -> float:
        return state.config.timeout or self.config.timeout

    def _failed(self, state: ServerState, tool: McpTool | None, exc: BaseException) -> str:
        """The message for a failed request; a lost connection is handed to the supervisor."""
        with self._lock:  # the supervisor may have noticed first and be restarting it already
            connected = state.status == "connected"
            coming = self._restart_coming(state) or (connected and self.supervisor.may_restart(state))
        message, lost = call_failure(state, tool, exc, coming)
        if lost is not None and self._loop is not None:
            with self._lock:
                state.broken = True  # the next call waits for the supervisor to notice and restart
            self._loop.call_soon_threadsafe(self.supervisor.lose, state, lost)
        elif tool is not None:
            self._notice("warning", f"MCP server {state.name}: {tool.name} failed: {message}")
        return message

    # -- the loop thread ----------------------------------------------------------------------------

    def _ensure_loop(self) -> None:
        if self._loop is not None:
            return
        route_sdk_logs()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="vllm-bot-mcp", daemon=True)
        self._thread.start()

    def _launch(self, state: ServerState) -> None:
        assert self._loop is not None
        self._futures[state.name] = asyncio.run_coroutine_threadsafe(self.supervisor.serve(state), self._loop)

    def _notice(self, level: str, message: str) -> None:
        with self._lock:
            self._notices.append((level, message))
