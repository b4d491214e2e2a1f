"""The loop thread's side of the MCP manager: connect a server, hold it open, follow its changes,
notice when it goes, and restart it once.

A server that stops unexpectedly (its process exited, even while idle, or its connection broke; an
HTTP server that stops answering the ping sent every `mcp.ping_interval` seconds) is
restarted after RESTART_DELAY seconds; one that stops again within RESTART_WINDOW stays stopped
until the user restarts it (`/mcp restart NAME`). Everything here runs on the manager's event loop.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from ..config import McpConfig
from .connection import (
    Hooks,
    describe_failure,
    list_all_prompts,
    list_all_tools,
    offers_resources,
    open_client,
)
from .logs import ServerLog, current, open_log, stderr_tail
from .names import NameTable, sanitize
from .schema import convert_listing
from .screen import Rejected, ToolScreen
from .state import McpPrompt, ServerState, configured_in, unknown_names, unknown_warning

RESTART_DELAY = 1.0  # seconds before a stopped server is started again
RESTART_WINDOW = 60.0  # at most one automatic restart in this many seconds
PING_TIMEOUT = 10.0  # seconds an HTTP server has to answer a ping
Notice = Callable[[str, str], None]  # (level, message) for the user


class Supervisor:
    def __init__(
        self,
        config: McpConfig,
        workspace: Path,
        log_dir: Path | None,
        lock: threading.Lock,
        notice: Notice,
        reserved: set[str],
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.log_dir = log_dir
        self.lock = lock
        self.notice = notice
        self.names = NameTable(reserved)
        self.prompt_names = NameTable()
        for name in config.servers:  # server parts are fixed in config order: deterministic names
            self.names.server(name)
            self.prompt_names.server(name)

    def may_restart(self, state: ServerState) -> bool:
        """Whether a server that stops now is restarted automatically."""
        return time.monotonic() - state.last_auto_restart > RESTART_WINDOW

    def wake(self, state: ServerState) -> None:
        """Ask the holding task to look at the state's flags (loop thread only)."""
        if state.wake is not None:
            state.wake.set()

    def stop(self, state: ServerState) -> None:
        state.closing = True  # seen by a serve that has not begun yet
        self.wake(state)
        if state.scope is not None and state.status == "starting":
            state.scope.cancel()

    def lose(self, state: ServerState, reason: str) -> None:
        """The session noticed the connection is gone (a call failed on it)."""
        if state.status == "connected" and state.lost is None:
            state.lost = reason
            self.wake(state)

    async def serve(self, state: ServerState) -> None:
        """Connect and hold the server; restart it after an unexpected stop, once per window."""
        import anyio

        fresh = True
        try:
            while True:
                await self._run_once(state, fresh)
                fresh = False
                if state.closing:
                    return
                if state.restart_now:
                    continue
                if state.status != "crashed" or not self.may_restart(state):
                    if state.status == "crashed":
                        self.notice(
                            "warning",
                            f"MCP server {state.name} stopped again ({state.error}); not restarting it "
                            f"(/mcp restart {state.name} tries again)",
                        )
                    return
                self._restarting(state)
                with anyio.CancelScope() as state.scope:
                    await anyio.sleep(RESTART_DELAY)
                if state.closing:
                    with self.lock:
                        state.status = "closed"
                    return
        finally:
            state.settled.set()

    def _restarting(self, state: ServerState) -> None:
        with self.lock:  # together: a session thread never sees the restart counted but not begun
            state.last_auto_restart = time.monotonic()
            state.status = "starting"
            state.settled.clear()
        self.notice("warning", f"MCP server {state.name} stopped ({state.error}); restarting it")

    async def _run_once(self, state: ServerState, fresh: bool) -> None:
        """One connection, from start-up until it is stopped or lost; sets the status it ends in."""
        import anyio

        state.wake, state.lost, state.restart_now = anyio.Event(), None, False
        state.relist = state.reprompt = state.recount = False
        startup = self.config.startup_timeout
        log = state.log = self._open_log(state, fresh)
        try:
            with current(log), anyio.CancelScope(deadline=anyio.current_time() + startup) as state.scope:
                if state.closing:
                    state.scope.cancel()
                async with AsyncExitStack() as stack:
                    client = await self._connect(stack, state, log)
                    state.scope.deadline = math.inf  # connected: from now on only stop / lost end it
                    try:
                        await self._hold(state, client, log)
                    finally:
                        # What the SDK says while the connection is taken down (an HTTP session it
                        # cannot end on a server that restarted) is no news: the log keeps it.
                        log.muted = True
            if state.status == "starting":
                if state.closing:
                    with self.lock:
                        state.status = "closed"
                elif state.scope.cancelled_caught:
                    reason = f"no answer within {startup:g} s (mcp.startup_timeout)"
                    self._start_failed(state, reason + stderr_tail(state.log_path))
        except Exception as e:  # boundary: a broken server must not take the session down
            if state.status == "starting":
                self._start_failed(state, describe_failure(e, state.config) + stderr_tail(state.log_path))
            elif state.lost is None:
                state.lost = describe_failure(e, state.config)
        finally:
            log.close()
            self._ended(state)

    def _ended(self, state: ServerState) -> None:
        with self.lock:
            state.client = state.scope = state.log = None
            if state.status != "connected":
                return
            if state.lost is not None and not state.closing and not state.restart_now:
                state.status, state.error = "crashed", state.lost + stderr_tail(state.log_path)
            else:
                state.status = "starting" if state.restart_now else "closed"

    async def _connect(self, stack: AsyncExitStack, state: ServerState, log: ServerLog) -> Any:
        key = f"mcp.servers.{state.name}"
        hooks = Hooks(
            on_message=lambda message: self._on_message(state, message),
            on_log=lambda params: _log_message(log, params),
            on_eof=lambda: self.lose(state, describe_eof(state)),
            screen=ToolScreen(),
        )
        client = await open_client(stack, key, state.config, self.workspace, log.file, hooks)
        state.screen = hooks.screen
        listing, rejected = await list_all_tools(client, hooks.screen)
        capabilities = client.server_capabilities
        prompts = await list_all_prompts(client) if capabilities.prompts is not None else []
        resources = capabilities.resources is not None and await offers_resources(client, log)
        self._relisted(state, listing, rejected, announce=False)
        with self.lock:
            state.status, state.client, state.error, state.broken = "connected", client, None, False
            state.resources = resources
            state.prompts = self._prompts(state.name, prompts)
        state.settled.set()
        return client

    async def _hold(self, state: ServerState, client: Any, log: ServerLog) -> None:
        """Wait for a stop, a lost connection or a change the server announced, and act on it."""
        import anyio

        async with anyio.create_task_group() as group:
            if _modern(client) and _announces_changes(client):
                group.start_soon(self._listen, state, client, log)
            if state.config.url is not None and self.config.ping_interval > 0:
                group.start_soon(self._ping, state, client)
            while not (state.closing or state.lost or state.restart_now):
                await state.wake.wait()
                state.wake = anyio.Event()
                if state.relist or state.reprompt or state.recount:
                    await self._refresh(state, client, log)
            group.cancel_scope.cancel()

    async def _ping(self, state: ServerState, client: Any) -> None:
        """An HTTP server has no process of ours to watch: ask it now and then whether it is there.
        Protocol 2026-07-28 removed `ping`; there the question is a fresh tool listing (which also
        brings in changes a server did not announce)."""
        import anyio

        modern = _modern(client)
        if not modern:  # the SDK warns about `ping` on every use, onto the user's terminal
            warnings.filterwarnings("ignore", message="ping is removed as of", module=__name__)
        while True:
            await anyio.sleep(self.config.ping_interval)
            try:
                with anyio.fail_after(PING_TIMEOUT):
                    if modern:
                        listing, rejected = await list_all_tools(client, state.screen, fresh=True)
                    else:
                        await client.send_ping()
            except Exception as e:  # boundary: any failure means the server is gone for us
                reason = "no answer" if isinstance(e, TimeoutError) else describe_failure(e, state.config)
                self.lose(state, f"it stopped answering pings ({reason})")
                return
            if modern:
                self._relisted(state, listing, rejected)

    async def _listen(self, state: ServerState, client: Any, log: ServerLog) -> None:
        """2026-07-28 servers announce changes only on a `subscriptions/listen` stream."""
        from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

        try:
            resources = client.server_capabilities.resources is not None
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=resources
            ) as events:
                async for event in events:
                    state.relist |= isinstance(event, ToolsListChanged)
                    state.reprompt |= isinstance(event, PromptsListChanged)
                    state.recount |= isinstance(event, ResourcesListChanged)
                    self.wake(state)
        except Exception as e:  # boundary: without the stream we only miss changes, nothing breaks
            log.write("[mcp-client]", f"subscriptions/listen ended: {type(e).__name__}: {e}")

    async def _on_message(self, state: ServerState, message: Any) -> None:
        from mcp_types import (
            PromptListChangedNotification,
            ResourceListChangedNotification,
            ToolListChangedNotification,
        )

        if isinstance(message, ToolListChangedNotification):
            state.relist = True
        elif isinstance(message, PromptListChangedNotification):
            state.reprompt = True
        elif isinstance(message, ResourceListChangedNotification):
            state.recount = True
        else:
            return
        self.wake(state)

    async def _refresh(self, state: ServerState, client: Any, log: ServerLog) -> None:
        """List the tools, prompts or resources again after the server said they changed."""
        tools_changed, prompts_changed, resources_changed = state.relist, state.reprompt, state.recount
        state.relist = state.reprompt = state.recount = False
        try:
            tools = await list_all_tools(client, state.screen, fresh=True) if tools_changed else None
            prompts = await list_all_prompts(client, fresh=True) if prompts_changed else None
        except Exception as e:  # boundary: a failed re-list keeps the tools we had
            log.write("[mcp-client]", f"listing again after a change failed: {type(e).__name__}: {e}")
            return
        resources = await offers_resources(client, log) if resources_changed else None
        with self.lock:
            if prompts is not None:
                state.prompts = self._prompts(state.name, prompts)
            if resources is not None:
                state.resources = resources
        if tools is not None:
            self._relisted(state, *tools)

    def _relisted(
        self,
        state: ServerState,
        listing: list[dict[str, Any]],
        rejected: list[Rejected],
        *,
        announce: bool = True,
    ) -> None:
        """Take a (new) listing: the tools offered, the ones skipped and config's names that match
        none. Each skipped tool and unknown name is said once a session, not again after a restart."""
        tools, skipped = convert_listing(state.name, listing, self.names, rejected)
        unknown = unknown_names(state.config, tools)
        said = [f"skipped {reason}" for reason in skipped]
        said += [unknown_warning(state.config, name) for name in unknown]
        with self.lock:
            before = {t.public for t in state.tools}
            state.skipped, state.unknown = skipped, unknown
            state.tools = [t for t in tools if configured_in(state.config, t)]
            state.hidden = [t.name for t in tools if not configured_in(state.config, t)]
            after = {t.public for t in state.tools}
            new = [line for line in said if line not in state.warned]
            state.warned.update(new)
        for line in new:
            self.notice("warning", f"MCP server {state.name}: {line}")
        if announce and before != after:
            change = [f"+{n}" for n in sorted(after - before)] + [f"-{n}" for n in sorted(before - after)]
            self.notice("info", f"MCP server {state.name} changed its tools: {', '.join(change)}")

    def _prompts(self, server: str, listing: list[dict[str, Any]]) -> list[McpPrompt]:
        prompts = []
        for item in listing:
            name = item.get("name")
            if not isinstance(name, str) or not name:
                continue
            about = str(item.get("description") or item.get("title") or "")
            arguments = [a for a in item.get("arguments") or [] if isinstance(a, dict) and a.get("name")]
            prompts.append(McpPrompt(server, name, self.prompt_names.assign(server, name), about, arguments))
        return prompts

    def _start_failed(self, state: ServerState, reason: str) -> None:
        with self.lock:
            state.status, state.error = "failed", reason
        self.notice("warning", f"MCP server {state.name} is not available: {reason}")

    def _open_log(self, state: ServerState, fresh: bool) -> ServerLog:
        def warn(kind: str, message: str) -> None:
            self.warn_once(state, kind, message)

        log, problem = open_log(self.log_dir, f"{sanitize(state.name)}.log", warn, fresh=fresh)
        state.log_path = log.path
        if problem:
            self.warn_once(state, "log-file", problem)
        return log

    def warn_once(self, state: ServerState, kind: str, message: str) -> None:
        """One line for the user per server and kind of warning; later ones only go to its log."""
        with self.lock:
            if kind in state.warned:
                return
            state.warned.add(kind)
            state.warnings.append(message)
        where = f" (see {state.log_path})" if state.log_path else ""
        self.notice("warning", f"MCP server {state.name}: {message}{where}")


def describe_eof(state: ServerState) -> str:
    return "the server process exited" if state.config.command is not None else "the server hung up"


async def _log_message(log: ServerLog, params: Any) -> None:
    log.server_message(str(params.level), params.logger, params.data)


def _modern(client: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return client.protocol_version in MODERN_PROTOCOL_VERSIONS


def _announces_changes(client: Any) -> bool:
    capabilities = client.server_capabilities
    tools = getattr(capabilities.tools, "list_changed", None)
    prompts = getattr(capabilities.prompts, "list_changed", None)
    resources = getattr(capabilities.resources, "list_changed", None)
    return bool(tools or prompts or resources)
