"""What one mode's run tells beyond solved or not, from batch's result rows and each task's
stream-json events: per tier; the figures aider's benchmark reports for edit formats, here for tool
calls (valid-call rate, malformed replies); and what only an agent driving a local model sees: tasks
that fell back from native calls to text, calls the server's parser missed, reasoning left in the
reply text, replies cut by max_tokens, loop-guard stops, tokens and seconds per solved task, prefix-cache
hits. Plain data, computed once and saved in eval.json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..batch.report import summarize

# A reasoning block left in the reply text: the server has no --reasoning-parser for this model.
REASONING_IN_TEXT = re.compile(r"</?(?:seed:)?think>|\[/?THINK\]")


def reply_figures(events: Path) -> dict[str, int]:
    """Counts of one task's finished replies: all, cut by max_tokens, with reasoning in their text."""
    counts = {"replies": 0, "cut_replies": 0, "reasoning_in_text": 0}
    try:
        with events.open("rb") as f:
            for raw in f:
                if not raw.startswith(b'{"type":"turn_finished"'):
                    continue
                try:
                    turn = json.loads(raw).get("turn") or {}
                except ValueError:
                    continue
                counts["replies"] += 1
                counts["cut_replies"] += turn.get("finish_reason") == "length"
                counts["reasoning_in_text"] += bool(REASONING_IN_TEXT.search(turn.get("raw_content") or ""))
    except OSError:
        pass  # a task that never started its agent has no events
    return counts


def task_record(row: dict[str, Any], output_dir: Path, tier: str) -> dict[str, Any]:
    """One task's outcome as eval.json keeps it."""
    replies = reply_figures(output_dir / str(row.get("output", "")) / "events.jsonl")
    return {
        "tier": tier,
        "status": row["status"],
        "passed": row["passed"],
        "exit_reason": row.get("exit_reason"),
        "iterations": row.get("iterations"),
        "tokens": row.get("prompt_tokens", 0) + row.get("completion_tokens", 0),
        "cached_tokens": row.get("cached_tokens"),
        "seconds": row.get("wall_seconds"),
        "tool_calls": row.get("tool_calls") or 0,
        "malformed_calls": row.get("malformed_calls") or 0,
        "unparsed_calls": row.get("unparsed_calls") or 0,
        "calls_from_text": row.get("calls_from_text") or 0,
        "mode": row.get("mode"),
        "fell_back": bool(row.get("fell_back")),
        **replies,
    }


def run_record(
    rows: list[dict[str, Any]], server: dict[str, float | None], output_dir: Path, tiers: dict[str, str]
) -> dict[str, Any]:
    """One mode's result: batch's summary, the server's figures, the figures below, each task."""
    tasks = {
        r["id"]: task_record(r, output_dir, tiers.get(r["id"], ""))
        for r in sorted(rows, key=lambda r: r["id"])
    }
    summary = summarize(rows)
    return {
        "summary": summary,
        "server": server,
        "figures": figures(tasks, server, summary),
        "tasks": tasks,
        "output_dir": str(output_dir),
    }


def figures(
    tasks: dict[str, dict[str, Any]], server: dict[str, Any], summary: dict[str, Any]
) -> dict[str, Any]:
    done = list(tasks.values())
    solved = sum(t["passed"] for t in done)
    calls = sum(t["tool_calls"] for t in done)
    malformed = sum(t["malformed_calls"] for t in done)
    cache = server.get("cache_hit_rate")
    return {
        "tiers": {
            tier: {"tasks": len(group), "passed": sum(t["passed"] for t in group)}
            for tier in sorted({t["tier"] for t in done})
            for group in [[t for t in done if t["tier"] == tier]]
        },
        "tool_calls": calls,
        "valid_call_rate": (calls - malformed) / calls if calls else None,
        "malformed_calls": malformed,
        "unparsed_calls": sum(t["unparsed_calls"] for t in done),
        "calls_from_text": sum(t["calls_from_text"] for t in done),
        # calls the parser found in reply text while native calling stayed on: the server's
        # --tool-call-parser did not take them (after a fallback, text calls are the protocol)
        "leaked_calls": sum(t["calls_from_text"] for t in done if t["mode"] == "native"),
        "fell_back_tasks": sum(t["fell_back"] for t in done),
        "text_fallback_rate": sum(t["fell_back"] for t in done) / len(done) if done else None,
        "replies": sum(t["replies"] for t in done),
        "cut_replies": sum(t["cut_replies"] for t in done),
        "reasoning_in_text": sum(t["reasoning_in_text"] for t in done),
        "loop_stops": sum(t["exit_reason"] == "loop" for t in done),
        "truncated_stops": sum(t["exit_reason"] == "truncated" for t in done),
        "tokens_per_solved": sum(t["tokens"] for t in done) / solved if solved else None,
        "seconds_per_solved": sum(t["seconds"] or 0 for t in done) / solved if solved else None,
        "cache_hit_rate": cache if cache is not None else summary.get("reported_cache_hit_rate"),
    }
