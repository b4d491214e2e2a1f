"""Ctrl-C during a task: stop what is running, keep the session and a history the model can read.

While a tool runs, the first Ctrl-C only sets `Cancel.event`: the executor kills the command's whole
process tree and returns a result that says so. Anywhere else (waiting for or streaming a reply, an
approval prompt, a second Ctrl-C on a tool that ignores the event) Ctrl-C raises KeyboardInterrupt,
which the loop turns into `Interrupted` carrying what the model had streamed so far.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any, Literal

from ..calls import AssistantTurn, ToolCall, ToolResult
from ..conversation import Conversation, answer_calls
from ..events import Event, ReasoningDelta, RequestStarted, TextDelta
from ..prompts import message


class Interrupted(Exception):
    """The user stopped the current reply; `turn` holds what had streamed (partial=True), if anything."""

    def __init__(self, turn: AssistantTurn | None = None) -> None:
        super().__init__("interrupted by the user")
        self.turn = turn


class Cancel:
    """The cancellation state of one task, shared by the loop (which runs tools under `tool()`) and
    the front end (which routes SIGINT to `on_sigint` while a task runs)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.tool_running = False

    def reset(self) -> None:
        self.event.clear()
        self.tool_running = False

    @property
    def requested(self) -> bool:
        return self.event.is_set()

    @contextlib.contextmanager
    def tool(self) -> Iterator[None]:
        self.tool_running = True
        try:
            yield
        finally:
            self.tool_running = False

    def on_sigint(self, signum: int, frame: Any) -> None:
        """First Ctrl-C in a tool: ask it to stop. Otherwise: interrupt the main thread."""
        if self.tool_running and not self.event.is_set():
            self.event.set()
            return
        self.event.set()
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def sigint(self) -> Iterator[None]:
        """Route SIGINT here for the duration (main thread only; elsewhere a no-op)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, self.on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


class PartialReply:
    """Collects the visible text and reasoning of the reply being streamed (a retry starts over), and
    whether its request was native or text mode."""

    def __init__(self) -> None:
        self.via = "native"
        self.text: list[str] = []
        self.reasoning: list[str] = []

    def observe(self, event: Event) -> None:
        if isinstance(event, RequestStarted):
            self.via = event.mode
            self.text.clear()
            self.reasoning.clear()
        elif isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)

    def turn(self) -> AssistantTurn | None:
        """The partial turn (no tool calls: none of them ran), or None when nothing had streamed."""
        content, reasoning = "".join(self.text), "".join(self.reasoning)
        if not content.strip() and not reasoning.strip():
            return None
        via: Literal["native", "text"] = "text" if self.via == "text" else "native"
        return AssistantTurn(content, [], reasoning, "interrupted", None, via, partial=True)


def interrupted_results(calls: list[ToolCall], done: list[ToolResult], *, mid_call: bool) -> list[ToolResult]:
    """`done` plus a result for every call after it, so each call id has exactly one result.
    `mid_call`: the first call without a result was running when the interrupt came."""
    if len(done) == len(calls):  # nothing left to answer (the usual end of a turn)
        return done
    return answer_calls(
        calls, done, message("interrupted_not_run"), message("interrupted") if mid_call else None
    )


def close_open_calls(conversation: Conversation) -> int:
    """After an interrupt outside the loop's own handling: answer calls left without a result."""
    return conversation.close_open_calls(message("interrupted_not_run"))
