"""The progress and summary of a batch (`vllm-bot batch`, `vllm-bot eval`) as plain text.

The batch hands over plain data: progress snapshots (done / running / failed, ETA, speed) and tables
as headers and rows of strings. On a terminal the live display and tables are drawn by
`batch_live.py` (rich); elsewhere this module prints one line per finished task on stderr and plain
tables, so logs and CI stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from .display import safe_text

STATUS_EVERY = 60.0  # seconds between plain status lines while tasks run


def duration(seconds: float | None) -> str:
    """`42 s`, `3m05s`, `1h02m`; `?` when unknown."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def paused_text(paused: dict[str, Any]) -> str:
    """ "PAUSED: the server has not answered for 42 s · next try in 8 s · gives up in 14m18s"."""
    return (
        f"PAUSED: the server has not answered for {duration(paused['seconds'])} · next try in "
        f"{duration(paused['retry_in'])} · gives up in {duration(paused['gives_up_in'])}"
    )


def status_text(snap: dict[str, Any]) -> str:
    """ "done 12/40 · running 4 · failed 2 · ETA 3m10s · 412 tokens/s (server) · prefix cache 78%", led
    by the pause while the server is away."""
    paused = [paused_text(snap["paused"])] if snap.get("paused") else []
    parts = [
        *paused,
        f"done {snap['done']}/{snap['total']}",
        f"running {len(snap['running'])}",
        f"failed {snap['failed']}",
        f"ETA {duration(snap['eta_seconds'])}",
    ]
    if snap.get("tokens_per_second") is not None:
        parts.append(f"{snap['tokens_per_second']:,.0f} tokens/s ({snap['speed_source']})")
    if snap.get("cache_hit_rate") is not None:
        parts.append(f"prefix cache {snap['cache_hit_rate']:.0%}")
    return " · ".join(parts)


def finished_line(row: dict[str, Any], done: int, total: int) -> str:
    tokens = row.get("prompt_tokens", 0) + row.get("completion_tokens", 0)
    label = row.get("outcome", row["status"])
    line = (
        f"[{done}/{total}] {label:<12} {safe_text(str(row['id']), keep_newlines=False)} · "
        f"{row.get('iterations') or 0} iterations · {tokens:,} tokens · {row.get('wall_seconds') or 0:.1f} s"
    )
    return line + (
        f" · {safe_text(str(row['error']), keep_newlines=False)[:120]}" if row.get("error") else ""
    )


class BatchLog:
    """Plain progress: a line per finished task, a status line now and then, notes as they come."""

    def __init__(self, err: TextIO | None = None) -> None:
        self.err = err or sys.stderr
        self.shown = 0
        self.last_status = time.monotonic()

    def note(self, text: str) -> None:
        self._print(f"vllm-bot batch: {text}")

    def start(self) -> None:
        pass

    def refresh(self, snap: dict[str, Any]) -> None:
        finished = snap["finished"]
        done_before = snap["done"] - len(finished)
        for i, row in enumerate(finished[self.shown :], self.shown + 1):
            self._print(finished_line(row, done_before + i, snap["total"]))
        self.shown = len(finished)
        if (snap["running"] or snap.get("paused")) and time.monotonic() - self.last_status >= STATUS_EVERY:
            self.last_status = time.monotonic()
            self._print(status_text(snap))

    def stop(self, snap: dict[str, Any]) -> None:
        self.refresh(snap)

    def _print(self, line: str) -> None:
        self.err.write(line + "\n")
        self.err.flush()


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain table: columns padded to their widest cell, numbers right-aligned."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        out = []
        for cell, width in zip(cells, widths, strict=True):
            numeric = cell.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()
            out.append(cell.rjust(width) if numeric else cell.ljust(width))
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def print_table(
    title: str, headers: list[str], rows: list[list[str]], notes: list[str], out: TextIO | None = None
) -> None:
    """A titled table with notes under it: rich on a terminal, plain text elsewhere."""
    out = out or sys.stdout
    if out.isatty():
        from .batch_live import print_rich_table

        print_rich_table(title, headers, rows, notes)
        return
    text = [title, format_table(headers, rows)] if rows else [title]
    out.write("\n".join([*text, *notes]) + "\n")
    out.flush()


def view_for(err: TextIO | None = None) -> Any:
    """The live rich display when stderr is a terminal, else the plain log."""
    err = err or sys.stderr
    if err.isatty():
        from .batch_live import BatchLive

        return BatchLive()
    return BatchLog(err)
