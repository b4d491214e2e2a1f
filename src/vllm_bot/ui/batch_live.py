"""The live progress of a batch on a terminal (rich): a status line with a bar, the tasks in flight,
and a line per finished task printed above them. Plain data in, nothing of the batch imported."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from .batch_view import duration, finished_line, status_text

RUNNING_SHOWN = 8
STYLES = {
    "passed": "green",
    "failed": "red",
    "check_failed": "red",
    "error": "bold red",
    "crashed": "bold red",
    "setup_failed": "bold red",
    "timeout": "yellow",
    "loop_guard": "yellow",
    "max_iterations": "yellow",
}


class BatchLive:
    def __init__(self) -> None:
        self.console = Console(stderr=True)
        self.snap: dict[str, Any] | None = None
        self.shown = 0
        self.live = Live(
            get_renderable=self._render, console=self.console, refresh_per_second=4, transient=True
        )

    def note(self, text: str) -> None:
        self.console.print(Text(f"vllm-bot batch: {text}", style="yellow"))

    def start(self) -> None:
        self.live.start()

    def refresh(self, snap: dict[str, Any]) -> None:
        finished = snap["finished"]
        done_before = snap["done"] - len(finished)
        for i, row in enumerate(finished[self.shown :], self.shown + 1):
            line = Text(finished_line(row, done_before + i, snap["total"]))
            line.stylize(STYLES.get(row.get("outcome", row["status"]), ""), 0, len(line))
            self.live.console.print(line)
        self.shown = len(finished)
        self.snap = snap

    def stop(self, snap: dict[str, Any]) -> None:
        self.refresh(snap)
        self.live.stop()
        self.console.print(Text(status_text(snap), style="bold"))

    def _render(self) -> Group:
        snap = self.snap
        if snap is None:
            return Group(Text("starting…", style="dim"))
        bar = ProgressBar(total=max(1, snap["total"]), completed=snap["done"], width=40)
        parts: list[Any] = [Group(bar, Text(status_text(snap)))]
        for task in snap["running"][:RUNNING_SHOWN]:
            parts.append(
                Text(
                    f"  {task['id']}  iteration {task['iteration']}  {duration(task['seconds'])}", style="dim"
                )
            )
        if len(snap["running"]) > RUNNING_SHOWN:
            parts.append(Text(f"  … {len(snap['running']) - RUNNING_SHOWN} more running", style="dim"))
        return Group(*parts)


def print_rich_table(title: str, headers: list[str], rows: list[list[str]], notes: list[str]) -> None:
    console = Console()
    table = Table(title=title, title_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header in ("task", "result", "mode") else "right")
    for row in rows:
        table.add_row(*row, style=STYLES.get(row[1], "") if len(row) > 1 else "")
    if rows:
        console.print(table)
    else:
        console.print(Text(title, style="bold"))
    for note in notes:
        console.print(note)
