"""Text that shows call syntax without making a call: code blocks, inline code, quotes, tables
and diffs. Each handler returns a `mask` span (kept in the prose, never parsed for calls).

A fenced block whose language is empty or call-like (```json, ```tool_call…) and whose content
starts with a call is the model's way of writing a call, so it becomes a call span instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .core import Found, Scan
from .fmt_python import parse_pythonic

CALL_FENCE_LANGS = frozenset(
    {"", "json", "jsonc", "json5", "tool_call", "tool_calls", "tool_code", "tool", "xml", "text", "txt"}
)
_JSON_LANGS = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_calls", "tool"})
_CODE_CALL_LANGS = frozenset({"tool_code", "tool_call", "tool_calls"})
_FENCE_OPEN = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})([^\n]*)(?:\n|\Z)")
_DIFF_LINE = re.compile(r"[-+ \\]|@@|diff |index |new file|deleted file|similarity |rename ")
_DIFF_START = re.compile(r"diff --git |@@ -\d|--- \S[^\n]*\n\+\+\+ ")


@lru_cache(maxsize=32)
def _closing(ch: str, count: int) -> re.Pattern[str]:
    """The closing fence line, found through the newline before it (a literal-led search)."""
    return re.compile(r"\n[ \t]{0,3}" + re.escape(ch) + "{" + str(count) + r",}[ \t]*(?:\n|\Z)")


@dataclass
class Fence:
    start: int
    body_start: int
    body_end: int
    end: int
    lang: str
    closed: bool
    closing: re.Pattern[str]


def fence_at(scan: Scan, pos: int) -> Fence | None:
    """The fenced block whose opening fence is at `pos` (it may be unclosed)."""
    m = _FENCE_OPEN.match(scan.text, pos, scan.end)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    info = m.group(2).strip()
    lang = info.split()[0].lower().strip("{}.") if info else ""
    closing = _closing(m.group(1)[0], len(m.group(1)))
    c = closing.search(scan.text, m.end() - 1, scan.end) if scan.text.endswith("\n", 0, m.end()) else None
    if c is None:
        return Fence(pos, m.end(), scan.end, scan.end, lang, False, closing)
    return Fence(pos, m.end(), max(m.end(), c.start() + 1), c.end(), lang, True, closing)


def fence_handler(scan: Scan, pos: int) -> Found | None:
    fence = fence_at(scan, pos)
    if fence is None:
        return None
    if scan.partial and fence.body_start >= scan.end and not scan.text.endswith("\n", 0, scan.end):
        return scan.pending(pos)  # the language is not complete yet
    if fence.lang in CALL_FENCE_LANGS:
        found = _fenced_calls(scan, fence)
        if found is not None:
            return found
    if not fence.closed and scan.partial:
        return Found(pos, scan.end, "mask", resume=fence.closing)
    return Found(pos, fence.end, "mask")


def _fenced_calls(scan: Scan, fence: Fence) -> Found | None:
    """The fence as a call span when its content starts with a call (or is one JSON call)."""
    first = scan.skip_space(fence.body_start)
    if first >= fence.body_end:
        return scan.pending(fence.start) if scan.partial and not fence.closed else None
    if not fence.closed and scan.partial:
        if fence.lang in _CODE_CALL_LANGS or (scan.text[first] in "{[" and fence.lang in _JSON_LANGS):
            return scan.pending(fence.start)
    elif fence.lang in _JSON_LANGS and scan.text[first] in "{[":
        calls = _json_fence_calls(scan, fence)
        if calls:
            return Found(fence.start, fence.end, "call", "json_fence", calls)
    elif fence.lang in _CODE_CALL_LANGS:
        calls = _pythonic_fence_calls(scan, fence)
        if calls:
            return Found(fence.start, fence.end, "call", "pythonic", calls)
    if scan.in_fence:
        return None  # a fence inside a fenced call block is that block's text
    saved_end, scan.end, scan.in_fence = scan.end, fence.body_end, True
    try:
        inner = scan.walk(fence.body_start, fence.body_end)
    finally:
        scan.end, scan.in_fence = saved_end, False
    if not inner or inner[0].start > first or inner[0].kind != "call":
        if scan.partial and not fence.closed and scan.line_end(first) >= scan.end:
            return scan.pending(fence.start)  # the first line may still become a call
        return None
    if inner[-1].pending:
        return scan.pending(fence.start)
    calls = [c for f in inner if f.kind == "call" for c in f.calls]
    return Found(fence.start, fence.end, "call", inner[0].source, calls)


def _json_fence_calls(scan: Scan, fence: Fence) -> list:
    body = scan.text[fence.body_start : fence.body_end]
    if not scan.spend(len(body)):
        return []
    try:
        value = scan.decode(body)
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    calls = [scan.builder.from_object(item, "json_fence", body, explicit=False) for item in items]
    return [c for c in calls if c is not None] if all(c is not None for c in calls) else []


def _pythonic_fence_calls(scan: Scan, fence: Fence) -> list:
    """Gemma-style ```tool_code blocks holding `name(arg=…)` calls to known tools."""
    body = scan.text[fence.body_start : fence.body_end]
    try:
        raw_calls = parse_pythonic(body)
    except ValueError:
        return []
    if any(scan.builder.known(name) is None for name, _, _ in raw_calls):
        return []
    return [scan.builder.call(name, kw, "pythonic", body, args) for name, kw, args in raw_calls]


def diff_handler(scan: Scan, pos: int) -> Found | None:
    """A diff or patch outside a code block: its lines, up to the first line that is not diff."""
    if _DIFF_START.match(scan.text, pos, scan.end) is None:
        return None
    end = scan.line_end(pos)
    while end < scan.end:
        nxt = end + 1
        if _DIFF_LINE.match(scan.text, nxt, scan.end) is None:
            after_blank = nxt + 1 if scan.text.startswith("\n", nxt) else -1
            if after_blank < 0 or _DIFF_LINE.match(scan.text, after_blank, scan.end) is None:
                if scan.partial and scan.line_end(max(after_blank, nxt)) >= scan.end:
                    end = scan.end  # the next line is still being written
                break
        end = scan.line_end(nxt)
    return Found(pos, end, "mask", pending=scan.partial and end >= scan.end)


_LINE_MASK = re.compile(r"[ \t]*\||[ \t]{0,3}>")
_TICKS = re.compile(r"`+")


