"""The conversation in the intermediate format: user messages, assistant turns and tool results.

History is append-only between compactions (so vLLM's prefix cache keeps hitting); the wire form is
produced by `wire.to_messages` at request time.
"""

from __future__ import annotations

import re
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


# The task list the model keeps (agent/tasklist.py): its last accepted update_plan call, or the block
# a compaction summary carries (`summary_block`), so the list survives compaction and --continue.
TASK_LIST_TOOL = "update_plan"
MARKS = {"completed": "x", "in_progress": "~", "pending": " "}
SUMMARY_HEAD = "Task list (update_plan), as it stood:"
_LINE = re.compile(r"^- \[([x~ ])\] (.+)$")


def task_list(entries: list[Entry]) -> list[dict[str, str]]:
    """The task list as the model last set it (empty: none)."""
    results: dict[str, ToolResult] = {}
    for entry in reversed(entries):
        if isinstance(entry, ToolResults):
            results.update({r.tool_call_id: r for r in entry.results})
        elif isinstance(entry, AssistantTurn):
            for call in reversed(entry.tool_calls):
                result = results.get(call.id)
                if call.name == TASK_LIST_TOOL and result is not None and not result.is_error:
                    return [dict(s) for s in call.arguments.get("steps", [])]
        elif isinstance(entry, UserMessage) and entry.kind == "summary" and SUMMARY_HEAD in entry.content:
            return parse_block(entry.content)
    return []


def summary_block(steps: list[dict[str, str]]) -> str:
    """The list as compaction's summary carries it (read back by `current`)."""
    if not steps:
        return ""
    lines = [f"- [{MARKS.get(s['status'], ' ')}] {s['text']}" for s in steps]
    return "\n\n" + SUMMARY_HEAD + "\n" + "\n".join(lines)


def parse_block(text: str) -> list[dict[str, str]]:
    status = {mark: name for name, mark in MARKS.items()}
    tail = text.split(SUMMARY_HEAD, 1)[1]
    steps = []
    for line in tail.strip().splitlines():
        found = _LINE.match(line.strip())
        if found is None:
            break
        steps.append({"text": found.group(2), "status": status[found.group(1)]})
    return steps
