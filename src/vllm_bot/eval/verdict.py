"""The verdict of a whole eval run: one line saying how well this model and server drive the agent,
and what to fix when the run shows a server set-up problem (each with the `doctor` hint): native calls
that fell back to text (no --enable-auto-tool-choice --tool-call-parser), calls the server's parser
missed, reasoning left in the reply text (no --reasoning-parser), replies cut by max_tokens. A run
that did not finish has no verdict."""

from __future__ import annotations

from typing import Any

from ..cliargs import program_name

GRADES = ((0.8, "strong"), (0.5, "usable"), (0.2, "weak"), (0.0, "poor"))
UNJUDGED = ("error", "crashed")  # the agent could not work (server errors) or died: not the model's score


def share(run: dict[str, Any]) -> float:
    summary = run["summary"]
    return summary["passed"] / summary["tasks"] if summary["tasks"] else 0.0


def grade(value: float) -> str:
    return next(name for low, name in GRADES if value >= low)


def verdict(model: str, runs: dict[str, dict[str, Any]]) -> str:
    """One line: how well this model and server drive the agent."""
    if not runs:
        return "no tasks ran"
    best = max(runs, key=lambda label: (share(runs[label]), -runs[label]["figures"]["malformed_calls"]))
    summary, figures = runs[best]["summary"], runs[best]["figures"]
    where = f" in {best} mode" if len(runs) > 1 else ""
    if best == "native" and figures["fell_back_tasks"]:
        where = f" in native mode ({figures['fell_back_tasks']} of them fell back to text)"
    tiers = ", ".join(f"{tier} {t['passed']}/{t['tasks']}" for tier, t in figures["tiers"].items())
    line = (
        f"{grade(share(runs[best]))}: {model} solves {summary['passed']}/{summary['tasks']} "
        f"({share(runs[best]):.0%}) of the bundled tasks{where}"
    )
    line += f" ({tiers})" if len(figures["tiers"]) > 1 else ""
    others = [label for label in runs if label != best and share(runs[label]) < share(runs[best])]
    if others:
        line += f", better than {', '.join(f'{o} ({share(runs[o]):.0%})' for o in others)}"
    per_task = figures["malformed_calls"] / summary["tasks"] if summary["tasks"] else 0.0
    if per_task >= 0.5:
        line += f"; many malformed tool calls ({per_task:.1f} per task)"
    if figures["loop_stops"]:
        line += f"; {figures['loop_stops']} tasks stopped by the loop guard (the model repeated itself)"
    unjudged = sum(summary["statuses"].get(s, 0) for s in UNJUDGED)
    if unjudged:
        line += f"; {unjudged} tasks ended in server errors or crashes (see their agent.log)"
    return line


def fixes(runs: dict[str, dict[str, Any]]) -> list[str]:
    """What to change on the server or in the config, most important first, each with the hint."""
    doctor = f"`{program_name()} doctor` checks it and names the parser for this model"
    found: list[str] = []
    for label, run in runs.items():
        f, n = run["figures"], run["summary"]["tasks"]
        if f["fell_back_tasks"]:
            found.append(
                f"{label}: native tool calls failed and {f['fell_back_tasks']} of {n} tasks fell back to "
                "the text protocol: start vLLM with --enable-auto-tool-choice --tool-call-parser PARSER; "
                + doctor
            )
        if f["leaked_calls"]:
            found.append(
                f"{label}: the server's parser missed {f['leaked_calls']} tool calls the model wrote as "
                f"reply text: check vLLM's --tool-call-parser; {doctor}"
            )
        if f["reasoning_in_text"]:
            found.append(
                f"{label}: {f['reasoning_in_text']} of {f['replies']} replies carried their reasoning in the "
                f"text (<think>…): start vLLM with --reasoning-parser PARSER; {doctor}"
            )
        if f["cut_replies"]:
            found.append(
                f"{label}: {f['cut_replies']} replies were cut by max_tokens"
                + (f" ({f['truncated_stops']} tasks stopped by it)" if f["truncated_stops"] else "")
                + ": leave vllm.max_tokens unset (or raise it) and give the server a larger --max-model-len; "
                + f"`{program_name()} doctor` shows the context window"
            )
    return list(dict.fromkeys(found))
