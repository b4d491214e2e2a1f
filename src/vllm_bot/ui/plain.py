"""The plain front end: no colours, no cursor tricks. Used when output is not a terminal and for
headless runs (progress on stderr, the final answer on stdout, printed by the caller)."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TextIO

from ..agent.planning import PlanChoice
from ..calls import ToolCall
from ..events import (
    Event,
    ModeChanged,
    ModeSwitched,
    Notice,
    PlanUpdated,
    SubagentEvent,
    TaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from .approval_prompt import QUESTION, approval_view, parse_answer
from .banner import BannerInfo
from .display import call_title, clip, safe_text
from .plan_prompt import QUESTION as PLAN_QUESTION
from .plan_prompt import plan_choice, task_count, task_lines
from .recap import RecapPart, plain_lines
from .status import StatusLine

RESULT_CHARS = 300  # a result's first line on stderr; the model gets all of it
REST_IS_IN = " (shortened here; --output-format stream-json has the whole result)"


def describe_call(name: str, arguments: dict) -> str:
    """A one-line summary: `read src/app.py`, `exec pytest -q`."""
    for key in ("path", "command"):
        if isinstance(arguments.get(key), str):
            return safe_text(f"{name} {arguments[key]}", keep_newlines=False)
    return safe_text(f"{name} {clip(json.dumps(arguments, ensure_ascii=False), 80)}", keep_newlines=False)


class PlainUI:
    def __init__(self, *, stream_text: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.stream_text = stream_text  # interactive: print the answer as it arrives
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.status = StatusLine()
        self.show_reasoning = False  # plain output never shows reasoning (kept for /reasoning)
        self._mid_line = False
        self._last_result: tuple[str, str] | None = None  # (call, its whole result): /expand

    def __call__(self, event: Event) -> None:
        self.status(event)
        if isinstance(event, TextDelta) and self.stream_text:
            self.out.write(event.text)
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, TurnFinished) and self.stream_text and self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        elif isinstance(event, ToolCallStarted):
            self._err(f"-> {describe_call(event.call.name, event.call.arguments)}")
        elif isinstance(event, ToolCallFinished):
            self._last_result = (call_title(event.call), event.result.as_text())
            first = event.result.as_text().strip().splitlines()[:1]
            status = "failed" if event.result.is_error else "ok"
            shown = clip(safe_text(first[0]), RESULT_CHARS, REST_IS_IN) if first else ""
            self._err(f"   {event.call.name} {status}: {shown}")
        elif isinstance(event, PlanUpdated):
            self._err(
                "\n".join(
                    [f"Task list ({task_count(event.steps)}):", *("  " + t for t in task_lines(event.steps))]
                )
            )
        elif isinstance(event, ModeChanged):
            self._err(f"Approval mode: {event.mode}.")
        elif isinstance(event, SubagentEvent):
            self._subagent(event)
        elif isinstance(event, ModeSwitched):
            self._err(f"note: function calling is off for this session: {event.reason}\n      {event.hint}")
        elif isinstance(event, Notice):
            self._err(f"{event.level}: {safe_text(event.message)}")
        elif isinstance(event, TaskFinished) and self.stream_text:
            if event.reason == "interrupted":
                self._err("Interrupted.")
            if self.status.last:
                self._err(f"[{self.status.last}]")

    def _err(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()

    def _subagent(self, wrapped: SubagentEvent) -> None:
        """A sub-agent's calls, one line each, under its delegate call."""
        event = wrapped.event
        if isinstance(event, ToolCallStarted):
            self._err(f"   ↳ {describe_call(event.call.name, event.call.arguments)}")
        elif isinstance(event, TaskFinished):
            self._err(f"   ↳ sub-agent: {event.reason} after {event.iterations} requests")

    # -- the front-end interface the session uses -----------------------------------------------

    def banner(self, info: BannerInfo) -> None:
        title = "vLLM Bot" + (f" [{info.label}]" if info.label else "")
        self._err(title)
        for label, value in info.rows():
            self._err(f"  {label}: {value}")
        for line in info.offline_lines():
            self._err(line)

    def say(self, text: str) -> None:
        self._err(text)

    def error(self, text: str) -> None:
        self._err(text)

    def stop_live(self) -> None:
        pass

    def recap(self, parts: list[RecapPart]) -> None:
        for line in plain_lines(parts):
            self._err(line)

    def working(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to read while a task runs: stdin holds the next messages."""
        return contextlib.nullcontext()

    def expand(self) -> None:
        """The last tool result in full (the plain output shows its first line)."""
        if self._last_result is None:
            self._err("No tool result to show yet.")
            return
        title, text = self._last_result
        self._err(f"{title} (in full):\n{safe_text(text)}")

    def debug_stream(self) -> TextIO:
        return self.err

    def choose_plan(self, plan: str) -> PlanChoice:
        """The plan, then the question as a typed line (plan mode)."""
        self._err("Plan:\n" + safe_text(plan))
        while True:
            self.err.write(PLAN_QUESTION)
            self.err.flush()
            try:
                answer = parse_answer(input())
            except EOFError:
                return PlanChoice(None)
            if answer is not None:
                return plan_choice(answer)

    def confirm(
        self, call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None = None
    ) -> Answer:
        view = approval_view(call, preview, reason, scope)
        lines = [view.title, f"  ({view.reason})"]
        lines += [f"  $ {view.command}"] if view.command is not None else []
        lines += [text for text in (view.summary, view.diff, view.text, view.always_note) if text]
        self._err("\n".join(lines))
        while True:
            self.err.write(QUESTION)
            self.err.flush()
            try:
                answer = parse_answer(input())
            except EOFError:
                return Answer(False)
            if answer is not None:
                return answer
