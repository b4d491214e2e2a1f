"""What an eval run prints: each task's outcome per mode, the score per tier, and how the model drove
the agent (figures.py) per mode. Plain data: tables are headers and rows of strings for the front end."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .suite import TIERS

SCHEMA_VERSION = 2

SCORE_HEADERS = ["mode", "solved", "tools", "file", "repo", "iterations", "calls sent as"]
CALL_HEADERS = [
    "mode",
    "valid calls",
    "fell back",
    "missed calls",
    "malformed",
    "cut replies",
    "loop stops",
    "tokens/solved",
    "s/solved",
    "tokens/s",
    "cache",
]


def score_rows(runs: dict[str, dict[str, Any]]) -> list[list[str]]:
    """One row per mode: solved, per tier, mean iterations, how calls were sent."""
    rows = []
    for label, run in runs.items():
        s, tiers = run["summary"], run["figures"]["tiers"]
        modes = ", ".join(
            f"{m} ×{n}" if len(s["modes"]) > 1 else m for m, n in Counter(s["modes"]).most_common()
        )
        solved = f"{s['passed']}/{s['tasks']}" + (f" ({s['passed'] / s['tasks']:.0%})" if s["tasks"] else "")
        cells = [label, solved]
        cells += [f"{tiers[t]['passed']}/{tiers[t]['tasks']}" if t in tiers else "-" for t in TIERS]
        cells += [_num(s["mean_iterations"], "{:.1f}"), modes or "-"]
        rows.append(cells)
    return rows


def call_rows(runs: dict[str, dict[str, Any]]) -> list[list[str]]:
    """One row per mode: the tool-call figures and the server's."""
    rows = []
    for label, run in runs.items():
        f, server, n = run["figures"], run["server"], run["summary"]["tasks"]
        rows.append(
            [
                label,
                _num(f["valid_call_rate"], "{:.0%}"),
                f"{f['fell_back_tasks']}/{n}",
                str(f["leaked_calls"]),
                str(f["malformed_calls"]),
                f"{f['cut_replies']}/{f['replies']}",
                str(f["loop_stops"]),
                _num(f["tokens_per_solved"], "{:,.0f}"),
                _num(f["seconds_per_solved"], "{:.1f}"),
                _num(server.get("tokens_per_second"), "{:,.0f}"),
                _num(f["cache_hit_rate"], "{:.0%}"),
            ]
        )
    return rows


def task_rows(runs: dict[str, dict[str, Any]], kinds: dict[str, str]) -> tuple[list[str], list[list[str]]]:
    """Headers and one row per task: its tier and kind, and its outcome in each mode."""
    labels = list(runs)
    ids = sorted({task_id for run in runs.values() for task_id in run["tasks"]})
    rows = []
    for task_id in ids:
        cells = [task_id, kinds.get(task_id, "")]
        for label in labels:
            task = runs[label]["tasks"].get(task_id)
            cells.append("-" if task is None else f"{task['status']} ({task['iterations'] or 0} it)")
        rows.append(cells)
    return ["task", "tier: kind", *labels], rows


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)
