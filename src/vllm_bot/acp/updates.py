"""Our typed events as ACP `session/update`s: message and thought chunks, tool calls with their status,
output and (for write and edit) a diff the editor can show, the task list as a `plan`, and usage.

`Updates` is a pure translator with the little state a tool call's life needs (announced or not, its
live output so far); the front end (front.py) sends what it returns.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import PlanEntryStatus, ToolCallLocation, ToolCallStatus, ToolKind, UsageUpdate

from ..calls import ToolCall, ToolResult
from ..events import (
    Event,
    ModeSwitched,
    Notice,
    PlanUpdated,
    ReasoningDelta,
    SubagentEvent,
    TaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    UsageReported,
)
from ..ui.display import call_title

Update = Any  # one of the acp.schema session update models
KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "exec": "execute",
}  # others: "other"
PLAN_STATUSES: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
}
LIVE_OUTPUT_CHARS = 16_384  # the tail of a running command's output shown while it runs
LIVE_OUTPUT_EVERY = 0.25  # seconds between two live output updates of one call
NOT_RUN = "Not run: the task stopped before this call."


def plan_updates(steps: list[dict[str, str]]) -> Update:
    """The task list (`update_plan`'s steps: {text, status}) as an ACP plan, every step each time."""
    return update_plan(
        plan_entry(
            str(step.get("text", "")),
            status=PLAN_STATUSES.get(str(step.get("status")), "pending"),
        )
        for step in steps
    )


class Updates:
    """Translates one session's events; `diff(call)` gives a write/edit's ACP diff before it runs."""

    def __init__(self, workspace: str, diff: Callable[[ToolCall], Any | None]) -> None:
        self.workspace = workspace
        self.diff = diff
        self.announced: dict[str, ToolCall] = {}  # tool_call sent, no final status yet
        self.changes: dict[str, Any] = {}  # call id -> its diff, computed before it ran
        self.output: dict[str, str] = {}  # call id -> live output so far
        self.output_sent: dict[str, float] = {}
        self.running: ToolCall | None = None  # the call last started (present_plan asks during it)

    def __call__(self, event: Event) -> list[Update]:
        if isinstance(event, TextDelta):
            return [update_agent_message_text(event.text)]
        if isinstance(event, ReasoningDelta):
            return [update_agent_thought_text(event.text)]
        if isinstance(event, ToolCallStarted):
            return [self.started(event.call)]
        if isinstance(event, ToolOutput):
            return self.live_output(event.call_id, event.text)
        if isinstance(event, ToolCallFinished):
            return [self.finished(event.call, event.result)]
        if isinstance(event, UsageReported) and event.context_window:
            used = event.usage.prompt_tokens + event.usage.completion_tokens
            return [UsageUpdate(session_update="usage_update", used=used, size=event.context_window)]
        if isinstance(event, Notice):
            return [notice(event.level, event.message)]
        if isinstance(event, ModeSwitched):
            return [notice("info", f"Function calling is off for this session: {event.reason} {event.hint}")]
        if isinstance(event, TaskFinished):
            return self.close_open_calls()
        if isinstance(event, PlanUpdated):  # the task list (issue 37)
            return [plan_updates(event.steps)]
        if isinstance(event, SubagentEvent) and isinstance(event.event, ToolCallStarted):
            return self.sub_agent_step(event.call_id, event.event.call)
        return []

    # -- one tool call's life: pending (asked about) -> in_progress -> completed | failed ----------

    def announce(self, call: ToolCall) -> Update:
        """The `tool_call` for a call about to be asked about (status pending, with its diff)."""
        return self._start(call, "pending", self._diff_content(call))

    def started(self, call: ToolCall) -> Update:
        self.running = call
        content = self._diff_content(call)
        if call.id in self.announced:
            return update_tool_call(call.id, status="in_progress", content=content)
        return self._start(call, "in_progress", content)

    def live_output(self, call_id: str, text: str) -> list[Update]:
        so_far = (self.output.get(call_id, "") + text)[-LIVE_OUTPUT_CHARS:]
        self.output[call_id] = so_far
        now = time.monotonic()
        if now - self.output_sent.get(call_id, 0.0) < LIVE_OUTPUT_EVERY or call_id not in self.announced:
            return []
        self.output_sent[call_id] = now
        return [update_tool_call(call_id, content=[tool_content(text_block(so_far))])]

    def sub_agent_step(self, call_id: str, call: ToolCall) -> list[Update]:
        """A sub-agent's tool call, one line in its delegate call's content (as the terminal shows it)."""
        if call_id not in self.announced:
            return []
        so_far = (self.output.get(call_id, "") + f"→ {call_title(call)}\n")[-LIVE_OUTPUT_CHARS:]
        self.output[call_id] = so_far
        return [update_tool_call(call_id, content=[tool_content(text_block(so_far))])]

    def finished(self, call: ToolCall, result: ToolResult) -> Update:
        text = result.as_text()
        status: ToolCallStatus = "failed" if result.is_error else "completed"
        change = self.changes.pop(call.id, None)
        content = [tool_content(text_block(text))]
        if change is not None and not result.is_error:
            content.insert(0, change)
        self.output.pop(call.id, None)
        self.output_sent.pop(call.id, None)
        if self.announced.pop(call.id, None) is None:
            return self._start(call, status, content, raw_output=text)
        return update_tool_call(call.id, status=status, content=content, raw_output=text)

    def close_open_calls(self) -> list[Update]:
        """At a task's end: a call announced but never finished did not run."""
        ids, self.announced = list(self.announced), {}
        self.changes.clear()
        self.output.clear()
        return [
            update_tool_call(i, status="failed", content=[tool_content(text_block(NOT_RUN))]) for i in ids
        ]

    def _start(
        self, call: ToolCall, status: ToolCallStatus, content: list[Any] | None, raw_output: Any = None
    ) -> Update:
        if status in ("pending", "in_progress"):
            self.announced[call.id] = call
        return start_tool_call(
            call.id,
            call_title(call) if call.name else "(malformed tool call)",
            kind=KINDS.get(call.name, "other"),
            status=status,
            content=content,
            locations=self._locations(call),
            raw_input=call.arguments,
            raw_output=raw_output,
        )

    def _diff_content(self, call: ToolCall) -> list[Any] | None:
        if call.name not in ("write", "edit"):
            return None
        if call.id not in self.changes:
            change = self.diff(call)
            if change is None:
                return None
            self.changes[call.id] = change
        return [self.changes[call.id]]

    def _locations(self, call: ToolCall) -> list[ToolCallLocation] | None:
        path = call.arguments.get("path")
        if not isinstance(path, str) or not path or call.name not in KINDS:
            return None
        return [ToolCallLocation(path=os.path.normpath(os.path.join(self.workspace, path)))]


def notice(level: str, message: str) -> Update:
    """A notice for the user: warnings and errors in the conversation, the rest as a thought."""
    if level in ("warning", "error"):
        return update_agent_message_text(f"\n\n{level}: {message}\n\n")
    return update_agent_thought_text(f"\n{message}\n")


__all__ = ["Updates", "notice", "plan_updates", "tool_diff_content"]
