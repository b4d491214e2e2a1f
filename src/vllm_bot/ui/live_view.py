"""The redrawn part of the terminal UI (rich): one live region at a time, with a footer.

The region shows a spinner with the elapsed time while the model prefills, the reasoning (dimmed) or
its word count, the unfinished tail of the Markdown reply, or the tail of a running command's
output; under it, while a task runs, a footer with the task's time, tokens and context used.

Why a lock: redrawing the region means moving the cursor up over the lines drawn last time and
drawing again, and printing above it means the same plus the printed lines. A print from the session
thread must not interleave with a redraw, or stale region lines stay on the screen (a heading twice)
or printed ones are erased (a bullet gone). The redraws run on a ticker that takes the UI's lock, and
the UI prints only under that lock.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.control import Control
from rich.file_proxy import FileProxy
from rich.markdown import Markdown
from rich.segment import ControlType, Segment
from rich.text import Text

from .display import FENCE, TailBuffer, fold_rows
from .typeahead import TypeAhead

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class LiveView:
    """What the region draws. Written under the UI's lock, drawn under it (see `LiveRegion`)."""

    def __init__(self, show_reasoning: Callable[[], bool], footer: Callable[[], str | None]) -> None:
        self.show_reasoning = show_reasoning
        self.footer = footer
        self.output_lines = 10
        self.phase = "idle"  # wait | think | text | exec | tool
        self.label = ""
        self.started = time.monotonic()
        self.reasoning: list[str] = []  # of the reply streaming now
        self.reasoning_tail = ""
        self.reasoning_chars = 0
        self.thinking_since: float | None = None
        self.markdown_tail = ""
        self.in_code = False  # an unfinished code block: drawn plain, highlighted once it is complete
        self.tail: TailBuffer | None = None
        self.typing: TypeAhead | None = None  # keys typed while the task runs, drawn last
        self._cache: tuple[str, int, list[list[Segment]]] | None = None

    def add_reasoning(self, text: str) -> None:
        """A piece of the reasoning: counted, its tail kept to draw; the first one starts "Thinking"."""
        if self.thinking_since is None:
            self.thinking_since = time.monotonic()
            self.phase, self.label = "think", "Thinking"
        self.reasoning.append(text)
        self.reasoning_chars += len(text)
        self.reasoning_tail = (self.reasoning_tail + text)[-2000:]

    def take_reasoning(self) -> tuple[str, float] | None:
        """The reasoning since the last take and how many seconds it took (None when there was none)."""
        if self.thinking_since is None:
            return None
        seconds, self.thinking_since = time.monotonic() - self.thinking_since, None
        return "".join(self.reasoning).strip(), seconds

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = time.monotonic() - self.started
        frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
        room = max(3, console.size.height - 5)
        if self.phase in ("wait", "think", "tool"):
            if self.phase == "think" and self.show_reasoning():
                tail = self.reasoning_tail[-600:].lstrip()
                yield from _last_lines(console, options, Text(tail, style="dim italic"), room)
            line = Text(f"{frame} {self.label} {elapsed:.1f}s", style="cyan")
            if self.reasoning_chars:
                line.append(f"  · reasoning, {self.reasoning_chars:,} characters", style="dim")
            yield line
        elif self.phase == "text":
            yield from self._markdown(console, options, room)
            yield Text(f"{frame} {elapsed:.1f}s", style="dim cyan")
        elif self.phase == "exec" and self.tail is not None:
            keep = min(self.output_lines, room)
            lines, before = self.tail.lines(keep)
            rows, hidden, _ = fold_rows(lines, options.max_width, keep)  # a long line: its last rows
            if rows:
                yield Text("\n".join(rows), style="dim", no_wrap=True, overflow="ellipsis")
            more = f" · {before + hidden:,} more lines above" if before + hidden else ""
            yield Text(f"{frame} running {elapsed:.1f}s{more}  (Esc or Ctrl-C stops it)", style="cyan")
        footer = self.footer()
        if footer:
            yield Text(footer, style="dim", no_wrap=True, overflow="ellipsis")
        if self.typing is not None:
            yield from _typed(self.typing)

    def _markdown(self, console: Console, options: ConsoleOptions, room: int) -> RenderResult:
        text, width = self.markdown_tail, options.max_width
        if self._cache is None or self._cache[:2] != (text, width):
            lines = []
            if self.in_code:  # highlighting a growing block at every redraw would cost a core's tenth
                code = "\n".join(ln for ln in text.split("\n") if not FENCE.match(ln))
                lines = console.render_lines(Text(code, style="cyan", no_wrap=True), options, pad=False)
            elif text.strip():
                lines = console.render_lines(Markdown(text), options.update(height=None), pad=False)
            while lines and not "".join(seg.text for seg in lines[-1]).strip():
                lines.pop()  # Markdown ends blocks with a blank line; the live view should not
            self._cache = (text, width, lines)
        for line in self._cache[2][-room:]:
            yield from line
            yield Segment.line()


