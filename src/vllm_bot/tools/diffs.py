"""Unified diffs with real line numbers, computed only around the changed spans of large texts."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

CONTEXT = 3
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_MAX_DIFF_CHARS = 4_000_000  # whole-file diffs above this are skipped (difflib is quadratic at worst)

Span = tuple[int, int]  # [start, end) character offsets


def text_diff(old: str, new: str, shown: str, max_lines: int) -> str:
    """A unified diff of two whole texts, capped at `max_lines` lines ('' when they are equal)."""
    if len(old) + len(new) > _MAX_DIFF_CHARS:
        return f"(diff not shown: {shown} is too large to compare here)"
    lines = difflib.unified_diff(_split(old), _split(new), f"a/{shown}", f"b/{shown}", n=CONTEXT, lineterm="")
    return _cap(list(lines), max_lines)


def spans_diff(
    old: str, new: str, old_spans: Sequence[Span], new_spans: Sequence[Span], shown: str, max_lines: int
) -> str:
    """A unified diff of `old` -> `new` where only the given spans changed (same order in both)."""
    out = [f"--- a/{shown}", f"+++ b/{shown}"]
    for (os_, oe), (ns, ne) in _groups(old, old_spans, new_spans):
        first_old, old_lines = _window(old, os_, oe)
        first_new, new_lines = _window(new, ns, ne)
        for line in difflib.unified_diff(old_lines, new_lines, n=CONTEXT, lineterm=""):
            if line.startswith(("---", "+++")):
                continue
            out.append(_shift(line, first_old - 1, first_new - 1))
        if len(out) > max_lines:
            break
    return _cap(out, max_lines)


def _groups(old: str, old_spans: Sequence[Span], new_spans: Sequence[Span]) -> list[tuple[Span, Span]]:
    """Merge spans whose context windows overlap, so hunks do not repeat lines."""
    groups: list[tuple[Span, Span]] = []
    for (os_, oe), (ns, ne) in zip(old_spans, new_spans, strict=True):
        if groups:
            (gos, goe), (gns, _) = groups[-1]
            if old.count("\n", goe, os_) <= 2 * CONTEXT:
                groups[-1] = ((gos, oe), (gns, ne))
                continue
        groups.append(((os_, oe), (ns, ne)))
    return groups


def _window(text: str, start: int, end: int) -> tuple[int, list[str]]:
    """The lines covering text[start:end] plus CONTEXT lines around: (first line number, lines)."""
    begin = text.rfind("\n", 0, start) + 1
    for _ in range(CONTEXT):
        if begin == 0:
            break
        begin = text.rfind("\n", 0, begin - 1) + 1
    stop = end - 1 if end > start and text[end - 1] == "\n" else text.find("\n", end)
    for _ in range(CONTEXT):
        if stop == -1:
            break
        stop = text.find("\n", stop + 1)
    stop = len(text) if stop == -1 else stop
    first = text.count("\n", 0, begin) + 1
    return first, _split(text[begin:stop])


def _shift(line: str, old_offset: int, new_offset: int) -> str:
    m = _HUNK.match(line)
    if not m:
        return line
    a = int(m.group(1)) + old_offset
    b = int(m.group(3)) + new_offset
    return f"@@ -{a}{m.group(2) or ''} +{b}{m.group(4) or ''} @@"


def _split(text: str) -> list[str]:
    """Lines split on '\\n' only (str.splitlines also splits on form feeds etc.), without '\\r'."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _cap(lines: list[str], max_lines: int) -> str:
    if len(lines) <= max_lines:
        return "\n".join(lines)
    return "\n".join(lines[:max_lines]) + f"\n... ({len(lines) - max_lines:,} more diff lines not shown)"
