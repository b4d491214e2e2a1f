"""Bounded capture of a command's output: head + tail in memory, the full output spilled to a file.

Memory stays at about `limit` bytes whatever the command prints. Once the output exceeds `limit`,
everything (up to `spill_cap` bytes) goes to a spill file so the model can read the middle later.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .context import human_size

SpillOpener = Callable[[], tuple[Path, BinaryIO]]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


class OutputCapture:
    """Feed chunks in; `render` returns the text the model sees."""

    def __init__(self, limit: int, open_spill: SpillOpener, spill_cap: int):
        self.head_limit = max(limit // 2, 1)
        self.tail_limit = max(limit - self.head_limit, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0
        self._open_spill = open_spill
        self.spill_cap = spill_cap
        self.spill_path: Path | None = None
        self.spill_error: str | None = None
        self.spilled = 0
        self._spill: BinaryIO | None = None

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        if self._spill is not None:
            self._write_spill(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        if len(self.tail) > self.tail_limit:
            if self._spill is None and self.spill_error is None and self.spill_path is None:
                self._start_spill()
            del self.tail[: len(self.tail) - self.tail_limit]

    def _start_spill(self) -> None:
        try:
            self.spill_path, self._spill = self._open_spill()
        except OSError as e:
            self.spill_error = f"the full output could not be saved ({e.strerror or e})"
            return
        self._write_spill(bytes(self.head) + bytes(self.tail))

    def _write_spill(self, data: bytes) -> None:
        assert self._spill is not None
        room = self.spill_cap - self.spilled
        if room <= 0:
            return
        try:
            self._spill.write(data[:room])
        except OSError as e:
            self.spill_error = f"saving the full output stopped ({e.strerror or e})"
            self.close()
            return
        self.spilled += min(room, len(data))

    def close(self) -> None:
        if self._spill is not None:
            try:
                self._spill.close()
            except OSError:
                pass
            self._spill = None

    @property
    def elided(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def render(self, where: Callable[[Path], str]) -> str:
        """The output for the model: all of it, or head + marker + tail. `where` displays the spill path."""
        if not self.elided:
            return clean_terminal_text(decode(bytes(self.head + self.tail)))
        head = _cut_head(bytes(self.head))
        tail = _cut_tail(bytes(self.tail))
        skipped = self.total - len(head) - len(tail)
        lines = self.newlines - head.count(b"\n") - tail.count(b"\n")
        marker = f"[... {skipped:,} bytes ({lines:,} lines) of {human_size(self.total)} elided"
        if self.spill_path is not None:
            saved = where(self.spill_path)
            if self.spilled < self.total:
                saved += f" (only the first {human_size(self.spilled)} were saved)"
            marker += (
                f"; the full output is in {saved}: use read on it with an offset, "
                "or re-run the command piped through grep, head or tail"
            )
        elif self.spill_error:
            marker += f"; {self.spill_error}"
        marker += " ...]"
        return clean_terminal_text(decode(head)) + "\n" + marker + "\n" + clean_terminal_text(decode(tail))


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _cut_head(data: bytes) -> bytes:
    """Cut at the last line break if it is near the end, else before a split UTF-8 sequence."""
    nl = data.rfind(b"\n")
    if nl >= len(data) * 3 // 4:
        return data[: nl + 1]
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            break
        if byte >= 0xC0:  # a lead byte: drop the sequence it starts if it is incomplete
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data[:-back] if back < need else data
    return data


def _cut_tail(data: bytes) -> bytes:
    """Start after the first line break if it is near the start, else after split UTF-8 bytes."""
    nl = data.find(b"\n")
    if 0 <= nl < len(data) // 4:
        return data[nl + 1 :]
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:
        start += 1
    return data[start:]


def clean_terminal_text(text: str) -> str:
    """Drop ANSI escapes, and keep only what a terminal would show of lines rewritten with '\\r'."""
    text = _ANSI.sub("", text)
    if "\r" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        body = line.removesuffix("\r")
        if "\r" in body:
            parts = [p for p in body.split("\r") if p]
            body = parts[-1] if parts else ""
        lines.append(body)
    return "\n".join(lines)
