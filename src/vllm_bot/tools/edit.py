"""The edit tool: replace exact text, preserving every byte outside the replaced spans.

The file is decoded with a format whose round trip is exact (see codec); the round trip is checked
before anything is written. Line breaks in newText follow the line ending of the span they replace.
Nothing is written when oldText matches zero times or, without replace_all, more than once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..calls import ToolResult
from .codec import TextFormat, detect_format, newline_style, sniff_binary, unencodable
from .context import ToolContext, ToolError, human_size, ok, plural
from .diffs import Span, spans_diff
from .fileio import StaleFileError, atomic_write, read_all
from .gitmeta import git_metadata_reason
from .listing import missing_path
from .matching import already_applied, explain_no_match, find_spans, line_numbers, span_newline, with_newlines

DIFF_LINES = 80
PREVIEW_LINES = 400


@dataclass
class EditPlan:
    """A computed edit, not yet written."""

    target: Path
    shown: str
    before: str
    after: str
    old_spans: list[Span]
    new_spans: list[Span]
    data: bytes
    stat: os.stat_result
    stale: bool = False  # the file changed since the model last read or wrote it


def edit_tool(
    ctx: ToolContext, path: str, oldText: str, newText: str, replace_all: bool = False
) -> ToolResult:
    """Replace `oldText` (unique unless `replace_all`) with `newText` in `path`; returns a diff."""
    plan = plan_edit(ctx, path, oldText, newText, replace_all)
    try:
        atomic_write(
            plan.target, plan.data, lambda fd: ctx.paths.check_fd(fd, path, write=True), expect=plan.stat
        )
    except StaleFileError:
        raise ToolError(f"{plan.shown} changed on disk during the edit. Read it again and retry.") from None
    ctx.seen.record_written(plan.target, plan.data)
    ctx.paths.written(plan.target, plan.data)
    lines = line_numbers(plan.after, [s for s, _ in plan.new_spans[:1]])
    where = f" at line {lines[0]}" if len(plan.new_spans) == 1 else ""
    summary = f"Edited {plan.shown}: replaced {plural(len(plan.old_spans), 'occurrence')}{where}."
    if plan.stat.st_nlink > 1:
        summary += (
            f" Note: the file had {plan.stat.st_nlink} hard links; the other links keep the old content."
        )
    if plan.stale:
        summary += (
            " Note: the file had changed since you last read it; the edit applied to its current "
            "content. Read it again if you rely on other parts of it."
        )
    diff = spans_diff(plan.before, plan.after, plan.old_spans, plan.new_spans, plan.shown, DIFF_LINES)
    return ok(summary + "\n" + diff)


def preview_edit(ctx: ToolContext, path: str, oldText: str, newText: str, replace_all: bool = False) -> str:
    """The unified diff `edit` would make (raises ToolError/OSError when it would fail)."""
    plan = plan_edit(ctx, path, oldText, newText, replace_all)
    return spans_diff(plan.before, plan.after, plan.old_spans, plan.new_spans, plan.shown, PREVIEW_LINES)


def plan_edit(ctx: ToolContext, path: str, old: str, new: str, replace_all: bool) -> EditPlan:
    if old == "":
        raise ToolError(
            "oldText is empty. To create or replace a whole file use write; to insert text, put a "
            "neighbouring line in oldText and repeat it in newText together with the new lines."
        )
    if old == new:
        raise ToolError("oldText and newText are identical, so there is nothing to change.")
    target = ctx.paths.resolve(path, write=True)
    shown = ctx.display(target)
    if not os.path.lexists(target):
        raise ToolError(missing_path(target, ctx.paths.root, ctx.display, "To create a new file use write."))
    raw, st = read_all(target, shown, lambda fd: ctx.paths.check_fd(fd, path, write=True))
    fmt, text = _decode(raw, shown)
    stale = ctx.seen.changed(target, st, raw)
    del raw  # a 50 MB file is held as text, new text and new bytes; not also as old bytes
    spans = find_spans(text, old)
    _check_matches(text, spans, old, new, shown, fmt, replace_all)
    after, new_spans = _replace(text, spans, new)
    missing = unencodable(new, fmt)
    if missing:
        raise ToolError(
            f"newText has characters that {shown}'s encoding ({fmt.note}) cannot store: {missing!r}. "
            "Use only characters that encoding supports, or convert the file to UTF-8 first (exec: iconv)."
        )
    data = fmt.encode(after)
    refusal = git_metadata_reason(target, data)
    if refusal:
        raise ToolError(refusal + ".")
    return EditPlan(target, shown, text, after, spans, new_spans, data, st, stale)


def _decode(raw: bytes, shown: str) -> tuple[TextFormat, str]:
    kind = sniff_binary(raw[:8192])
    if kind is not None:
        raise ToolError(
            f"{shown} is a binary file ({kind}, {human_size(len(raw))}); edit changes text files only."
        )
    fmt = detect_format(raw)
    try:
        text = fmt.decode(raw)
    except UnicodeDecodeError as e:
        raise ToolError(
            f"{shown} is not valid {fmt.note} (byte {e.start}); edit it with exec instead."
        ) from None
    if fmt.encode(text) != raw:
        raise ToolError(f"{shown} ({fmt.note}) cannot be edited byte for byte; edit it with exec instead.")
    return fmt, text


def _check_matches(
    text: str, spans: list[Span], old: str, new: str, shown: str, fmt: TextFormat, replace_all: bool
) -> None:
    applied = already_applied(text, spans, new)
    if applied is not None:
        raise ToolError(
            f"newText is already in {shown} at line {applied} and oldText occurs only inside it: the edit "
            "seems already applied. No change was made; read the file to check."
        )
    if not spans:
        if "\ufffd" in old and "\ufffd" not in text and fmt.errors == "surrogateescape":
            raise ToolError(
                f"oldText contains �, which read shows for bytes of {shown} that are not valid UTF-8; "
                "those bytes cannot be matched. Choose oldText that avoids those characters."
            )
        raise ToolError(explain_no_match(text, old, shown))
    if len(spans) > 1 and not replace_all:
        lines = line_numbers(text, [s for s, _ in spans[:20]])
        listed = ", ".join(map(str, lines)) + (", ..." if len(spans) > 20 else "")
        raise ToolError(
            f"oldText matches {len(spans):,} places in {shown} (lines {listed}). No change was made. "
            "Include more surrounding lines in oldText so it matches exactly one place, "
            f"or set replace_all=true to replace all {len(spans):,}."
        )


def _replace(text: str, spans: list[Span], new: str) -> tuple[str, list[Span]]:
    """`text` with each span replaced by `new` in that span's line endings, and the new spans."""
    # Line breaks inserted into a CR-only file become LF: LF oldText must be able to find them again.
    default = "\r\n" if newline_style(text) == "\r\n" else "\n"
    parts: list[str] = []
    new_spans: list[Span] = []
    last = length = 0
    for start, end in spans:
        parts.append(text[last:start])
        length += start - last
        replacement = with_newlines(new, span_newline(text, (start, end), default))
        parts.append(replacement)
        new_spans.append((length, length + len(replacement)))
        length += len(replacement)
        last = end
    parts.append(text[last:])
    return "".join(parts), new_spans
