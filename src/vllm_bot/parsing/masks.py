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
from .jsonscan import loads_lenient

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
    return re.compile(r"(?m)^[ \t]{0,3}" + re.escape(ch) + "{" + str(count) + r",}[ \t]*(?:\n|\Z)")


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
    c = closing.search(scan.text, m.end(), scan.end)
    if c is None:
        return Fence(pos, m.end(), scan.end, scan.end, lang, False, closing)
    return Fence(pos, m.end(), c.start(), c.end(), lang, True, closing)


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
    saved_end, scan.end = scan.end, fence.body_end
    try:
        inner = scan.walk(fence.body_start, fence.body_end)
    finally:
        scan.end = saved_end
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
        value = loads_lenient(body)
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


def line_mask(scan: Scan, pos: int) -> Found:
    """A quoted line (`> …`) or a table row (`| … |`): shown as is."""
    end = scan.line_end(pos)
    return Found(pos, end, "mask", pending=scan.partial and end >= scan.end)


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


def inline_code(scan: Scan, pos: int) -> Found | None:
    """`code` on one line; a lone backtick is just a character."""
    text = scan.text
    run = pos
    while run < scan.end and text[run] == "`":
        run += 1
    ticks = text[pos:run]
    limit = scan.line_end(pos)
    at = text.find(ticks, run, limit)
    while at >= 0 and text.startswith("`", at + len(ticks)):
        nxt = at + len(ticks)
        while nxt < limit and text[nxt] == "`":
            nxt += 1
        at = text.find(ticks, nxt, limit)
    if at < 0 or (scan.partial and at + len(ticks) >= scan.end):  # a run at the end may grow
        if scan.partial and limit >= scan.end:
            return Found(pos, scan.end, "mask", pending=True)
        return Found(pos, run, "mask")
    return Found(pos, at + len(ticks), "mask")
