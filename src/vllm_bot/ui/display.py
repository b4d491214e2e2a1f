"""What the terminal shows, as plain data: titles of tool calls, folded outputs, a live output tail,
Markdown split into finished blocks. No rich here, so every front end (and the tests) can use it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from ..calls import ToolCall, ToolResult
from ..printable import safe_text
from ..tools.capture import clean_terminal_text
from ..tools.context import count_lines, human_size, plural

T = TypeVar("T")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def shown_output(text: str) -> str:
    """Command output as the terminal may show it: escapes removed, controls made visible."""
    return safe_text(clean_terminal_text(text))


WORKFLOW_TITLES = {
    "delegate": "Delegate: ",
    "update_plan": "Update the task list",
    "present_plan": "Present the plan",
}


def call_title(call: ToolCall) -> str:
    """One line saying what a call does: `Read app.py (lines 10-59)`, `$ pytest -q`."""
    args = call.arguments
    path = safe_text(str(args.get("path", "")), keep_newlines=False)
    if call.name == "read":
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) or isinstance(limit, int):
            start = offset if isinstance(offset, int) else 1
            end = f"{start + limit - 1}" if isinstance(limit, int) else "end"
            return f"Read {path} (lines {start}-{end})"
        return f"Read {path}"
    if call.name == "write":
        content = args.get("content")
        if isinstance(content, str):
            size = len(content.encode("utf-8", "surrogatepass"))
            return f"Write {path} ({human_size(size)}, {plural(count_lines(content), 'line')})"
        return f"Write {path}"
    if call.name == "edit":
        return f"Edit {path}" + (" (every occurrence)" if args.get("replace_all") is True else "")
    if call.name == "exec":
        return "$ " + safe_text(str(args.get("command", "")))
    if call.name in WORKFLOW_TITLES:
        return WORKFLOW_TITLES[call.name] + safe_text(str(args.get("task", "")), keep_newlines=False)
    shown = json.dumps(args, ensure_ascii=False)
    return f"{call.name} {safe_text(shown if len(shown) <= 200 else shown[:200] + '…', keep_newlines=False)}"


def first_line(text: str, width: int = 200) -> str:
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    return safe_text(line if len(line) <= width else line[:width] + "…", keep_newlines=False)


def result_body(result: ToolResult) -> tuple[str, str]:
    """(status line, the rest) of a result's text."""
    text = result.as_text()
    head, _, rest = text.partition("\n")
    return head.strip(), rest


def fold_head(lines: list[T], keep: int) -> tuple[list[T], int]:
    """The first `keep` lines and how many were left out."""
    if len(lines) <= keep:
        return lines, 0
    return lines[:keep], len(lines) - keep


def fold_tail(lines: list[T], keep: int) -> tuple[list[T], int]:
    """The last `keep` lines and how many were left out."""
    if len(lines) <= keep:
        return lines, 0
    return lines[len(lines) - keep :], len(lines) - keep


