"""Where a resumed conversation left off: the last turns with their tool calls folded to one line
each (a declined one says so) and the answers as Markdown; and how to come back to a session after
leaving it."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..calls import AssistantTurn, ToolCall, ToolResult
from ..cliargs import program_name
from ..conversation import Entry, ToolResults, UserMessage
from ..tools.context import plural
from .display import call_title, clip, safe_text

TURNS = 3  # user turns shown
LAST_ANSWER_LINES = 12  # the latest answer, where the user left off
ANSWER_LINES = 3  # earlier answers
CALLS_SHOWN = 4
# How safety/approval.py and the policy word a call that did not run, and what the recap calls it.
NOT_RUN = {"the user declined": "declined", "refused by policy:": "refused", "not run:": "not run"}


@dataclass
class RecapPart:
    text: str
    markdown: bool = False  # an answer, indented by two: Markdown where the front end can render it


def recap_lines(entries: list[Entry], turns: int = TURNS) -> list[str]:
    """The recap as plain lines."""
    return plain_lines(recap(entries, turns))


def plain_lines(parts: list[RecapPart]) -> list[str]:
    """Recap parts as plain lines (an answer's Markdown as written, without its blank lines)."""
    lines: list[str] = []
    for part in parts:
        if part.markdown:
            lines += ["  " + ln for ln in part.text.splitlines() if ln.strip()]
        else:
            lines += part.text.splitlines()
    return lines


def recap(entries: list[Entry], turns: int = TURNS) -> list[RecapPart]:
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
    parts = [RecapPart(title)]
    if any(isinstance(e, UserMessage) and e.kind == "summary" for e in entries[: shown[0]]):
        parts.append(RecapPart("  (earlier turns were summarized to save context)"))
    for n, start in enumerate(shown):
        end = shown[n + 1] if n + 1 < len(shown) else len(entries)
        last = n == len(shown) - 1
        parts += _turn(entries[start:end], LAST_ANSWER_LINES if last else ANSWER_LINES)
    return parts


def _turn(entries: list[Entry], answer_lines: int) -> list[RecapPart]:
    task = entries[0]
    assert isinstance(task, UserMessage)
    first, more = _head(safe_text(task.content.strip()), 2)
    lines = ["> " + first[0], *("  " + ln for ln in first[1:])]
    if more:
        lines.append(f"  … {plural(more, 'more line')}")
    turns = [e for e in entries if isinstance(e, AssistantTurn)]
    calls = [c for t in turns for c in t.tool_calls]
    if calls:
        results = {r.tool_call_id: r for e in entries if isinstance(e, ToolResults) for r in e.results}
        titles = " · ".join(_call(c, results.get(c.id)) for c in calls[:CALLS_SHOWN])
        extra = f" · +{len(calls) - CALLS_SHOWN} more" if len(calls) > CALLS_SHOWN else ""
        noun = "tool call" if len(calls) == 1 else "tool calls"
        lines.append(f"  ● {len(calls)} {noun}: {titles}{extra}")
    parts = [RecapPart("\n".join(lines))]
    answer = next((t.content.strip() for t in reversed(turns) if t.content.strip() and not t.tool_calls), "")
    if answer:
        shown, more = _head(safe_text(answer), answer_lines)
        parts.append(RecapPart("\n".join(shown), markdown=True))
        if more:
            parts.append(RecapPart(f"  … {plural(more, 'more line')}"))
    elif entries and isinstance(entries[-1], (AssistantTurn, ToolResults)) and calls:
        parts.append(RecapPart("  (no answer yet: the task stopped before the model finished)"))
    return parts


def _head(text: str, keep: int) -> tuple[list[str], int]:
    """The lines of `text` up to its `keep`-th non-blank one (the blank ones between stay: they
    separate Markdown paragraphs) and how many non-blank lines are left out."""
    lines = text.splitlines() or [""]
    filled = [n for n, line in enumerate(lines) if line.strip()]
    if len(filled) <= keep:
        return lines, 0
    return lines[: filled[keep - 1] + 1], len(filled) - keep


def _call(call: ToolCall, result: ToolResult | None) -> str:
    """`$ pytest`, or `$ rm -rf build (declined)` for a call that did not run."""
    title = clip(call_title(call).replace("\n", " "), 60)
    if result is not None and result.is_error:
        text = result.as_text()
        title += next((f" ({word})" for start, word in NOT_RUN.items() if text.startswith(start)), "")
    return title


def come_back_hint(workspace: Path, argv0: str | None = None, config: Any = None) -> str:
    """The line printed on leaving a session: how to continue it, on the same server with the same
    model (the flags that chose them; an API key is named, never shown)."""
    args = ["--continue"]
    if workspace.resolve() != Path(os.getcwd()).resolve():
        args += ["--workspace", str(workspace)]
    note = ""
    if config is not None:
        args += [
            arg
            for layer, path, _ in config.provenance.files
            if layer == "--config"
            for arg in ("--config", path)
        ]
        for key, flag, value in SERVER_FLAGS:
            if key in config.flags:
                args += [flag, str(value(config))]
        note = " (and your --api-key)" if "vllm.api_key" in config.flags else ""
    return f"To continue this session later: {program_name(argv0)} {shlex.join(args)}{note}"


# The flags that pick the server and the model: a way back that left them out opened the session
# against the default server.
SERVER_FLAGS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("vllm.base_url", "--base-url", lambda config: config.vllm.base_url),
    ("vllm.model", "--model", lambda config: config.vllm.model),
)
