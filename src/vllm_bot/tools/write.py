"""The write tool: create or replace a whole file atomically, keeping what the old file had.

When it replaces a text file, write keeps the old file's CRLF line endings (if every line break was
CRLF and the content has none), its byte-order mark and its encoding (if the content fits in it),
and its mode bits; a whole-file rewrite by a model should not turn every line of a diff red.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..calls import ToolResult
from .codec import UTF8, TextFormat, detect_format, sniff_binary, unencodable
from .context import ToolContext, ToolError, count_lines, ok, plural
from .diffs import text_diff
from .fileio import atomic_write, make_dirs, read_all
from .gitmeta import git_metadata_reason

PREVIEW_LINES = 400


@dataclass
class WritePlan:
    target: Path
    shown: str
    data: bytes
    text: str
    old: bytes | None = None  # None: the file does not exist yet
    old_text: str | None = None  # None: new file or a binary one
    nlink: int = 1
    notes: list[str] = field(default_factory=list)


def write_tool(ctx: ToolContext, path: str, content: str) -> ToolResult:
    """Create or overwrite `path` with `content`; reports created/overwritten, bytes and lines."""
    plan = plan_write(ctx, path, content)
    refusal = git_metadata_reason(plan.target, plan.data)
    if refusal:
        raise ToolError(refusal + ".")
    size = f"{plural(len(plan.data), 'byte')}, {plural(count_lines(plan.text), 'line')}"
    if plan.old == plan.data:
        return ok(f"{plan.shown} already has exactly this content ({size}); nothing changed.")
    check = lambda fd: ctx.paths.check_fd(fd, path, write=True)  # noqa: E731
    created = make_dirs(plan.target.parent, check)
    atomic_write(plan.target, plan.data, check)
    ctx.seen.record_written(plan.target, plan.data)
    ctx.paths.written(plan.target, plan.data)
    if plan.old is None:
        message = f"Created {plan.shown} ({size})."
    else:
        was = plural(len(plan.old), "byte") + (
            f", {plural(count_lines(plan.old_text), 'line')}" if plan.old_text else ""
        )
        message = f"Overwrote {plan.shown} ({size}; it had {was})."
    if created:
        message += " Created directories: " + ", ".join(ctx.display(d) + "/" for d in created) + "."
    if plan.nlink > 1:
        plan.notes.append(f"the file had {plan.nlink} hard links; the other links keep the old content")
    if plan.notes:
        message += " Note: " + "; ".join(plan.notes) + "."
    return ok(message)


def preview_write(ctx: ToolContext, path: str, content: str) -> str:
    """'create/overwrite PATH (N bytes, M lines)' and the diff against the old file."""
    plan = plan_write(ctx, path, content)
    verb = "create" if plan.old is None else "overwrite"
    head = f"{verb} {plan.shown} ({plural(len(plan.data), 'byte')}, {plural(count_lines(plan.text), 'line')})"
    if plan.old is not None and plan.old_text is None:
        return head + "\n(replaces a binary file)"
    diff = text_diff(plan.old_text or "", plan.text, plan.shown, PREVIEW_LINES)
    return head + ("\n" + diff if diff else "\n(no change)")


def plan_write(ctx: ToolContext, path: str, content: str) -> WritePlan:
    target = ctx.paths.resolve(path, write=True)
    shown = ctx.display(target)
    if path.rstrip().endswith("/") or os.path.isdir(target):
        raise ToolError(
            f"{shown} is a directory (or ends with '/'); "
            f"give a file path, e.g. '{shown.rstrip('/')}/notes.txt'."
        )
    if not os.path.lexists(target):
        return WritePlan(target, shown, content.encode("utf-8", "surrogateescape"), content)
    old, st = read_all(target, shown, lambda fd: ctx.paths.check_fd(fd, path, write=True))
    if ctx.seen.changed(target, st, old) and old != content.encode("utf-8", "surrogateescape"):
        raise ToolError(
            f"{shown} has changed since you last read or wrote it (edited by the user, another program "
            "or a command you ran), and write would replace those changes. Read it again, then use edit "
            "for your change (or write the whole file again if you really mean to replace it)."
        )
    plan = WritePlan(target, shown, b"", content, old=old, nlink=st.st_nlink)
    fmt = UTF8
    if sniff_binary(old[:8192]) is None:
        old_fmt = detect_format(old)
        plan.old_text = old_fmt.decode_lossy(old)
        fmt, plan.text = _keep_format(old_fmt, plan.old_text, content, plan.notes)
    plan.data = fmt.encode(plan.text)
    return plan


def _keep_format(
    old_fmt: TextFormat, old_text: str, content: str, notes: list[str]
) -> tuple[TextFormat, str]:
    """The format and text to write so the file keeps the old line endings, BOM and encoding."""
    text = content
    crlf = old_text.count("\r\n")
    if crlf and crlf == old_text.count("\n") and "\r" not in content and "\n" in content:
        text = content.replace("\n", "\r\n")
        notes.append("kept the file's CRLF line endings")
    if old_fmt.errors == "surrogateescape" and not old_fmt.bom:
        return UTF8, text  # UTF-8 with stray invalid bytes: the new content is plain UTF-8
    if old_fmt == UTF8 or content.startswith("\ufeff"):
        return UTF8, text
    missing = unencodable(text, old_fmt)
    if missing:
        notes.append(f"the old file was {old_fmt.note}; wrote UTF-8 because the content has {missing!r}")
        return UTF8, text
    notes.append(f"kept the file's encoding ({old_fmt.note})")
    return old_fmt, text
