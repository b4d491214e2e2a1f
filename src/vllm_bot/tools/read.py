"""The read tool: numbered lines of a text file (streamed, bounded memory) or a directory listing.

Only the shown window is decoded. Lines before `offset` are skipped by counting b"\\n" in 1 MB
blocks; after the window the rest is counted the same way for the "of N lines" header, up to
COUNT_BUDGET bytes (past that the header says "more than N lines"). UTF-16/32 files, whose newlines
are not single bytes, are decoded whole and limited to WIDE_MAX_BYTES.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

from ..calls import ToolResult
from .codec import TextFormat, detect_format, sniff_binary
from .context import ToolContext, ToolError, human_size, ok
from .fileio import open_regular
from .listing import list_directory, missing_path

LINE_CHARS = 2000
LINE_BYTES = LINE_CHARS * 4 + 4
BLOCK = 1 << 20
SNIFF = 1 << 16
COUNT_BUDGET = 4 << 30
WIDE_MAX_BYTES = 20_000_000

Line = tuple[str, int]  # (text for display, full length in bytes when it was cut, else 0)


def read_tool(ctx: ToolContext, path: str, offset: int | None = None, limit: int | None = None) -> ToolResult:
    """Show `limit` numbered lines of `path` from line `offset`, or list it if it is a directory."""
    target = ctx.paths.resolve(path)
    shown = ctx.display(target)
    if not os.path.lexists(target):
        raise ToolError(
            missing_path(target, ctx.paths.root, ctx.display, "Use read on a directory to list it.")
        )
    if os.path.isdir(target):
        fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            ctx.paths.check_fd(fd, path, write=False)
        finally:
            os.close(fd)
        return ok(list_directory(target, shown))
    fd, st = open_regular(target, shown, lambda f: ctx.paths.check_fd(f, path, write=False))
    with os.fdopen(fd, "rb") as f:
        window = _Window(shown, offset or 1, limit or ctx.config.read_max_lines, ctx.config.read_max_chars)
        result = ok(window.render(f, st.st_size))
    ctx.seen.record(target, st)
    return result


class _Window:
    """One read: which lines to show and the bookkeeping for the header."""

    def __init__(self, shown: str, start: int, limit: int, max_chars: int):
        self.shown, self.start, self.limit, self.max_chars = shown, start, limit, max_chars
        self.fmt = TextFormat()

    def render(self, f: BinaryIO, size: int) -> str:
        head = f.read(SNIFF)
        kind = sniff_binary(head)
        if kind is not None:
            raise ToolError(
                f"{self.shown} is a binary file ({kind}, {human_size(size)}); read shows text only. "
                "Use exec with `file`, `xxd ... | head` or a converter to inspect it."
            )
        if size == 0:
            return f"{self.shown} is an empty file (0 bytes)."
        self.fmt = detect_format(head, partial=len(head) < size)
        if self.fmt.wide:
            return self._render_wide(f, size)
        f.seek(len(self.fmt.bom))
        before = _skip_lines(f, self.start - 1)
        shown, consumed, text = self._take(_byte_lines(f, self.fmt))
        rest, exact = _count_rest(f)
        total = before + consumed + rest
        if self.start > 1 and consumed == 0:
            raise self._past_end(total)
        return self._finish(text, shown, total, exact)

    def _render_wide(self, f: BinaryIO, size: int) -> str:
        if size > WIDE_MAX_BYTES:
            raise ToolError(
                f"{self.shown} is {self.fmt.note} and {human_size(size)}; read handles such files up to "
                f"{human_size(WIDE_MAX_BYTES)}. Use exec with "
                f"`iconv -f {self.fmt.encoding} -t utf-8 {self.shown} | sed -n '1,200p'`."
            )
        f.seek(0)
        body = self.fmt.decode_lossy(f.read())
        lines = body.split("\n")
        if lines[-1] == "":
            lines.pop()
        total = len(lines)
        if self.start > total:
            raise self._past_end(total)
        chosen = ((line.removesuffix("\r"), 0) for line in lines[self.start - 1 :])
        shown, _, text = self._take(chosen)
        return self._finish(text, shown, total, True)

    def _take(self, lines: Iterator[Line]) -> tuple[int, int, list[str]]:
        """Numbered lines up to the line and character limits: (shown, consumed, rendered lines)."""
        out: list[str] = []
        used = consumed = 0
        for text, full_bytes in lines:
            consumed += 1
            if full_bytes or len(text) > LINE_CHARS:
                size = f"{full_bytes:,} bytes" if full_bytes else f"{len(text):,} characters"
                text = (
                    f"{text[:LINE_CHARS]} … [line truncated at {LINE_CHARS:,} characters; it is {size} long]"
                )
            line = f"{self.start + len(out):6}→{text}"
            if out and used + len(line) + 1 > self.max_chars:
                break
            out.append(line)
            used += len(line) + 1
            if len(out) >= self.limit:
                break
        return len(out), consumed, out

    def _finish(self, text: list[str], shown: int, total: int, exact: bool) -> str:
        last = self.start + shown - 1
        of = f"{total:,}" if exact else f"more than {total:,}"
        note = f" ({self.fmt.note})" if self.fmt.note else ""
        if "invalid byte" in self.fmt.note:
            note = f" ({self.fmt.note}; they show as �)"
        header = f"File {self.shown}{note}, lines {self.start:,}-{last:,} of {of}"
        if self.start == 1 and last == total and exact:
            return f"{header} (whole file):\n" + "\n".join(text)
        if last >= total and exact:
            return f"{header} (end of file):\n" + "\n".join(text)
        footer = f"[{total - last:,} more lines. Use read with offset={last + 1} to continue.]"
        if not exact:
            footer = f"[more lines follow. Use read with offset={last + 1} to continue.]"
        return f"{header}:\n" + "\n".join(text) + "\n" + footer

    def _past_end(self, total: int) -> ToolError:
        return ToolError(
            f"offset {self.start} is past the end of {self.shown}: it has {total:,} lines. "
            f"Use an offset from 1 to {max(total, 1):,}."
        )


def _skip_lines(f: BinaryIO, n: int) -> int:
    """Move past `n` newline-terminated lines in 1 MB blocks; returns how many there were (< n at EOF)."""
    skipped = 0
    while skipped < n:
        block_start = f.tell()
        block = f.read(BLOCK)
        if not block:
            return skipped
        found = block.count(b"\n")
        if skipped + found < n:
            skipped += found
            continue
        pos = -1
        for _ in range(n - skipped):
            pos = block.index(b"\n", pos + 1)
        f.seek(block_start + pos + 1)
        return n
    return skipped


def _byte_lines(f: BinaryIO, fmt: TextFormat) -> Iterator[Line]:
    """Lines from the current position, each at most LINE_BYTES; the rest of a longer line is skipped."""
    while True:
        raw = f.readline(LINE_BYTES)
        if not raw:
            return
        full = 0
        if not raw.endswith(b"\n") and len(raw) == LINE_BYTES:
            full = len(raw) + _skip_rest_of_line(f)
        raw = raw.removesuffix(b"\n").removesuffix(b"\r")
        yield raw.decode(fmt.encoding, "replace"), full


def _skip_rest_of_line(f: BinaryIO) -> int:
    skipped = 0
    while True:
        chunk = f.readline(BLOCK)
        if not chunk:
            return skipped
        if chunk.endswith(b"\n"):
            return skipped + len(chunk) - 1
        skipped += len(chunk)


def _count_rest(f: BinaryIO) -> tuple[int, bool]:
    """Lines from the current position to EOF (an unterminated last line counts), and whether exact."""
    lines = read = 0
    last = b"\n"
    while read < COUNT_BUDGET:
        block = f.read(BLOCK)
        if not block:
            return lines + (last != b"\n"), True
        lines += block.count(b"\n")
        read += len(block)
        last = block[-1:]
    return lines, False
