"""The conversation in the intermediate format: user messages, assistant turns and tool results.

History is append-only between compactions (so vLLM's prefix cache keeps hitting); the wire form is
produced by `wire.to_messages` at request time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .calls import AssistantTurn, ToolCall, ToolResult, error_result


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

    def unanswered_calls(self) -> list[ToolCall]:
        """Calls of the last assistant turn, which have no result yet (e.g. after an interrupt)."""
        if not self.entries or not isinstance(self.entries[-1], AssistantTurn):
            return []
        return list(self.entries[-1].tool_calls)

    def close_open_calls(self, message: str) -> int:
        """Answer every call of the last turn that has no result with an error saying `message`;
        returns how many were answered."""
        calls = self.unanswered_calls()
        if calls:
            turn = self.entries[-1]
            assert isinstance(turn, AssistantTurn)
            self.add_results(answer_calls(calls, [], message), turn.via)
        return len(calls)

    def first_task(self) -> str | None:
        for entry in self.entries:
            if isinstance(entry, UserMessage) and entry.kind == "task":
                return entry.content
        return None


def answer_calls(
    calls: list[ToolCall], have: list[ToolResult], message: str, first: str | None = None
) -> list[ToolResult]:
    """Exactly one result per call, in call order: its result from `have` (matched by id, in order),
    else an error result saying `message` (`first` for the first call without one, e.g. the call
    that was running when the task stopped)."""
    by_id: dict[str, list[ToolResult]] = {}
    for result in have:
        by_id.setdefault(result.tool_call_id, []).append(result)
    results: list[ToolResult] = []
    missed = False
    for call in calls:
        found = by_id.get(call.id)
        if found:
            results.append(found.pop(0))
        else:
            results.append(error_result(call, first if first is not None and not missed else message))
            missed = True
    return results
