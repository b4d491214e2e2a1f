"""Blocks the terminal draws once, with rich (one of the few modules that import it): the banner, the
approval prompt, plan mode's plan question and the task list. The questions read one key of a
numbered menu, or a typed line where keys cannot be read."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..agent.planning import PlanChoice
from ..calls import ToolCall
from ..doctor.report import wrap_hanging
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from .approval_prompt import (
    CHOSEN,
    approval_view,
    menu_answer,
    menu_choice,
    menu_lines,
    parse_answer,
    typed_answer,
)
from .banner import HINT, SHORT_HINT, BannerInfo, may_shorten, menu_rows
from .display import printable_markdown
from .plan_prompt import CHOSEN as PLAN_CHOSEN
from .plan_prompt import MENU as PLAN_MENU
from .plan_prompt import QUESTION as PLAN_QUESTION
from .plan_prompt import plan_choice, task_count, task_lines


def confirm(ui: Any, call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None) -> Answer:
    """Exactly what will run, then the menu: yes / always / no and what to do instead (Esc: no)."""
    ui._end_reply()
    view = approval_view(call, preview, reason, scope)
    ui._print(Text("? ", style="bold yellow") + Text(view.title, style="bold"))
    ui._print(Text(f"  ({view.reason})", style="dim"))
    if view.command is not None:
        ui._print(Text("  $ ", style="dim") + Text(view.command, style="bold"))
    if view.summary:
        ui._print(Text("  " + view.summary))
    if view.diff:
        ui._print_diff(view.diff)
    if view.text:
        ui._print(Text(view.text, style="dim"))
    if ui.read_key is None:
        if view.always_note:
            ui._print(Text("  " + view.always_note, style="dim"))
        return typed_answer(ui.ask)
    for line in menu_lines(scope):
        ui._print(Text("  " + line))
    choice = menu_choice(ui.read_key)
    ui._print(Text(f"  → {CHOSEN[choice]}", style="dim"))
    return menu_answer(choice, ui.ask)


def choose_plan(ui: Any, plan: str) -> PlanChoice:
    """The model's plan, rendered, then: approve (auto-edit or ask) or keep planning with a comment."""
    ui._end_reply()
    ui._print(Text("? ", style="bold yellow") + Text("The plan", style="bold"))
    ui._print(Padding(Markdown(printable_markdown(plan)), (0, 0, 0, 2)))
    if ui.read_key is None:
        return plan_choice(_typed(ui.ask))
    for line in PLAN_MENU:
        ui._print(Text("  " + line))
    choice = menu_choice(ui.read_key)
    ui._print(Text(f"  → {PLAN_CHOSEN[choice]}", style="dim"))
    return plan_choice(menu_answer(choice, ui.ask))


def _typed(ask: Any) -> Answer:
    while True:
        try:
            answer = parse_answer(ask(PLAN_QUESTION))
        except EOFError:
            return Answer(False)
        if answer is not None:
            return answer


def banner(ui: Any, info: BannerInfo) -> None:
    """The banner; on a terminal too short for all of it (80x24) its rows are cut to one line each,
    never what the sandbox does not cover, so the title stays on the screen."""
    title = Text("vLLM Bot", style="bold cyan")
    if info.label:
        title += Text("  ") + Text(f" {info.label} ", style="bold reverse yellow")
    offline = [Text(wrap_hanging(ln, ui.console.width), style="bold red") for ln in info.offline_lines()]
    height = ui.console.size.height
    for compact in (False, True):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim")
        grid.add_column()
        for label, value in info.rows():
            cut = compact and may_shorten(label, value)
            grid.add_row(label, Text(value, no_wrap=cut, overflow="ellipsis" if cut else None))
        hint = SHORT_HINT if compact or len(HINT) > ui.console.width else HINT
        banner = Group(title, grid, *offline, Text(hint, style="dim"))
        if len(ui.console.render_lines(banner, pad=False)) + 1 + menu_rows(height) <= height:
            break
    ui._print(banner)


def task_list(ui: Any, steps: list[dict[str, str]]) -> None:
    styles = {"completed": "green", "in_progress": "bold yellow", "pending": ""}
    ui._print(Text(f"  Task list ({task_count(steps)})", style="bold"))
    for step, line in zip(steps, task_lines(steps), strict=True):
        ui._print(Text("    " + line, style=styles.get(step.get("status", ""), "")))
