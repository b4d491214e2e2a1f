"""Where a resumed conversation left off, as plain lines: the last turns with their tool calls
folded to one line each; and how to come back to a session after leaving it."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..calls import AssistantTurn
from ..cliargs import program_name
from ..conversation import Entry, ToolResults, UserMessage
from ..tools.context import plural
from .display import call_title, clip, fold_head, safe_text

TURNS = 3  # user turns shown
LAST_ANSWER_LINES = 12  # the latest answer, where the user left off
ANSWER_LINES = 3  # earlier answers
CALLS_SHOWN = 4


def recap_lines(entries: list[Entry], turns: int = TURNS) -> list[str]:
    """The last `turns` user turns: `> task`, `  ● 3 tool calls: Read a.py · $ pytest`, the answer."""
    starts = [i for i, e in enumerate(entries) if isinstance(e, UserMessage) and e.kind == "task"]
    if not starts:
        return []
    shown = starts[-turns:]
    title = (
        f"Where you left off (last {len(shown)} of {len(starts)} turns):"
        if len(starts) > len(shown)
        else "Where you left off:"
    )
    lines = [title]
    if any(isinstance(e, UserMessage) and e.kind == "summary" for e in entries[: shown[0]]):
        lines.append("  (earlier turns were summarized to save context)")
    for n, start in enumerate(shown):
        end = shown[n + 1] if n + 1 < len(shown) else len(entries)
        last = n == len(shown) - 1
        lines += _turn(entries[start:end], LAST_ANSWER_LINES if last else ANSWER_LINES)
    return lines


def _turn(entries: list[Entry], answer_lines: int) -> list[str]:
    task = entries[0]
    assert isinstance(task, UserMessage)
    first, more = fold_head(safe_text(task.content.strip()).splitlines() or [""], 2)
    lines = ["> " + first[0], *("  " + ln for ln in first[1:])]
    if more:
        lines.append(f"  … {plural(more, 'more line')}")
    turns = [e for e in entries if isinstance(e, AssistantTurn)]
    calls = [c for t in turns for c in t.tool_calls]
    if calls:
        titles = " · ".join(clip(call_title(c).replace("\n", " "), 60) for c in calls[:CALLS_SHOWN])
        extra = f" · +{len(calls) - CALLS_SHOWN} more" if len(calls) > CALLS_SHOWN else ""
        noun = "tool call" if len(calls) == 1 else "tool calls"
        lines.append(f"  ● {len(calls)} {noun}: {titles}{extra}")
    answer = next((t.content.strip() for t in reversed(turns) if t.content.strip() and not t.tool_calls), "")
    if answer:
        shown, more = fold_head([ln for ln in safe_text(answer).splitlines() if ln.strip()], answer_lines)
        lines += ["  " + ln for ln in shown]
        if more:
            lines.append(f"  … {plural(more, 'more line')}")
    elif entries and isinstance(entries[-1], (AssistantTurn, ToolResults)) and calls:
        lines.append("  (no answer yet: the task stopped before the model finished)")
    return lines


def come_back_hint(workspace: Path, argv0: str | None = None) -> str:
    """The line printed on leaving a session: how to continue it."""
    where = ""
    if workspace.resolve() != Path(os.getcwd()).resolve():
        where = f" --workspace {shlex.quote(str(workspace))}"
    return f"To continue this session later: {program_name(argv0)} --continue{where}"