def _typed(typing: TypeAhead) -> RenderResult:
    """The line being typed, then under it the messages queued to be sent when the task ends."""
    if typing.line:
        first, *more = typing.line.split("\n")
        line = Text("> " + first + "".join("\n. " + ln for ln in more))
        yield line.append(" ", style="reverse")  # the cursor
    for message in typing.queued:
        shown = message.strip().replace("\n", " ⏎ ")
        yield Text(f"  queued: {shown}", style="dim", no_wrap=True, overflow="ellipsis")
    if typing.queued:
        yield Text("  (sent when this task ends; Esc stops it)", style="dim")


def _last_lines(console: Console, options: ConsoleOptions, text: Text, room: int) -> RenderResult:
    """The last `room` lines of `text` as drawn (the region must never be taller than the screen)."""
    for line in console.render_lines(text, options.update(height=None), pad=False)[-room:]:
        yield from line
        yield Segment.line()


class LiveRegion(RenderHook):
    """The region at the bottom of the terminal, redrawn `per_second` times a second by a ticker that
    holds `lock` (whoever prints to the console holds it too). While it is shown, every print goes
    through it (a rich render hook): the region is erased, the lines are printed, the region is drawn
    again under them; writes to stdout and stderr are printed the same way.

    Why not rich's `Live`: it erases as many rows as it drew lines. When the window is narrowed, the
    terminal re-wraps those lines into more rows, and the rows above the count stay on the screen (a
    line of the answer shown twice). Here each drawn line's width is kept and the rows are counted at
    the width the terminal has now."""

    def __init__(self, console: Console, view: LiveView, per_second: float, lock: threading.RLock) -> None:
        self.console = console
        self.view = view
        self.per_second = max(0.5, per_second)
        self.lock = lock
        self._drawn: list[int] = []  # the width in cells of each line on the screen, top to bottom
        self._stopped: threading.Event | None = None  # set: the ticker ends; None: not shown
        self._streams: tuple[Any, Any] | None = None  # sys.stdout and sys.stderr while redirected

    @property
    def active(self) -> bool:
        return self._stopped is not None

    def start(self) -> None:
        """Show the region (first drawn at the next tick, so a call that ends at once never flashes)."""
        with self.lock:
            if self._stopped is not None:
                return
            self._stopped = threading.Event()
            self.console.show_cursor(False)
            self.console.push_render_hook(self)
            if self.console.is_terminal and not isinstance(sys.stdout, FileProxy):
                self._streams = (sys.stdout, sys.stderr)
                sys.stdout = FileProxy(self.console, sys.stdout)  # type: ignore[assignment]
                sys.stderr = FileProxy(self.console, sys.stderr)  # type: ignore[assignment]
            threading.Thread(target=self._tick, args=(self._stopped,), daemon=True).start()

    def stop(self) -> None:
        """Erase the region; what was printed above it stays."""
        with self.lock:
            if self._stopped is None:
                return
            self._stopped.set()
            self._stopped = None
            if self._streams is not None:
                sys.stdout, sys.stderr = self._streams
                self._streams = None
            self.console.pop_render_hook()
            self.console.control(self._erase())
            self.console.show_cursor(True)

    def refresh(self) -> None:
        """Draw the region again now (a print draws it too)."""
        with self.lock:
            if self._stopped is not None and self.console.is_terminal:
                self.console.print(Control())

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        with self.lock:
            return [self._erase(), *renderables, _Drawing(self)]

    def _erase(self) -> Control:
        """Back to the region's first row, clearing each: its lines as the terminal wraps them now."""
        columns = terminal_size(self.console).columns
        rows = sum(max(1, -(-width // columns)) for width in self._drawn)
        self._drawn = []
        if not rows:
            return Control()
        up = ((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)) * (rows - 1)
        return Control(ControlType.CARRIAGE_RETURN, (ControlType.ERASE_IN_LINE, 2), *up)

    def _tick(self, stopped: threading.Event) -> None:
        while not stopped.wait(1 / self.per_second):
            with self.lock:
                if stopped.is_set():
                    return
                self.refresh()


class _Drawing:
    """The region's lines, drawn after a print; each line's width is kept for the next erase."""

    def __init__(self, region: LiveRegion) -> None:
        self.region = region

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.region.view, options.update(height=None), pad=False)
        room = max(1, terminal_size(console).lines - 1)  # taller than the screen: rows not erasable
        lines = [_without_trailing_blanks(line) for line in lines[-room:]]
        self.region._drawn = [Segment.get_line_length(line) for line in lines]
        for n, line in enumerate(lines):
            if n:
                yield Segment.line()
            yield from line


def _without_trailing_blanks(line: list[Segment]) -> list[Segment]:
    """A drawn line without the spaces that pad it: padding re-wraps into rows of its own."""
    line = list(line)
    while line and not line[-1].control and not _shows_blank(line[-1]):
        last = line.pop()
        text = last.text.rstrip(" ")
        if text:
            line.append(Segment(text, last.style))
            break
    return line


def _shows_blank(segment: Segment) -> bool:
    """Does a blank in this segment show (a background, the typing cursor)?"""
    style = segment.style
    return bool(style and (style.bgcolor is not None or style.reverse))


def terminal_size(console: Console) -> os.terminal_size:
    """The terminal's size now (the console's may be fixed by COLUMNS and LINES)."""
    try:
        return os.get_terminal_size(console.file.fileno())
    except (OSError, ValueError, AttributeError):
        return os.terminal_size((console.width, console.height))
