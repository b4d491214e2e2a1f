"""Sub-agents (the delegate tool, issue 37): a fresh agent on the same server, with its own
conversation and read-only tools (read, and exec in a sandbox whose workspace is read-only), a
smaller iteration limit and a token budget, explores and answers; the parent gets only that answer,
bounded (delegate.answer_tokens). So the parent's context grows by the answer, not by the files the
sub-agent read. Depth one: a sub-agent has no delegate tool.

Every sub-agent runs in a worker thread while the parent's thread waits: a Ctrl-C (which, in a tool,
sets the parent's cancel event) stops it, and its call's result says "interrupted". Several delegate
calls of one reply start together (`prefetch`, at most delegate.parallel at once: vLLM batches their
requests); the parent still takes their results in the order of the calls."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Protocol

from .. import prompts
from ..calls import ToolCall, ToolResult, Usage
from ..config import DelegateConfig
from ..events import Emit, Event, SubagentEvent, UsageReported
from .planning import message

TOOL = "delegate"
CHARS_PER_TOKEN = 4  # the estimate for bounding an answer; the server counts the real tokens
POLL = 0.1  # seconds between looks at the parent's cancel event while a sub-agent works


class SubAgent(Protocol):
    """What delegation needs of an agent (agent/loop.py's Agent): run a task, be cancelled."""

    cancel: Any
    usage: Usage

    def run(self, task: str) -> Any: ...


@dataclass
class Made:
    """A sub-agent as the session builds it, and how to release what it holds (its sandbox)."""

    agent: SubAgent
    close: Callable[[], None]


Factory = Callable[[Emit], Made]  # the session's composition root builds each sub-agent


class Delegation:
    """The delegate tool's handler."""

    def __init__(self, make: Factory, config: DelegateConfig, emit: Emit) -> None:
        self.make = make
        self.config = config
        self.emit = emit
        self._pool = ThreadPoolExecutor(max_workers=config.parallel, thread_name_prefix="vllm-bot-delegate")
        self._started: dict[str, Future[ToolResult]] = {}
        self._stop: dict[str, threading.Event] = {}
        self.usage: dict[str, Usage] = {}  # per sub-agent (call id), for the status line and JSON

    def prefetch(self, calls: list[ToolCall]) -> None:
        """Start every delegate call of a reply now (when there are several), in call order."""
        if len(calls) < 2:
            return
        for call in calls:
            task = call.arguments.get("task")
            if isinstance(task, str) and task.strip() and call.id not in self._started:
                self._start(call.id, task, call.arguments.get("files"))

    def __call__(
        self, task: str, files: list[str] | None = None, *, call_id: str = "", cancel: Any = None
    ) -> ToolResult:
        if call_id not in self._started:
            self._start(call_id, task, files)
        future, stop = self._started.pop(call_id), self._stop.pop(call_id)
        while True:
            try:
                return future.result(timeout=POLL)
            except FutureTimeout:
                if cancel is not None and cancel.is_set():
                    stop.set()  # the sub-agent ends at its next step: "interrupted"

    def close(self) -> None:
        for stop in self._stop.values():
            stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self, call_id: str, task: str, files: list[str] | None) -> None:
        stop = self._stop[call_id] = threading.Event()
        self._started[call_id] = self._pool.submit(self._run, call_id, task, files or [], stop)

    def _run(self, call_id: str, task: str, files: list[str], stop: threading.Event) -> ToolResult:
        over_budget = threading.Event()
        made: Made | None = None

        def emit(event: Event) -> None:
            self.emit(SubagentEvent(call_id, event))
            if isinstance(event, UsageReported):
                used = event.total.prompt_tokens + event.total.completion_tokens
                if used > self.config.max_tokens and made is not None:
                    over_budget.set()
                    made.agent.cancel.event.set()

        made = self.make(emit)
        watcher = threading.Thread(target=_forward, args=(stop, made.agent.cancel.event), daemon=True)
        watcher.start()
        try:
            outcome = made.agent.run(task.strip() + (f"\n\nStart with: {', '.join(files)}" if files else ""))
        finally:
            stop.set()  # ends the watcher
            made.close()
        self.usage[call_id] = made.agent.usage
        return _result(outcome, over_budget.is_set(), self.config)


def _forward(stop: threading.Event, cancel: threading.Event) -> None:
    """Until the sub-agent ends: the parent's stop (Ctrl-C) becomes the sub-agent's cancel."""
    stop.wait()
    cancel.set()


def _result(outcome: Any, over_budget: bool, config: DelegateConfig) -> ToolResult:
    answer = str(outcome.answer or "").strip()
    limit = config.answer_tokens * CHARS_PER_TOKEN
    if len(answer) > limit:
        answer = answer[:limit].rstrip() + message("subagent_clipped", tokens=str(config.answer_tokens))
    if outcome.reason == "done":
        return ToolResult("", TOOL, "text", answer)
    if outcome.reason == "interrupted" and not over_budget:
        return ToolResult("", TOOL, "error", prompts.message("interrupted"))
    reason = "it used its token budget, delegate.max_tokens" if over_budget else outcome.reason
    return ToolResult("", TOOL, "error", message("subagent_stopped", reason=reason, partial=answer or "-"))