def fold_rows(lines: list[str], width: int, keep: int) -> tuple[list[str], int, bool]:
    """The last `keep` screen rows of `lines` at `width` columns (a long line shows its end, not a
    screenful of its start), how many lines are left out whole, and whether the first row shown
    begins inside a line."""
    rows: list[str] = []
    width = max(1, width)
    for n in range(len(lines) - 1, -1, -1):
        room = keep - len(rows)
        if room <= 0:
            return rows, n + 1, False
        line = lines[n]
        starts = range(max(0, len(line) - 1) // width * width, -1, -width)  # the last row first
        pieces = [line[i : i + width] for i in starts][:room]
        rows[:0] = reversed(pieces)
        if len(pieces) < -(-len(line) // width):
            return rows, n, True
    return rows, 0, False


def fold_note(before: int, cut: bool) -> str:
    """`… 12 earlier lines` and/or the start of a long line, left out of what is shown."""
    if not cut:
        what = f"{before:,} earlier lines"
    else:
        what = (
            f"{before:,} earlier lines and the start of a long one" if before else "the start of a long line"
        )
    return f"… {what} (Ctrl-O or /expand shows all)"


def output_rows(tail: TailBuffer | None, body: str, width: int, keep: int) -> tuple[list[str], str]:
    """A finished command's output as at most `keep` rows of `width` (its live tail, or the result's
    `body` when nothing streamed), and the note on what is left out ('' when nothing is)."""
    if tail is not None and tail.total_chars:
        lines, before = tail.lines(keep)
    else:
        lines, before = fold_tail(shown_output(body).splitlines(), keep)
    rows, hidden, cut = fold_rows(lines, width, keep)
    return rows, fold_note(before + hidden, cut) if before + hidden or cut else ""


def result_lines(text: str, keep: int, width: int, keep_colon: bool = False) -> tuple[list[str], int]:
    """A result's first `keep` non-blank lines (each at most 4 rows of `width`) and how many more."""
    shown, more = fold_head([ln for ln in safe_text(text.strip()).splitlines() if ln.strip()], keep)
    shown = [clip(ln, 4 * width) for ln in shown]  # a 50,000-character line: 4 rows, not 500
    if shown and not keep_colon:  # "File a.py, lines 1-80:" without the lines it announces
        shown[0] = shown[0].removesuffix(":")
    return shown, more


@dataclass
class DiffLine:
    kind: str  # "add" | "remove" | "hunk" | "header" | "context" | "note"
    text: str


def diff_lines(diff: str) -> list[DiffLine]:
    """Classify the lines of a unified diff for colouring."""
    out: list[DiffLine] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "header"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "remove"
        elif line.startswith("... ("):
            kind = "note"
        else:
            kind = "context"
        out.append(DiffLine(kind, safe_text(line, keep_newlines=False)))
    return out


def split_diff(text: str) -> tuple[str, str]:
    """A write/edit result or preview: (the summary before the diff, the diff from `--- a/`)."""
    index = text.find("--- a/")
    if index < 0:
        return text.strip(), ""
    return text[:index].strip(), text[index:]


class TailBuffer:
    """The last lines of a command's live output, in bounded memory whatever the command prints."""

    def __init__(self, keep_chars: int = 16_384) -> None:
        self.keep_chars = keep_chars
        self.text = ""
        self.total_chars = 0
        self.total_lines = 0

    def feed(self, chunk: str) -> None:
        self.total_chars += len(chunk)
        self.total_lines += chunk.count("\n")
        self.text = (self.text + chunk[-self.keep_chars :])[-self.keep_chars :]

    def lines(self, keep: int) -> tuple[list[str], int]:
        """The last `keep` complete or partial lines (cleaned) and how many lines came before them."""
        lines = shown_output(self.text).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        shown = lines[-keep:] if keep > 0 else []
        total = self.total_lines + (0 if self.text.endswith("\n") or not self.text else 1)
        return shown, max(0, total - len(shown))


def printable_markdown(text: str) -> str:
    """The model's Markdown as the terminal may get it: rich's Markdown passes ESC and the other
    controls through, so they are escaped (an answer or a plan cannot move the cursor or hide a
    line); carriage returns go."""
    return safe_text(text.replace("\r", ""))


class MarkdownStream:
    """Streamed Markdown split into finished blocks (safe to print for good) and the growing tail.

    A block ends at a blank line outside a code fence, so a printed block never changes again and the
    live view only redraws the tail: drawing stays cheap however long the reply gets.
    """

    def __init__(self) -> None:
        self.done = ""  # text up to the last block boundary, not yet taken
        self.tail = ""
        self._in_fence = False
        self._fence = ""
        self._opening = ""  # the line that opened the code block the tail is in
        self._line = ""  # the current incomplete line

    def feed(self, text: str) -> None:
        for piece in printable_markdown(text).splitlines(keepends=True):
            self._line += piece
            if not self._line.endswith("\n"):
                continue
            line, self._line = self._line, ""
            self._take_line(line)

    def _take_line(self, line: str) -> None:
        match = FENCE.match(line)
        if match and (not self._in_fence or match.group(1)[0] == self._fence[0]):
            if self._in_fence and len(match.group(1)) >= len(self._fence) and not line.strip().strip("`~"):
                self._in_fence = False
            elif not self._in_fence:
                self._in_fence, self._fence = True, match.group(1)
                self._opening = line[:-1]
        self.tail += line
        if not self._in_fence and not line.strip() and self.tail.strip():
            self.done += self.tail
            self.tail = ""

    def take_done(self) -> str:
        """Finished blocks since the last call (to print above the live view)."""
        done, self.done = self.done, ""
        return done

    @property
    def live(self) -> str:
        return self.tail + self._line

    @property
    def in_fence(self) -> bool:
        """Is the live tail inside an unfinished code block?"""
        return self._in_fence

    def live_window(self, max_lines: int) -> str:
        """The last `max_lines` lines of the live tail, as valid Markdown: a code block cut at the top
        reopens its fence, so the live view stays highlighted and costs the same at any length."""
        tail = self.tail  # the incomplete `_line` holds no newline: every line break is in the tail
        start = len(tail)
        for _ in range(max_lines):  # only the last lines are looked at, never the whole tail
            start = tail.rfind("\n", 0, start)
            if start < 0:
                return tail + self._line
        window = tail[start + 1 :] + self._line
        return self._opening + "\n" + window if self._in_fence else window

    def flush(self) -> str:
        """Everything not yet taken (at the end of the reply)."""
        rest = self.done + self.tail + self._line
        self.done = self.tail = self._line = ""
        self._in_fence = False
        return rest


def columns(rows: list[tuple[str, str]], gap: int = 2, widest: int = 40) -> list[str]:
    """Two columns, the second aligned; a first cell wider than `widest` does not push the rest."""
    width = min(widest, max((len(left) for left, _ in rows), default=0))
    return [f"{left:<{width}}{' ' * gap}{right}".rstrip() if right else left for left, right in rows]


def clip(text: str, width: int, more: str = "") -> str:
    """`text` shortened at a word to at most `width` characters with `…`, then `more` (say where the
    rest is); unchanged when it fits."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width)
    cut = cut if cut > width // 2 else width - 1
    return text[:cut].rstrip(" ,;:") + "…" + more


def format_arguments(arguments: dict[str, Any], width: int = 400) -> str:
    """Every argument on lines of its own, each value clipped to `width` characters with what was
    left out said: a long first value cannot hide the ones after it from an approval question."""
    lines = []
    for key, value in arguments.items():
        shown = json.dumps(value, ensure_ascii=False, indent=2)
        if len(shown) > width:
            shown = f"{shown[:width]}… ({len(shown) - width:,} more characters not shown)"
        lines.append(f"{json.dumps(key, ensure_ascii=False)}: {shown}")
    return safe_text("\n".join(lines))
