"""The redrawn part of the terminal UI (rich): one live region at a time, with a footer.

The region shows a spinner with the elapsed time while the model prefills, the reasoning (dimmed) or
its word count, the unfinished tail of the Markdown reply, or the tail of a running command's
output; under it, while a task runs, a footer with the task's time, tokens and context used.

Why a lock: redrawing the region means moving the cursor up over the lines drawn last time and
drawing again, and printing above it means the same plus the printed lines. rich's own refresh
thread takes only its own lock, so a print from the session thread could interleave with a redraw
and leave stale region lines on the screen (a heading twice) or erase printed ones (a bullet gone).
Here the redraws run on a ticker that takes the UI's lock, and the UI prints only under that lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.text import Text

from .display import FENCE, TailBuffer

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
        self.reasoning_tail = ""
        self.reasoning_chars = 0
        self.markdown_tail = ""
        self.in_code = False  # an unfinished code block: drawn plain, highlighted once it is complete
        self.tail: TailBuffer | None = None
        self._cache: tuple[str, int, list[list[Segment]]] | None = None

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
            lines, before = self.tail.lines(min(self.output_lines, room))
            if lines:
                yield Text("\n".join(lines), style="dim", no_wrap=True, overflow="ellipsis")
            more = f" · {before:,} more lines above" if before else ""
            yield Text(f"{frame} running {elapsed:.1f}s{more}  (Ctrl-C stops it)", style="cyan")
        footer = self.footer()
        if footer:
            yield Text(footer, style="dim", no_wrap=True, overflow="ellipsis")

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


def _last_lines(console: Console, options: ConsoleOptions, text: Text, room: int) -> RenderResult:
    """The last `room` lines of `text` as drawn (the region must never be taller than the screen)."""
    for line in console.render_lines(text, options.update(height=None), pad=False)[-room:]:
        yield from line
        yield Segment.line()


class LiveRegion:
    """The rich `Live` for one region at a time, redrawn `per_second` times a second by a ticker
    that holds `lock`; whoever prints to the console holds `lock` too."""

    def __init__(self, console: Console, view: LiveView, per_second: float, lock: threading.RLock) -> None:
        self.console = console
        self.view = view
        self.per_second = max(0.5, per_second)
        self.lock = lock
        self._live: Live | None = None
        self._stopped = threading.Event()

    @property
    def active(self) -> bool:
        return self._live is not None

    def start(self) -> None:
        """Show the region (first drawn at the next tick, so a call that ends at once never flashes)."""
        with self.lock:
            if self._live is not None:
                return
            self._live = Live(self.view, console=self.console, auto_refresh=False, transient=True)
            self._live.start()
            self._stopped = threading.Event()
            ticker = threading.Thread(target=self._tick, args=(self._live, self._stopped), daemon=True)
            ticker.start()

    def stop(self) -> None:
        """Erase the region; what was printed above it stays."""
        with self.lock:
            if self._live is None:
                return
            live, self._live = self._live, None
            self._stopped.set()
            live.stop()

    def _tick(self, live: Live, stopped: threading.Event) -> None:
        while not stopped.wait(1 / self.per_second):
            with self.lock:
                if stopped.is_set() or self._live is not live:
                    return
                live.refresh()
