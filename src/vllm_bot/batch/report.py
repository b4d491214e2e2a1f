"""What a batch's results add up to: the summary object (`--output-format json`) and the summary table.

Tables are plain data (headers and rows of strings); the front end (`ui/batch_view.py`) draws them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..ui.batch_view import duration

TABLE_LIMIT = 40  # tasks listed one per row; past that, the failed ones only
HEADERS = ["task", "result", "iterations", "tokens", "seconds", "calls", "malformed", "mode"]


# Why an unsolved task stopped, told apart (status "failed" covers them all): by the agent's exit reason.
STOPS = {
    "loop": "loop_guard",
    "max_iterations": "max_iterations",
    "malformed": "malformed_calls",
    "truncated": "truncated",
    "empty_answer": "empty_answer",
}


def outcome(row: dict[str, Any]) -> str:
    """The status, with "failed" told apart: `loop_guard` (the loop guard stopped a model repeating
    itself), `check_failed` (the agent finished, its check failed), another limit, or `failed`."""
    status = str(row.get("status"))
    if status != "failed":
        return status
    reason = str(row.get("exit_reason"))
    if reason in STOPS:
        return STOPS[reason]
    return "check_failed" if row.get("check_passed") is False else "failed"


def tokens_of(row: dict[str, Any]) -> int:
    return int(row.get("prompt_tokens") or 0) + int(row.get("completion_tokens") or 0)


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and per-task means over result rows."""
    n = len(rows)
    tokens = [tokens_of(r) for r in rows]
    reported = [r for r in rows if r.get("cached_tokens") is not None and r.get("prompt_tokens")]
    prompt = sum(r["prompt_tokens"] for r in reported)

    def per_task(key: str) -> float | None:
        return mean([float(r.get(key) or 0) for r in rows])

    return {
        "tasks": n,
        "passed": sum(1 for r in rows if r.get("passed")),
        "statuses": dict(Counter(str(r.get("status")) for r in rows)),
        "outcomes": dict(Counter(outcome(r) for r in rows)),
        "total_tokens": sum(tokens),
        "mean_iterations": per_task("iterations"),
        "mean_tokens": mean([float(t) for t in tokens]),
        "mean_seconds": per_task("wall_seconds"),
        "tool_calls_per_task": per_task("tool_calls"),
        "malformed_calls_per_task": per_task("malformed_calls"),
        "unparsed_calls_per_task": per_task("unparsed_calls"),
        "modes": dict(Counter(str(r.get("mode")) for r in rows if r.get("mode"))),
        "models": sorted({str(r["model"]) for r in rows if r.get("model")}),
        "reported_cache_hit_rate": sum(r["cached_tokens"] for r in reported) / prompt if prompt else None,
    }


def task_rows(rows: list[dict[str, Any]], limit: int = TABLE_LIMIT) -> tuple[list[list[str]], str]:
    """Table rows for the tasks (all of them up to `limit`, else the failed ones) and a note."""
    shown = rows if len(rows) <= limit else [r for r in rows if not r.get("passed")][:limit]
    table = [
        [
            str(r["id"]),
            outcome(r),
            str(r.get("iterations") or 0),
            f"{tokens_of(r):,}",
            f"{r.get('wall_seconds') or 0:.1f}",
            str(r.get("tool_calls") or 0),
            str(r.get("malformed_calls") or 0),
            str(r.get("mode") or "-"),
        ]
        for r in shown
    ]
    note = (
        ""
        if len(shown) == len(rows)
        else f"{len(rows) - len(shown)} more tasks not listed (passed, or past {limit})"
    )
    return table, note


def summary_lines(
    summary: dict[str, Any], server: dict[str, float | None], wall_seconds: float | None = None
) -> list[str]:
    """The lines under the table: solved (the rest by why they stopped), means, totals, server."""
    n = summary["tasks"]
    lines = [f"{summary['passed']}/{n} passed" + (f" ({summary['passed'] / n:.0%})" if n else "")]
    outcomes = {k: v for k, v in summary["outcomes"].items() if k != "passed"}
    if outcomes:
        lines[0] += " · " + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items()))
    if n:
        lines.append(
            f"per task: {summary['mean_iterations']:.1f} iterations, {summary['mean_tokens']:,.0f} tokens, "
            f"{summary['mean_seconds']:.1f} s, {summary['malformed_calls_per_task']:.2f} malformed calls"
        )
    total = f"{summary['total_tokens']:,} tokens in all"
    if wall_seconds is not None:
        total = f"wall time {duration(wall_seconds)} (this run) · {total}"
    lines.append(total)
    lines.append("server: " + server_line(summary, server))
    return lines


def server_line(summary: dict[str, Any], server: dict[str, float | None]) -> str:
    speed = server.get("tokens_per_second")
    parts = [f"{speed:,.0f} tokens/s generated" if speed is not None else "speed not reported (/metrics)"]
    rate = server.get("cache_hit_rate")
    if rate is None:
        rate = summary.get("reported_cache_hit_rate")
    parts.append(
        f"prefix cache {rate:.0%} hits"
        if rate is not None
        else "prefix-cache hits not reported (/metrics, or vllm serve --enable-prompt-tokens-details)"
    )
    return " · ".join(parts)
