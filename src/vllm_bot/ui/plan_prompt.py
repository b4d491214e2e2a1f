"""The plan question (plan mode, issue 37) as plain data: the menu of answers, the task list's lines,
and the parsing of a typed answer. Front ends draw them their way."""

from __future__ import annotations

from ..agent.planning import PlanChoice
from ..safety.approval import Answer
from .display import safe_text

QUESTION = "Approve the plan? [y]es (auto-edit) / [a] yes in ask mode / [n]o (or type what to change): "
MENU = [
    "1. Yes, and carry it out in auto-edit mode  (y)",
    "2. Yes, and carry it out in ask mode  (a)",
    "3. No, keep planning: tell it what to change  (n; Esc: just keep planning)",
]
CHOSEN = {"yes": "Approved: auto-edit", "always": "Approved: ask mode", "instead": "Keep planning",
          "no": "Keep planning"}  # fmt: skip
MARKS = {"completed": "✔", "in_progress": "▶", "pending": "○"}


def plan_choice(answer: Answer) -> PlanChoice:
    """The approval menu's answer as a plan choice: yes → auto-edit, always → ask, no → keep planning."""
    if answer.approved:
        return PlanChoice("ask" if answer.always else "auto-edit")
    return PlanChoice(None, answer.message or "")


def task_lines(steps: list[dict[str, str]]) -> list[str]:
    """`✔ step` / `▶ step` / `○ step`, one per step, escaped."""
    return [f"{MARKS.get(s.get('status', ''), '○')} {safe_text(s.get('text', ''), keep_newlines=False)}"
            for s in steps]  # fmt: skip


def task_count(steps: list[dict[str, str]]) -> str:
    """`tasks 3/7` for the footer and the status line."""
    return f"tasks {sum(s.get('status') == 'completed' for s in steps)}/{len(steps)}"
