"""The task list the model keeps (the update_plan tool, as Codex's): a short checklist of the task's
steps, shown to the user above the input and in the footer (`3/7`) and in stream-json.

The list is not kept beside the conversation: it is the last list the model sent that was accepted,
read back from the conversation (`Conversation.task_list`, so `--continue` restores it), or, once
compaction has summarized those turns away, from the summary, which carries it."""

from __future__ import annotations

from typing import Any

from ..calls import ToolResult
from ..conversation import TASK_LIST_TOOL as TOOL
from ..events import Emit, PlanUpdated

MAX_STEPS = 30


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
