"""Finding edit's oldText in a file, and explaining to the model why it was not found.

A newline in oldText matches LF or CRLF in the file, so text copied from read (which hides CRs)
matches CRLF files. Diagnostics look at a bounded number of lines (SCAN_LINES) so a miss on a huge
file stays cheap.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from .diffs import Span

SCAN_LINES = 200_000
SHOW_LINES = 30
_COPY_EXACTLY = "Copy oldText exactly from the file (without read's line-number prefixes)."
_COMPARE_CHARS = 5000  # difflib is quadratic: compare windows by their first characters only
_NUMBERED = re.compile(r"^ *\d+(→|\t)", re.M)


def compile_text(needle: str) -> re.Pattern[str]:
    """A pattern for `needle` where each line break matches '\\n' or '\\r\\n'."""
    return re.compile(r"\r?\n".join(re.escape(part) for part in re.split(r"\r?\n", needle)))


def find_spans(text: str, needle: str) -> list[Span]:
    return [m.span() for m in compile_text(needle).finditer(text)]


def line_numbers(text: str, positions: Sequence[int]) -> list[int]:
    """1-based line numbers of sorted character positions, counted incrementally."""
    numbers: list[int] = []
    line, last = 1, 0
    for pos in positions:
        line += text.count("\n", last, pos)
        last = pos
        numbers.append(line)
    return numbers


def span_newline(text: str, span: Span, default: str) -> str:
    """The line ending used inside `span` (the majority); for a span within one line, that line's
    ending; on an unterminated last line, `default`."""
    part = text[span[0] : span[1]]
    crlf = part.count("\r\n")
    lf = part.count("\n") - crlf
    if crlf or lf:
        return "\r\n" if crlf >= lf else "\n"
    end = text.find("\n", span[1])
    if end == -1:
        return default
    return "\r\n" if text[end - 1 : end] == "\r" else "\n"


def with_newlines(text: str, newline: str) -> str:
    text = text.replace("\r\n", "\n")
    return text if newline == "\n" else text.replace("\n", newline)


def already_applied(text: str, old_spans: Sequence[Span], new: str) -> int | None:
    """The line where `new` already is, when every occurrence of old lies inside an occurrence of new."""
    if len(new.strip()) < 8:
        return None  # a short newText occurs by chance too often to mean anything
    new_spans = find_spans(text, new)
    if not new_spans:
        return None
    inside = all(any(ns <= os_ and oe <= ne for ns, ne in new_spans) for os_, oe in old_spans)
    return line_numbers(text, [new_spans[0][0]])[0] if inside else None


def explain_no_match(text: str, old: str, shown: str) -> str:
    """Why `old` is not in `text`, with the closest real lines and what to send instead."""
    head = f"oldText was not found in {shown}."
    for hint in (_numbered_hint, _escape_hint, _final_newline_hint):
        found = hint(text, old)
        if found:
            return f"{head} {found} No change was made."
    lines = text.split("\n", SCAN_LINES)[:SCAN_LINES]
    old_lines = [line.removesuffix("\r") for line in old.strip("\r\n").split("\n")]
    body = _whitespace_hint(lines, old_lines) or _closest_hint(lines, old_lines)
    if body is None:
        body = f"No similar lines found. Use read on {shown} to see its current content."
    crs = text.count("\r") - text.count("\r\n")
    if crs > text.count("\n"):
        body += " Note: the file uses CR (\\r) line endings, so multi-line oldText cannot match."
    return f"{head} {body}\nNo change was made. {_COPY_EXACTLY}"


def _numbered_hint(text: str, old: str) -> str | None:
    if not _NUMBERED.search(old):
        return None
    stripped = _NUMBERED.sub("", old)
    if find_spans(text, stripped):
        return (
            "oldText includes read's line-number prefixes (like '    12→'); it matches once they are removed."
        )
    return "oldText seems to include read's line-number prefixes (like '    12→'); remove them."


def _escape_hint(text: str, old: str) -> str | None:
    if "\\n" not in old or "\n" in old:
        return None
    unescaped = old.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
    spans = find_spans(text, unescaped)
    if not spans:
        return None
    line = line_numbers(text, [spans[0][0]])[0]
    return (
        "oldText contains the two characters \\n instead of line breaks; "
        f"with real line breaks it matches at line {line}."
    )


def _final_newline_hint(text: str, old: str) -> str | None:
    trimmed = old.rstrip("\r\n")
    if trimmed == old or not trimmed or not text.endswith(trimmed):
        return None
    return "oldText ends with a line break but the file has no final newline; drop the trailing line break."


def _norm(line: str) -> str:
    return " ".join(line.split())


def _whitespace_hint(lines: list[str], old_lines: list[str]) -> str | None:
    """When old matches some lines except for spacing: where, and how the spacing differs."""
    want = [_norm(line) for line in old_lines]
    if not any(want):
        return None
    k = len(want)
    for i, line in enumerate(lines):
        if _norm(line) != want[0]:
            continue
        window = [x.removesuffix("\r") for x in lines[i : i + k]]
        if len(window) == k and all(_norm(a) == b for a, b in zip(window, want, strict=True)):
            return (
                f"It matches lines {i + 1}-{i + k} only if whitespace is ignored. "
                + _first_difference(window, old_lines, i + 1)
                + " The exact lines are:\n"
                + _numbered(window, i + 1)
            )
    return None


def _first_difference(file_lines: list[str], old_lines: list[str], first: int) -> str:
    for n, (a, b) in enumerate(zip(file_lines, old_lines, strict=False)):
        if a != b:
            tabs = ""
            if a[: len(a) - len(a.lstrip())].count("\t") != b[: len(b) - len(b.lstrip())].count("\t"):
                tabs = " (tabs vs spaces in the indentation)"
            return f"First difference at line {first + n}{tabs}: the file has {a!r}, oldText has {b!r}."
    return ""


def _closest_hint(lines: list[str], old_lines: list[str]) -> str | None:
    anchor_index = max(range(len(old_lines)), key=lambda j: len(old_lines[j].strip()))
    anchor = old_lines[anchor_index].strip()
    if not anchor:
        return None
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(anchor)
    scored: list[tuple[float, int]] = []
    floor = 0.5
    for i, line in enumerate(lines):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() >= floor and matcher.quick_ratio() >= floor:
            score = matcher.ratio()
            if score >= floor:
                scored.append((score, i))
                scored = sorted(scored, reverse=True)[:3]
                floor = max(0.5, scored[-1][0]) if len(scored) == 3 else floor
    best: tuple[float, int] | None = None
    want = "\n".join(old_lines)[:_COMPARE_CHARS]
    for _, i in scored:
        start = max(0, i - anchor_index)
        joined = "\n".join(x.removesuffix("\r") for x in lines[start : start + len(old_lines)])
        score = difflib.SequenceMatcher(None, joined[:_COMPARE_CHARS], want, autojunk=False).ratio()
        if best is None or score > best[0]:
            best = (score, start)
    if best is None or best[0] < 0.5:
        return None
    score, start = best
    window = [x.removesuffix("\r") for x in lines[start : start + len(old_lines)]]
    return (
        f"The closest lines are {start + 1}-{start + len(window)} ({score:.0%} similar). "
        + _first_difference(window, old_lines, start + 1)
        + " They are:\n"
        + _numbered(window, start + 1)
    )


def _numbered(lines: list[str], first: int) -> str:
    shown = [f"{first + n:6}→{line[:500]}" for n, line in enumerate(lines[:SHOW_LINES])]
    if len(lines) > SHOW_LINES:
        shown.append(f"... ({len(lines) - SHOW_LINES} more lines)")
    return "\n".join(shown)
