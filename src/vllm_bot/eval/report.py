"""What an eval run says: per mode, tasks solved, mean iterations, tokens and time per task,
malformed and unparsed calls per task, the tool-call mode used; a comparison when several modes ran;
and a one-line verdict. Plain data: tables are headers and rows of strings for the front end."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..batch.report import summarize
from ..cliargs import program_name

SCHEMA_VERSION = 1
GRADES = ((0.8, "strong"), (0.5, "usable"), (0.2, "weak"), (0.0, "poor"))
UNJUDGED = ("error", "crashed")  # the agent could not work (server errors) or died: not the model's score


def run_record(
    rows: list[dict[str, Any]], server: dict[str, float | None], output_dir: str
) -> dict[str, Any]:
    """One mode's result: its summary, the server's figures and each task's outcome."""
    tasks = {
        r["id"]: {
            "status": r["status"],
            "passed": r["passed"],
            "iterations": r.get("iterations"),
            "tokens": r.get("prompt_tokens", 0) + r.get("completion_tokens", 0),
            "seconds": r.get("wall_seconds"),
            "malformed_calls": r.get("malformed_calls"),
            "unparsed_calls": r.get("unparsed_calls"),
            "mode": r.get("mode"),
        }
        for r in sorted(rows, key=lambda r: r["id"])
    }
    return {"summary": summarize(rows), "server": server, "tasks": tasks, "output_dir": output_dir}


def share(run: dict[str, Any]) -> float:
    summary = run["summary"]
    return summary["passed"] / summary["tasks"] if summary["tasks"] else 0.0


def grade(value: float) -> str:
    return next(name for low, name in GRADES if value >= low)


def verdict(model: str, runs: dict[str, dict[str, Any]]) -> str:
    """One line: how well this model and server drive the agent, and what to change if anything."""
    if not runs:
        return "no tasks ran"
    best = max(
        runs, key=lambda label: (share(runs[label]), -runs[label]["summary"]["malformed_calls_per_task"])
    )
    summary = runs[best]["summary"]
    where = f" in {best} mode" if len(runs) > 1 else ""
    line = (
        f"{grade(share(runs[best]))}: {model} solves {summary['passed']}/{summary['tasks']} "
        f"({share(runs[best]):.0%}) of the bundled tasks{where}"
    )
    others = [label for label in runs if label != best and share(runs[label]) < share(runs[best])]
    if others:
        line += f", better than {', '.join(f'{o} ({share(runs[o]):.0%})' for o in others)}"
        if best == "text":
            doctor = f"`{program_name()} doctor`"
            line += f" (native calls lose tasks: check the server's --tool-call-parser with {doctor})"
    if summary["malformed_calls_per_task"] >= 0.5:
        line += f"; many malformed tool calls ({summary['malformed_calls_per_task']:.1f} per task)"
    unjudged = sum(summary["statuses"].get(s, 0) for s in UNJUDGED)
    if unjudged:
        line += f"; {unjudged} tasks ended in server errors or crashes (see their agent.log)"
    return line


MODE_HEADERS = [
    "mode",
    "solved",
    "iterations",
    "tokens",
    "seconds",
    "malformed",
    "unparsed",
    "calls sent as",
    "tokens/s",
    "cache",
]


def mode_rows(runs: dict[str, dict[str, Any]]) -> list[list[str]]:
    """One row per mode: the means per task and the server's figures."""
    rows = []
    for label, run in runs.items():
        s, server = run["summary"], run["server"]
        modes = ", ".join(
            f"{m} ×{n}" if len(s["modes"]) > 1 else m for m, n in Counter(s["modes"]).most_common()
        )
        rate = (
            server.get("cache_hit_rate")
            if server.get("cache_hit_rate") is not None
            else s["reported_cache_hit_rate"]
        )
        rows.append(
            [
                label,
                f"{s['passed']}/{s['tasks']}",
                _num(s["mean_iterations"], "{:.1f}"),
                _num(s["mean_tokens"], "{:,.0f}"),
                _num(s["mean_seconds"], "{:.1f}"),
                _num(s["malformed_calls_per_task"], "{:.2f}"),
                _num(s["unparsed_calls_per_task"], "{:.2f}"),
                modes or "-",
                _num(server.get("tokens_per_second"), "{:,.0f}"),
                _num(rate, "{:.0%}"),
            ]
        )
    return rows


def task_rows(runs: dict[str, dict[str, Any]], kinds: dict[str, str]) -> tuple[list[str], list[list[str]]]:
    """Headers and one row per task: its kind and its outcome in each mode."""
    labels = list(runs)
    ids = sorted({task_id for run in runs.values() for task_id in run["tasks"]})
    rows = []
    for task_id in ids:
        cells = [task_id, kinds.get(task_id, "")]
        for label in labels:
            task = runs[label]["tasks"].get(task_id)
            cells.append("-" if task is None else f"{task['status']} ({task['iterations'] or 0} it)")
        rows.append(cells)
    return ["task", "kind", *labels], rows


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)
