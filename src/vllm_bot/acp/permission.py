"""The approval gate's question as `session/request_permission`, with the terminal menu's answers.

Allow once, allow always (for the scope the policy names: a tool, a command prefix, one exact line),
reject, and reject saying what to do instead. For the last, an editor that offers form elicitation is
asked for the text, which reaches the model verbatim, as typed in the terminal; one that does not has
the turn end there (`end_turn`), and its next prompt, the user's instruction, reaches the model as the
next message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp import text_block, tool_content
from acp.schema import (
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    PermissionOption,
    PermissionOptionKind,
    ToolCallUpdate,
)

from ..calls import ToolCall
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from ..ui.approval_prompt import approval_view, menu_labels

KINDS: dict[str, PermissionOptionKind] = {
    "yes": "allow_once",
    "always": "allow_always",
    "instead": "reject_once",
    "no": "reject_once",
}
INSTEAD_FIELD = "instead"
# Plan mode's question (ui/plan_prompt.py's menu): its answers map to a PlanChoice by plan_choice().
PLAN_LABELS = {
    "yes": "Yes, and carry it out in auto-edit mode",
    "always": "Yes, and carry it out in ask mode",
    "instead": "No, keep planning: tell it what to change",
    "no": "No, keep planning",
}
PLAN_KINDS: dict[str, PermissionOptionKind] = {**KINDS, "always": "allow_once"}  # nothing is remembered


def options(scope: GrantScope | None) -> list[PermissionOption]:
    """The terminal menu's answers, in its order (allow once, allow always, instead, reject)."""
    return [
        PermissionOption(option_id=choice, name=label, kind=KINDS[choice])
        for choice, label in menu_labels(scope).items()
    ]


def plan_options() -> list[PermissionOption]:
    return [PermissionOption(option_id=c, name=label, kind=PLAN_KINDS[c]) for c, label in PLAN_LABELS.items()]


def plan_question(call_id: str, plan: str) -> ToolCallUpdate:
    """Plan mode's question, about the present_plan call that shows the plan."""
    return ToolCallUpdate(
        tool_call_id=call_id, title="Approve the plan?", content=[tool_content(text_block(plan))]
    )


def tool_call(call: ToolCall, preview: str | None, reason: str, content: list[Any] | None) -> ToolCallUpdate:
    """The call the question is about: what it does and why it asks (the diff, for write and edit)."""
    view = approval_view(call, preview, reason)
    shown = [view.command and f"$ {view.command}", view.summary, view.text, f"({view.reason})"]
    text = "\n".join(part for part in shown if part)
    return ToolCallUpdate(
        tool_call_id=call.id,
        title=view.title,
        status="pending",
        content=[*(content or []), tool_content(text_block(text))],
        raw_input=call.arguments,
    )


@dataclass
class Chosen:
    """What the editor answered: an option id ("yes", "always", "instead", "no") or "cancelled"."""

    choice: str

    @classmethod
    def from_response(cls, response: Any) -> Chosen:
        outcome: Any = getattr(response, "outcome", None)
        if getattr(outcome, "outcome", "") == "selected" and outcome.option_id in KINDS:
            return cls(outcome.option_id)
        return cls("cancelled")  # a withdrawn or unanswered question, or an option we never offered

    def answer(self, instead: str | None = None) -> Answer:
        """The gate's answer; `instead` is the user's text for the "instead" choice, unchanged."""
        if self.choice in ("yes", "always"):
            return Answer(True, always=self.choice == "always")
        return Answer(False, message=instead if instead and instead.strip() else None)


def instead_form(session_id: str, call_id: str, title: str) -> ElicitationFormSessionMode:
    """The one-field form that asks what to do instead (tied to the call), sent to the model verbatim."""
    field = ElicitationStringPropertySchema(
        type="string", title=title, description="Sent to the model as you write it."
    )
    schema = ElicitationSchema(properties={INSTEAD_FIELD: field}, required=[INSTEAD_FIELD])
    return ElicitationFormSessionMode(session_id=session_id, tool_call_id=call_id, requested_schema=schema)


def instead_text(response: Any) -> str | None:
    """The text of an accepted form (None: declined or cancelled)."""
    if getattr(response, "action", "") != "accept":
        return None
    value = (response.content or {}).get(INSTEAD_FIELD)
    return value if isinstance(value, str) else None
