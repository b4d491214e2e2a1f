"""Finding edit's oldText in a file, and explaining to the model why it was not found.

A newline in oldText matches LF or CRLF in the file, so text copied from read (which hides CRs)
matches CRLF files. Diagnostics stay cheap on huge files: the whitespace-insensitive search is one
regular expression over the text; the fuzzy one picks candidates by shared words (set operations)
in the first FUZZY_LINES lines, or by difflib's character bounds in the first _QUICK_LINES, and
computes the exact similarity only for those candidates.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Sequence

from .codec import newline_style
from .diffs import Span

FUZZY_LINES = 200_000
_QUICK_LINES = 5_000  # lines scanned with difflib's quick_ratio when no words are shared
_FUZZY_CANDIDATES = 20  # lines scored with the (slow) exact ratio after the quick upper bounds
_WHITESPACE_CANDIDATES = 1000
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
    old_lines = [line.removesuffix("\r") for line in old.strip("\r\n").split("\n")]
    body = _whitespace_hint(text, old_lines)
    if body is None:
        lines = text.split("\n", FUZZY_LINES)[:FUZZY_LINES]
        body = _closest_hint(lines, old_lines)
    if body is None:
        body = f"No similar lines found. Use read on {shown} to see its current content."
    if newline_style(text) == "\r":
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


def _whitespace_hint(text: str, old_lines: list[str]) -> str | None:
    """When old matches some lines except for spacing: where, and how the spacing differs."""
    want = [_norm(line) for line in old_lines]
    anchor = next((j for j, w in enumerate(want) if w), None)
    if anchor is None:
        return None
    blank = r"[^\S\n]"
    words = f"{blank}+".join(re.escape(word) for word in want[anchor].split())
    pattern = re.compile(f"^{blank}*{words}{blank}*$", re.M)
    line_no, last = 1, 0
    for n, match in enumerate(pattern.finditer(text)):
        if n >= _WHITESPACE_CANDIDATES:
            break
        line_no += text.count("\n", last, match.start())
        last = match.start()
        first = line_no - anchor
        window = _lines_at(text, match.start(), anchor, len(want))
        if (
            first >= 1
            and len(window) == len(want)
            and all(_norm(a) == b for a, b in zip(window, want, strict=True))
        ):
            return (
                f"It matches lines {first}-{first + len(want) - 1} only if whitespace is ignored. "
                + _first_difference(window, old_lines, first)
                + " The exact lines are:\n"
                + _numbered(window, first)
            )
    return None


def _lines_at(text: str, pos: int, before: int, count: int) -> list[str]:
    """`count` lines starting `before` lines above the line holding `pos` (fewer at the edges)."""
    start = text.rfind("\n", 0, pos) + 1
    for _ in range(before):
        if start == 0:
            return []
        start = text.rfind("\n", 0, start - 1) + 1
    lines = []
    for _ in range(count):
        end = text.find("\n", start)
        lines.append(text[start : len(text) if end == -1 else end].removesuffix("\r"))
        if end == -1:
            break
        start = end + 1
    return lines


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
    candidates = _by_shared_words(lines, anchor) or _by_quick_ratio(lines[:_QUICK_LINES], anchor)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(anchor)
    scored = []
    for i in candidates:
        matcher.set_seq1(lines[i].strip())
        scored.append((matcher.ratio(), i))
    scored = sorted(scored, reverse=True)[:3]
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


def _by_shared_words(lines: list[str], anchor: str) -> list[int]:
    """Lines sharing the most whitespace-separated words with `anchor` (set operations: fast)."""
    words = set(anchor.split())
    if len(words) < 2:
        return []
    best: list[tuple[int, int]] = []  # heap of (shared words, -line index)
    for i, line in enumerate(lines):
        shared = len(words.intersection(line.split()))
        if shared == 0:
            continue
        if len(best) < _FUZZY_CANDIDATES:
            heapq.heappush(best, (shared, -i))
        elif (shared, -i) > best[0]:
            heapq.heapreplace(best, (shared, -i))
    return [-i for _, i in best]


def _by_quick_ratio(lines: list[str], anchor: str) -> list[int]:
    """Lines with the best difflib upper bounds (slow per line: only for a few thousand lines)."""
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(anchor)
    best: list[tuple[float, int]] = []
    for i, line in enumerate(lines):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() < 0.5:
            continue
        bound = matcher.quick_ratio()
        if bound < 0.5:
            continue
        if len(best) < _FUZZY_CANDIDATES:
            heapq.heappush(best, (bound, i))
        elif bound > best[0][0]:
            heapq.heapreplace(best, (bound, i))
    return [i for _, i in best]


def _numbered(lines: list[str], first: int) -> str:
    shown = [f"{first + n:6}→{line[:500]}" for n, line in enumerate(lines[:SHOW_LINES])]
    if len(lines) > SHOW_LINES:
        shown.append(f"... ({len(lines) - SHOW_LINES} more lines)")
    return "\n".join(shown)
