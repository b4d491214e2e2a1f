"""The conversation in the intermediate format: user messages, assistant turns and tool results.

History is append-only between compactions (so vLLM's prefix cache keeps hitting); the wire form is
produced by `wire.to_messages` at request time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .calls import AssistantTurn, ToolResult


@dataclass
class UserMessage:
    content: str
    kind: Literal["task", "note", "summary"] = "task"  # note: loop guidance; summary: from compaction


@dataclass
class ToolResults:
    """All results for one assistant turn, in call order; `via` matches the turn's."""

    results: list[ToolResult]
    via: Literal["native", "text"] = "native"


Entry = UserMessage | AssistantTurn | ToolResults


@dataclass
class Conversation:
    entries: list[Entry] = field(default_factory=list)

    def add_user(self, content: str, kind: Literal["task", "note", "summary"] = "task") -> None:
        self.entries.append(UserMessage(content, kind))

    def add_turn(self, turn: AssistantTurn) -> None:
        self.entries.append(turn)

    def add_results(self, results: list[ToolResult], via: Literal["native", "text"]) -> None:
        self.entries.append(ToolResults(results, via))

    def clear(self) -> None:
        self.entries.clear()

    def unanswered_calls(self) -> list[str]:
        """Ids of calls in the last assistant turn that have no result yet (e.g. after a crash)."""
        if not self.entries or not isinstance(self.entries[-1], AssistantTurn):
            return []
        return [c.id for c in self.entries[-1].tool_calls]

    def first_task(self) -> str | None:
        for entry in self.entries:
            if isinstance(entry, UserMessage) and entry.kind == "task":
                return entry.content
        return None
