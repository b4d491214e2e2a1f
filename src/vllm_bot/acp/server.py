"""The ACP agent: the SDK's `Agent` interface over our sessions.

Threads: the protocol (the SDK, asyncio) runs in a thread of its own; the sessions run on the main
thread (worker.py), where Ctrl-C reaches them. A request that needs a session's work submits a job
and awaits it; the session's updates come back through `Outbox`, which sends them in order, and a
prompt's reply goes out only after every update of its turn.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from .. import __version__
from . import options
from .content import PromptRefused, replay, takes_images, task_text
from .errors import busy, invalid, no_session, request_error
from .sessions import AcpSession
from .updates import Update
from .worker import Worker

log = logging.getLogger("vllm_bot.acp")


class Outbox:
    """Updates from the worker thread, sent in order on the protocol thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[tuple[str, Update]] = asyncio.Queue()
        self.conn: Any = None
        self.elicits_forms = False
        self._pump = loop.create_task(self._run())

    def send(self, session_id: str, updates: list[Update]) -> None:
        for update in updates:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (session_id, update))

    def request(self, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """From the worker thread: `await call(conn)` after the updates queued so far; None when the
        editor answers with an error or is gone. A Ctrl-C while it waits withdraws the request."""

        async def ask() -> Any:
            await self.drain()
            return await call(self.conn)

        future = asyncio.run_coroutine_threadsafe(ask(), self.loop)
        try:
            return future.result()
        except Exception as e:  # a question nobody answered is a "no" (permission.Chosen)
            log.warning("the editor did not answer: %s", e)
            return None
        except BaseException:
            future.cancel()
            raise

    async def drain(self) -> None:
        await self.queue.join()

    async def _run(self) -> None:
        while True:
            session_id, update = await self.queue.get()
            try:
                await self.conn.session_update(session_id=session_id, update=update)
            except Exception as e:  # the editor went away mid-turn: the task still ends normally
                log.warning("session/update not sent: %s", e)
            finally:
                self.queue.task_done()


class AcpAgent:
    """The agent side of the protocol; one per connection."""

    def __init__(self, args: argparse.Namespace, worker: Worker) -> None:
        self.args = args
        self.worker = worker
        self.sessions: dict[str, AcpSession] = {}
        self.running: set[str] = set()  # sessions with a prompt in progress
        self.outbox: Outbox | None = None

    def on_connect(self, conn: Any) -> None:
        self.outbox = Outbox(asyncio.get_running_loop())
        self.outbox.conn = conn

    async def _work(self, job: Callable[[], Any]) -> Any:
        """Run `job` on the worker thread; a user-facing error becomes the JSON-RPC error."""
        try:
            return await asyncio.wrap_future(self.worker.submit(job))
        except Exception as e:  # errors of ours carry their message; anything else is logged
            raise request_error(e) from None

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise no_session(session_id)
        return session

    # -- initialize, session/new, session/load ------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        elicitation = getattr(client_capabilities, "elicitation", None)
        assert self.outbox is not None
        self.outbox.elicits_forms = getattr(elicitation, "form", None) is not None
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=False, audio=False),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="vllm-bot", title="vLLM Bot", version=__version__),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        assert self.outbox is not None
        outbox = self.outbox
        session = await self._work(lambda: AcpSession.open(self.args, outbox, cwd, mcp_servers or []))
        self.sessions[session.id] = session
        return NewSessionResponse(
            session_id=session.id,
            modes=options.modes(session.session),
            config_options=options.config_options(session.session),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        assert self.outbox is not None
        outbox = self.outbox
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await self._work(old.close)

        def load() -> AcpSession:
            loaded = AcpSession.open(self.args, outbox, cwd, mcp_servers or [], resume=session_id)
            outbox.send(loaded.id, list(replay(loaded.session.agent.conversation.entries)))
            return loaded

        session = await self._work(load)
        await outbox.drain()  # the whole conversation is shown before the reply
        self.sessions[session.id] = session
        return LoadSessionResponse(
            modes=options.modes(session.session), config_options=options.config_options(session.session)
        )

    # -- session/prompt, session/cancel --------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session_id in self.running:
            raise busy(session_id)
        try:
            text = task_text(prompt, session.session.workspace, takes_images(session.session))
        except PromptRefused as e:
            raise invalid(str(e)) from None
        if not text.strip():
            raise invalid("the prompt is empty: send some text")
        session.cancelled = False  # a cancel that came after the last prompt had ended
        self.running.add(session_id)
        try:
            stop = await self._work(lambda: session.prompt(self.worker, text))
        finally:
            self.running.discard(session_id)
            assert self.outbox is not None
            await self.outbox.drain()  # every update of the turn before its reply
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session_id in self.running and not self.worker.interrupt(session):
            session.cancelled = True  # still waiting for another session's prompt: it will not start

    # -- modes and config options ---------------------------------------------------------------------

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        await self._work(lambda: session.set_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == options.MODE_OPTION:
            await self._work(lambda: session.set_mode(str(value)))
        elif config_id == options.MODEL_OPTION:
            await self._work(lambda: session.set_model(str(value)))
        else:
            raise invalid(f"unknown option {config_id!r}: the options are mode and model")
        return SetSessionConfigOptionResponse(config_options=options.config_options(session.session))

    def stop_tasks(self) -> None:
        for session_id in list(self.running):
            self.worker.interrupt(self.sessions[session_id])
