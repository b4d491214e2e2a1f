"""Cut tool results (and compaction's transcript) to head + tail around one marker that says what is
missing and what to ask for instead.

Two cuts: a new result is *clipped* to its share of the window once, when it first goes out
(`fit_result`: counted in tokens, by the server's own tokenizer when it has one); an old result is
*shrunk* to a few characters by compaction (`shrink_results`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..calls import AssistantTurn, ToolResult
from ..conversation import Conversation, ToolResults

Count = Callable[[str], int]  # tokens of a text (the server's /tokenize, or an estimate)

_READ_EXEC_ADVICE = "Ask for the part you need (read with offset/limit, or filter the command's output)"
CLIPPED_MARKER = (
    "[... {n} characters cut here: the output is too long for this model's context window. "
    + _READ_EXEC_ADVICE
    + " ...]"
)
SHRUNK_MARKER = (
    "[... {n} characters of this old tool result were removed to save context; "
    "run the tool again if you need them ...]"
)
_EARLIER_CUT = re.compile(r"\n\[\.\.\. (\d+) characters (?:cut here|of this old tool result)[^\n]*\.\.\.\]\n")
# What a cut keeps of its token share: the head and tail may be denser than the text on average.
_SAFETY = 0.9


def fit_result(result: ToolResult, tokens: int, count: Count) -> ToolResult | None:
    """The result cut to about `tokens` tokens (head + tail), or None when it is that short already.
    Tokens are counted, not guessed from characters: a small vocabulary makes three times as many
    tokens of the same text as a large one."""
    text = result.as_text()
    if len(text.encode("utf-8", "replace")) <= tokens:  # no tokenizer makes more tokens than bytes
        return None
    has = count(text)
    if has <= tokens:
        return None
    room = max(0, tokens - count(CLIPPED_MARKER))
    return cut(result, int(len(text) * room / has * _SAFETY), CLIPPED_MARKER)


def fit_text(text: str, tokens: int, count: Count) -> str:
    """`text` with its middle left out so that it takes about `tokens` tokens."""
    if len(text.encode("utf-8", "replace")) <= tokens or (has := count(text)) <= tokens:
        return text
    half = int(len(text) * tokens / has * _SAFETY) // 2
    return text[:half] + "\n\n[... middle omitted ...]\n\n" + text[len(text) - half :]


def shrink_results(
    conversation: Conversation,
    keep_turns: int,
    keep_chars: int,
    enough: Callable[[], bool] | None = None,
) -> int:
    """Cut old tool results to head + tail with a marker, oldest first, until `enough()` (every old
    one when it is None); the last `keep_turns` turns are never cut. Returns how many were cut."""
    entries = conversation.entries
    shrunk = 0
    for entry in entries[: recent_start(entries, keep_turns)]:
        if not isinstance(entry, ToolResults):
            continue
        for i, result in enumerate(entry.results):
            shorter = cut(result, keep_chars, SHRUNK_MARKER)
            if shorter is None:
                continue
            if enough is not None and enough():
                return shrunk
            entry.results[i] = shorter
            shrunk += 1
    return shrunk


def recent_start(entries: list[Any], keep_turns: int) -> int:
    """Index of the first entry that belongs to the last `keep_turns` assistant turns (or their task)."""
    turns = [i for i, e in enumerate(entries) if isinstance(e, AssistantTurn)]
    if len(turns) < keep_turns or keep_turns <= 0:
        return 0 if keep_turns > 0 else len(entries)
    return turns[-keep_turns]


def cut(result: ToolResult, keep_chars: int, marker: str) -> ToolResult | None:
    """The result cut to head + tail around `marker`, or None when it is short enough already. A
    marker a tool (or an earlier cut) left in the middle is merged into the new one: one marker, the
    total count, advice that fits the tool (the read/exec advice only for read and exec)."""
    text = result.as_text()
    if len(text) <= keep_chars + len(marker) + 20:
        return None
    start, end, already = keep_chars // 2, len(text) - keep_chars // 2, 0
    earlier = _EARLIER_CUT.search(text)
    if earlier is not None:  # the new cut spans the old one, so no gap goes unmarked
        already, joint = int(earlier.group(1)), earlier.start()
        text = text[:joint] + text[earlier.end() :]
        start = min(start, joint)
        end = max(len(text) - (keep_chars - start), joint)
    if result.name not in ("read", "exec"):
        marker = marker.replace(
            _READ_EXEC_ADVICE, "Ask the tool for less (a narrower query, a filter or a page)"
        )
    shorter = text[:start] + "\n" + marker.format(n=end - start + already) + "\n" + text[end:]
    return ToolResult(result.tool_call_id, result.name, "error" if result.is_error else "text", shorter)
