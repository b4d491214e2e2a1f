"""The intermediate format for tool calls, results and assistant turns (wire formats live in `wire`)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

ResultKind = Literal["text", "data", "error"]
ProblemKind = Literal[
    "unreadable", "unknown_tool", "arguments", "truncated", "in_reasoning", "too_many", "not_a_call",
    "finish_beside_others",
]  # fmt: skip


class CallProblem(str):
    """Why a call cannot run: the message for the model (a str, as `ToolCall.metadata["error"]` holds
    it in the parser's contract) and its kind, which is what code decides by (never the wording)."""

    kind: ProblemKind

    def __new__(cls, message: str, kind: ProblemKind = "unreadable") -> CallProblem:
        problem = super().__new__(cls, message)
        problem.kind = kind
        return problem


def new_call_id() -> str:
    """A fresh id for a call that arrived without one (text-mode calls, servers that omit ids)."""
    return "call_" + uuid.uuid4().hex[:24]


@dataclass(eq=False)
class ToolCall:
    """One call the model asked for. `metadata` records how it was found ("source") and any problem
    ("error": a message for the model; a call with an error is never executed)."""

    id: str
    name: str
    arguments: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __eq__(self, other: object) -> bool:  # a CheckedCall equals the same call not (yet) checked
        return isinstance(other, ToolCall) and vars(self) == vars(other)

    @property
    def error(self) -> CallProblem | None:
        found = self.metadata.get("error")
        return found if found is None or isinstance(found, CallProblem) else CallProblem(found)


class CheckedCall(ToolCall):
    """A call that may run: its tool exists and its arguments fit the tool's schema, normalized once
    (by the parser, or by `tools.validation.check_call`). The gate, the checkpoint, the executor and
    the preview take it as it is; nothing checks or changes it again."""


def with_problem(call: ToolCall, problem: CallProblem) -> ToolCall:
    """`call` marked as one that must not run (a new call: a checked one stays as it was checked)."""
    return ToolCall(call.id, call.name, call.arguments, {**call.metadata, "error": problem})


@dataclass
class ToolResult:
    """The outcome of one call. `value` is a string for text/error and any JSON value for data."""

    tool_call_id: str
    name: str
    kind: ResultKind
    value: Any

    @property
    def is_error(self) -> bool:
        return self.kind == "error"

    def as_text(self) -> str:
        """The result as the model sees it (data is JSON-encoded)."""
        if self.kind == "data":
            return json.dumps(self.value, ensure_ascii=False)
        return str(self.value)


def text_result(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call.id, call.name, "text", text)


def error_result(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call.id, call.name, "error", message)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        if other.cached_tokens is not None:
            self.cached_tokens = (self.cached_tokens or 0) + other.cached_tokens


@dataclass
class AssistantTurn:
    """One complete model reply. `via` is "native" when the request carried `tools`, else "text";
    it decides how the turn and its results are written back to the wire."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    via: Literal["native", "text"] = "native"
    raw_content: str | None = None  # content before <think> stripping, when it differed
    partial: bool = False  # interrupted by the user; kept in history as-is, calls never run
