"""Plan mode's way out (issue 37): the model presents its plan (the present_plan tool) and the user
chooses — approve and continue in auto-edit, approve in ask mode, or keep planning with a comment.
A headless `--plan` run ends there, with the plan as its answer (TaskEnded)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import prompts
from ..calls import ToolCall, ToolResult
from ..conversation import answer_calls

TOOL = "present_plan"


@dataclass(frozen=True)
class PlanChoice:
    """The user's answer to a plan: `mode` to continue in ("auto-edit", "ask"), or None to keep
    planning; `comment` goes to the model verbatim."""

    mode: str | None
    comment: str = ""


class TaskEnded(Exception):
    """A tool ended the task: `result` answers its call, `answer` is the task's answer."""

    def __init__(self, result: ToolResult, answer: str) -> None:
        super().__init__(answer)
        self.result = result
        self.answer = answer


def ended_results(calls: list[ToolCall], done: list[ToolResult]) -> list[ToolResult]:
    """`done` and a "not run" result for every later call of the turn that ended the task."""
    return answer_calls(calls, done, "Not run: the task ended with the call before this one.")


def message(name: str, **variables: str) -> str:
    """A text of prompts/workflow.yaml, rendered."""
    return prompts.message(name, file="workflow.yaml", **variables)


class PlanPresenter:
    """present_plan's handler. `choose` asks the user (None: nobody can, the run ends with the plan);
    `set_mode` leaves plan mode for the chosen approval mode."""

    def __init__(
        self, choose: Callable[[str], PlanChoice] | None, set_mode: Callable[[str, str], None]
    ) -> None:
        self.choose = choose
        self.set_mode = set_mode

    def __call__(self, plan: str) -> ToolResult:
        if self.choose is None:
            raise TaskEnded(ToolResult("", TOOL, "text", message("shown")), plan)
        choice = self.choose(plan)
        if choice.mode is None:
            comment = choice.comment.strip() or "(no comment: make the plan clearer or smaller)"
            return ToolResult("", TOOL, "text", message("revise", comment=comment))
        self.set_mode(choice.mode, "the plan was approved")
        added = f" The user added: {choice.comment.strip()}" if choice.comment.strip() else ""
        return ToolResult("", TOOL, "text", message("approved", mode=choice.mode, comment=added))
