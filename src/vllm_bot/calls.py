"""The intermediate format for tool calls, results and assistant turns (wire formats live in `wire`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

ResultKind = Literal["text", "data", "error"]

# What the model is told about a call that max_tokens cut off (model/replies.py marks it, the loop
# explains a run of them, agent/dispatch.py).
TRUNCATED_CALL = (
    "your reply was cut off by the max_tokens limit while writing this call, so it was not run. "
    "Make smaller calls (for a big file: write a first part, then add the rest with edit)."
)


def new_call_id() -> str:
    """A fresh id for a call that arrived without one (text-mode calls, servers that omit ids)."""
    return "call_" + uuid.uuid4().hex[:24]


@dataclass
class ToolCall:
    """One call the model asked for. `metadata` records how it was found ("source") and any problem
    ("error": a message for the model; a call with an error is never executed)."""

    id: str
    name: str
    arguments: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        return self.metadata.get("error")


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
            import json

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
