"""Typed events that flow from the loop and the model client to the front ends.

The rich terminal UI, the plain UI, the DEBUG log and the JSON writers are all consumers of these
events; none of them is called by the loop directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .calls import AssistantTurn, ProblemKind, ToolCall, ToolResult, Usage


@dataclass
class Event:
    @property
    def type(self) -> str:
        """snake_case name used by stream-json ("tool_call_started")."""
        name = type(self).__name__
        return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


@dataclass
class SessionStarted(Event):
    model: str
    base_url: str
    function_calling: bool
    workspace: str
    context_window: int | None = None


@dataclass
class IterationStarted(Event):
    iteration: int
    max_iterations: int


@dataclass
class RequestStarted(Event):
    mode: str  # "native" or "text"
    messages: int
    attempt: int = 1


@dataclass
class FirstToken(Event):
    """The reply's first token arrived (text, reasoning or a tool call): the server has started
    generating. Once per request; a reply of only tool calls sends no text deltas."""


@dataclass
class TextDelta(Event):
    text: str


@dataclass
class ReasoningDelta(Event):
    text: str


@dataclass
class CallsDetected(Event):
    calls: list[ToolCall]
    source: str  # "native" or "text"
    formats: list[str] = field(default_factory=list)


@dataclass
class ModeSwitched(Event):
    """Function calling fell back to text mode (or was switched by the user)."""

    function_calling: bool
    reason: str
    hint: str = ""


@dataclass
class TurnFinished(Event):
    turn: AssistantTurn
    seconds: float
    first_token_seconds: float | None = None


@dataclass
class UsageReported(Event):
    usage: Usage
    total: Usage
    seconds: float
    context_window: int | None = None


@dataclass
class TelemetryReported(Event):
    """Speed and cache figures for one model request (recorded in session files).

    `server` is a /metrics snapshot (running, waiting, kv_cache_usage), read only for a slow reply;
    `note` explains the wait ("server busy: 3 requests waiting")."""

    seconds: float
    first_token_seconds: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    tokens_per_second: float | None = None
    cache_hit_rate: float | None = None
    server: dict[str, float | None] | None = None
    note: str = ""


@dataclass
class ToolCallStarted(Event):
    call: ToolCall
    preview: str | None = None


@dataclass
class ToolOutput(Event):
    call_id: str
    text: str


@dataclass
class ToolCallFinished(Event):
    call: ToolCall
    result: ToolResult
    seconds: float
    problem: ProblemKind | None = None  # a call that could not be used: what was wrong (calls.py)


@dataclass
class Notice(Event):
    level: str  # "info", "warning", "error"
    message: str


@dataclass
class Debug(Event):
    message: str


@dataclass
class TaskFinished(Event):
    reason: str  # "done", "max_iterations", "malformed", "error", "interrupted", ...
    answer: str
    exit_code: int
    iterations: int
    usage: Usage = field(default_factory=Usage)


@dataclass
class PlanUpdated(Event):
    """The model's task list changed (update_plan): every step, each pending | in_progress | completed."""

    steps: list[dict[str, str]]

    @property
    def done(self) -> int:
        return sum(step.get("status") == "completed" for step in self.steps)


@dataclass
class ModeChanged(Event):
    """The approval mode changed (/approval, /plan, Shift-Tab, an approved plan)."""

    mode: str
    reason: str = ""


@dataclass
class SubagentEvent(Event):
    """An event of a sub-agent (the delegate tool), under the parent's call that started it."""

    call_id: str
    event: Event


Emit = Callable[[Event], None]


def to_json(event: Event) -> dict[str, Any]:
    """A JSON-ready dict with a "type" key (stream-json output, session files)."""
    if isinstance(event, SubagentEvent):
        return {"type": event.type, "call_id": event.call_id, "event": to_json(event.event)}
    data = dataclasses.asdict(event)
    return {"type": event.type, **data}


def ignore(event: Event) -> None:
    """An emit target that drops everything."""
