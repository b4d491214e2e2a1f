"""What a batch's results add up to: the summary object (`--output-format json`) and the summary table.

Tables are plain data (headers and rows of strings); the front end (`ui/batch_view.py`) draws them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

TABLE_LIMIT = 40  # tasks listed one per row; past that, the failed ones only
HEADERS = ["task", "result", "iterations", "tokens", "seconds", "calls", "malformed", "mode"]


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and per-task means over result rows."""
    n = len(rows)
    tokens = [r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in rows]
    reported = [r for r in rows if r.get("cached_tokens") is not None and r.get("prompt_tokens")]
    prompt = sum(r["prompt_tokens"] for r in reported)

    def per_task(key: str) -> float | None:
        return mean([float(r.get(key) or 0) for r in rows])

    return {
        "tasks": n,
        "passed": sum(1 for r in rows if r.get("passed")),
        "statuses": dict(Counter(str(r.get("status")) for r in rows)),
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
            str(r.get("status")),
            str(r.get("iterations") or 0),
            f"{r.get('prompt_tokens', 0) + r.get('completion_tokens', 0):,}",
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


def summary_lines(summary: dict[str, Any], server: dict[str, float | None]) -> list[str]:
    """The lines under the table: solved, means, server figures."""
    n = summary["tasks"]
    lines = [f"{summary['passed']}/{n} passed" + (f" ({summary['passed'] / n:.0%})" if n else "")]
    statuses = {k: v for k, v in summary["statuses"].items() if k != "passed"}
    if statuses:
        lines[0] += " · " + ", ".join(f"{v} {k}" for k, v in sorted(statuses.items()))
    if n:
        lines.append(
            f"per task: {summary['mean_iterations']:.1f} iterations, {summary['mean_tokens']:,.0f} tokens, "
            f"{summary['mean_seconds']:.1f} s, {summary['malformed_calls_per_task']:.2f} malformed calls"
        )
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
