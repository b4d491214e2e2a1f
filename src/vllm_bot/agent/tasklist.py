"""The task list the model keeps (the update_plan tool, as Codex's): a short checklist of the task's
steps, shown to the user above the input and in the footer (`3/7`) and in stream-json.

The list is not kept beside the conversation: it is the last list the model sent that was accepted,
read back from the conversation (so `--continue` restores it), or, once compaction has summarized
those turns away, from the summary, which carries it (`summary_block`)."""

from __future__ import annotations

import re
from typing import Any

from ..calls import AssistantTurn, ToolResult
from ..conversation import Conversation, ToolResults, UserMessage
from ..events import Emit, PlanUpdated

TOOL = "update_plan"
STATUSES = ("pending", "in_progress", "completed")
MAX_STEPS = 30
MARKS = {"completed": "x", "in_progress": "~", "pending": " "}
SUMMARY_HEAD = "Task list (update_plan), as it stood:"
_LINE = re.compile(r"^- \[([x~ ])\] (.+)$")


class TaskList:
    """The update_plan tool's handler; `emit` reports each accepted list (PlanUpdated)."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit

    def __call__(self, steps: list[dict[str, Any]]) -> ToolResult:
        cleaned = [{"text": str(s["text"]).strip(), "status": s["status"]} for s in steps[:MAX_STEPS]]
        cleaned = [s for s in cleaned if s["text"]]
        working = sum(s["status"] == "in_progress" for s in cleaned)
        if working > 1:
            return ToolResult(
                "", TOOL, "error",
                f"{working} steps are in_progress; keep at most one in_progress and send the list again.",
            )  # fmt: skip
        self.emit(PlanUpdated(cleaned))
        done = sum(s["status"] == "completed" for s in cleaned)
        note = f" Only the first {MAX_STEPS} steps were kept." if len(steps) > MAX_STEPS else ""
        return ToolResult("", TOOL, "text", f"Task list updated: {done}/{len(cleaned)} done.{note}")


def current(conversation: Conversation) -> list[dict[str, str]]:
    """The task list as the model last set it (empty: none)."""
    results: dict[str, ToolResult] = {}
    for entry in reversed(conversation.entries):
        if isinstance(entry, ToolResults):
            results.update({r.tool_call_id: r for r in entry.results})
        elif isinstance(entry, AssistantTurn):
            for call in reversed(entry.tool_calls):
                result = results.get(call.id)
                if call.name == TOOL and result is not None and not result.is_error:
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