def enclosing(scan: Scan, pos: int) -> Found | None:
    """The quoted line, table row or inline code span that holds the marker at `pos`, if any.
    Checked only where a marker is found, so ordinary inline code costs nothing."""
    start, end = scan.line_bounds(pos)
    unfinished = scan.partial and end >= scan.end
    if start >= scan.code_floor and _LINE_MASK.match(scan.text, start, end):
        return Found(start, end, "mask", pending=unfinished)
    span = _code_span_at(scan, max(start, scan.code_floor), pos, end)
    if span is None:
        return None
    if span[1] < 0 or (scan.partial and span[1] >= scan.end):
        return Found(span[0], scan.end, "mask", pending=True)  # its closing backticks may come or grow
    return Found(span[0], span[1], "mask")


def _code_span_at(scan: Scan, origin: int, pos: int, end: int) -> tuple[int, int] | None:
    """The inline code span (start, end) holding `pos`, pairing backtick runs left to right from
    `origin` (a run closes only at a run of the same length). (start, -1) for a run still open
    while streaming. Incremental: the pairing state is kept between markers on one line."""
    state = scan.code_state
    if state[0] != origin or state[1] != end or state[2] > pos:
        state = [origin, end, origin, -1, -1]  # origin, line end, scanned to, open span start/end
    i = state[2]
    while True:
        if state[3] >= 0:
            if pos < state[4]:
                break
            i, state[3], state[4] = state[4], -1, -1
        run = _TICKS.search(scan.text, i, pos)
        if run is None:
            i = pos
            break
        close = _closing_run(len(run.group())).search(scan.text, run.end(), end)
        if close is not None:
            state[3], state[4] = run.start(), close.end()
        elif scan.partial and end >= scan.end:
            return run.start(), -1
        i = run.end()
    state[2] = i
    scan.code_state = state
    return (state[3], state[4]) if state[3] >= 0 and state[3] <= pos < state[4] else None


@lru_cache(maxsize=16)
def _closing_run(width: int) -> re.Pattern[str]:
    return re.compile("(?<!`)" + "`" * width + "(?!`)")
