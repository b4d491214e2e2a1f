"""The terminal front end: rich rendering of the loop's events (the only module that imports rich).

One live region at a time, redrawn at most `ui.refresh_per_second` times a second: a spinner with the
elapsed time while the model prefills, the reasoning (dimmed) or its word count, the unfinished tail
of the Markdown reply, or the tail of a running command's output. Finished Markdown blocks, tool
calls and results are printed above it once, for good, so redrawing stays cheap on long replies.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ..calls import ToolCall, ToolResult
from ..config import UiConfig
from ..events import (
    Event,
    FirstToken,
    ModeSwitched,
    Notice,
    ReasoningDelta,
    RequestStarted,
    TaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFinished,
)
from ..safety.approval import Answer
from ..safety.policy import GrantScope
from .approval_prompt import QUESTION, approval_view, parse_answer
from .banner import BannerInfo
from .display import (
    FENCE,
    MarkdownStream,
    TailBuffer,
    call_title,
    diff_lines,
    fold_head,
    fold_tail,
    result_body,
    safe_text,
    shown_output,
    split_diff,
)
from .status import StatusLine

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
DIFF_STYLES = {"add": "green", "remove": "red", "hunk": "cyan", "header": "bold", "note": "dim"}
WRITE_PREVIEW_LINES = 12
DIFF_LINES = 40
RESULT_LINES = 8
NOTICE_STYLES = {"info": "cyan", "warning": "yellow", "error": "bold red"}


class _LiveView:
    """The redrawn region. Read by rich's refresh thread; written by the session thread."""

    def __init__(self, ui: RichUI) -> None:
        self.ui = ui
        self.phase = "idle"  # wait | think | text | exec
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
        room = max(3, console.size.height - 4)
        if self.phase in ("wait", "think"):
            if self.phase == "think" and self.ui.show_reasoning:
                yield Text(self.reasoning_tail[-600:].lstrip(), style="dim italic")
            line = Text(f"{frame} {self.label} {elapsed:.1f}s", style="cyan")
            if self.reasoning_chars:
                line.append(f"  · reasoning, {self.reasoning_chars:,} characters", style="dim")
            yield line
        elif self.phase == "text":
            yield from self._markdown(console, options, room)
            yield Text(f"{frame} {elapsed:.1f}s", style="dim cyan")
        elif self.phase == "exec" and self.tail is not None:
            lines, before = self.tail.lines(min(self.ui.config.output_lines, room))
            if lines:
                yield Text("\n".join(lines), style="dim", no_wrap=True, overflow="ellipsis")
            more = f" · {before:,} more lines above" if before else ""
            yield Text(f"{frame} running {elapsed:.1f}s{more}  (Ctrl-C stops it)", style="cyan")

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


class RichUI:
    """Consumer of loop events for an interactive terminal; also the approval prompt and `say`."""

    def __init__(
        self,
        config: UiConfig,
        *,
        console: Console | None = None,
        ask: Callable[[str], str] | None = None,
        status: StatusLine | None = None,
    ) -> None:
        self.config = config
        self.console = console or Console(highlight=False)
        self.show_reasoning = config.show_reasoning
        self.status = status or StatusLine()
        self.ask = ask or _ask_line
        self._view = _LiveView(self)
        self._live: Live | None = None
        self._markdown = MarkdownStream()
        self._reasoning: list[str] = []
        self._thinking_since: float | None = None
        self._started: dict[str, ToolCall] = {}
        self._handlers: dict[type, Callable[[Any], None]] = {
            RequestStarted: self._request,
            FirstToken: self._first_token,
            ReasoningDelta: self._reasoning_delta,
            TextDelta: self._text,
            TurnFinished: self._turn_finished,
            ToolCallStarted: self._call_started,
            ToolOutput: self._output,
            ToolCallFinished: self._call_finished,
            Notice: self._notice,
            ModeSwitched: self._mode_switched,
            TaskFinished: self._task_finished,
        }

    def __call__(self, event: Event) -> None:
        self.status(event)
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    # -- the live region ------------------------------------------------------------------------

    def _start_live(self, phase: str, label: str = "") -> None:
        view = self._view
        view.phase, view.label, view.started = phase, label, time.monotonic()
        if self._live is None:
            self._live = Live(
                view,
                console=self.console,
                refresh_per_second=max(0.5, self.config.refresh_per_second),
                transient=True,
            )
            self._live.start()

    def stop_live(self) -> None:
        """End the live region (before printing a prompt, or when a task ends)."""
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()
        self._view.phase = "idle"

    # -- the model's reply ----------------------------------------------------------------------

    def _request(self, event: RequestStarted) -> None:
        self._end_reply()
        self._reasoning, self._view.reasoning_chars, self._view.reasoning_tail = [], 0, ""
        label = "Compacting the conversation" if event.mode == "summary" else "Waiting for the model"
        if event.attempt > 1:
            label += f" (attempt {event.attempt})"
        self._start_live("wait", label)

    def _first_token(self, event: FirstToken) -> None:
        if self._view.phase == "wait":  # a reply of only tool calls streams nothing else to show
            self._view.label = "Receiving the reply"

    def _reasoning_delta(self, event: ReasoningDelta) -> None:
        if self._thinking_since is None:
            self._thinking_since = time.monotonic()
            self._view.phase, self._view.label = "think", "Thinking"
        self._reasoning.append(event.text)
        self._view.reasoning_chars += len(event.text)
        self._view.reasoning_tail = (self._view.reasoning_tail + event.text)[-2000:]

    def _end_reasoning(self) -> None:
        if self._thinking_since is None:
            return
        seconds = time.monotonic() - self._thinking_since
        self._thinking_since = None
        text = "".join(self._reasoning).strip()
        if self.show_reasoning and text:
            self.console.print(Text(safe_text(text), style="dim italic"))
        words = len(text.split())
        hint = "" if self.show_reasoning else "  (/reasoning on shows it)"
        self.console.print(Text(f"✻ Thought for {seconds:.1f}s, {words:,} words{hint}", style="dim"))

    def _text(self, event: TextDelta) -> None:
        if self._view.phase != "text":
            self._end_reasoning()
            self._start_live("text")
        self._markdown.feed(event.text)
        done = self._markdown.take_done()
        if done.strip():
            self.console.print(Markdown(done))
        self._view.in_code = self._markdown.in_fence
        self._view.markdown_tail = self._markdown.live_window(max(3, self.console.size.height - 4))

    def _turn_finished(self, event: TurnFinished) -> None:
        self._end_reply()

    def _end_reply(self) -> None:
        self._end_reasoning()
        rest = self._markdown.flush()
        self._view.markdown_tail = ""
        self.stop_live()
        if rest.strip():
            self.console.print(Markdown(rest))

    # -- tool calls -----------------------------------------------------------------------------

    def _call_started(self, event: ToolCallStarted) -> None:
        self._end_reply()
        call = event.call
        self._started[call.id] = call
        self.console.print(Text("● ", style="bold magenta") + Text(call_title(call), style="bold"))
        if call.name == "write" and isinstance(call.arguments.get("content"), str):
            self._write_preview(str(call.arguments.get("path", "")), call.arguments["content"])
        if call.name not in ("read", "write", "edit"):  # exec and MCP tools: live output / progress
            self._view.tail = TailBuffer()
            self._start_live("exec")

    def _write_preview(self, path: str, content: str) -> None:
        lines, more = fold_head(content.splitlines(), WRITE_PREVIEW_LINES)
        lexer = Syntax.guess_lexer(path, code="\n".join(lines))
        self.console.print(Syntax(safe_text("\n".join(lines)), lexer, line_numbers=True, word_wrap=False))
        if more:
            self.console.print(Text(f"  … {more:,} more lines", style="dim"))

    def _output(self, event: ToolOutput) -> None:
        if self._view.phase == "exec" and self._view.tail is not None:
            self._view.tail.feed(event.text)

    def _call_finished(self, event: ToolCallFinished) -> None:
        tail = self._view.tail if self._view.phase == "exec" else None
        self.stop_live()
        self._view.tail = None
        call, result = event.call, event.result
        if self._started.pop(call.id, None) is None:
            self._refused(call, result)
        elif call.name == "exec":
            self._exec_result(result, tail)
        elif call.name == "edit" and not result.is_error:
            summary, diff = split_diff(result.as_text())
            self._result_line(summary, "green")
            self._print_diff(diff)
        else:
            self._generic_result(result, 1 if call.name == "read" and not result.is_error else RESULT_LINES)

    def _generic_result(self, result: ToolResult, lines: int) -> None:
        style = "red" if result.is_error else "green"
        self._result_line(result.as_text(), style, lines=lines, count_more=lines > 1)

    def _refused(self, call: ToolCall, result: ToolResult) -> None:
        self.console.print(Text("○ ", style="yellow") + Text(call_title(call), style="dim"))
        self._result_line(result.as_text(), "yellow", lines=3)

    def _exec_result(self, result: ToolResult, tail: TailBuffer | None) -> None:
        status, body = result_body(result)
        if tail is not None and tail.total_chars:
            lines, before = tail.lines(self.config.output_lines)
        else:
            lines, before = fold_tail(shown_output(body).splitlines(), self.config.output_lines)
        if before:
            self.console.print(Text(f"  … {before:,} earlier lines", style="dim"))
        if lines:
            self.console.print(Text("\n".join("  " + ln for ln in lines), style="dim", no_wrap=True))
        interrupted = status.startswith("Interrupted")
        style = "yellow" if interrupted else "red" if result.is_error else "green"
        self._result_line(status, style)

    def _result_line(self, text: str, style: str, lines: int = 1, count_more: bool = True) -> None:
        shown, more = fold_head([ln for ln in safe_text(text.strip()).splitlines() if ln.strip()], lines)
        body = "\n    ".join(ln.removesuffix(":") if i == 0 else ln for i, ln in enumerate(shown))
        line = Text("  ⎿ ", style="dim") + Text(body, style=style)
        if more and count_more:
            line.append(f"  (+{more:,} lines)", style="dim")
        self.console.print(line)

    def _print_diff(self, diff: str) -> None:
        shown, more = fold_head(diff_lines(diff), DIFF_LINES)
        text = Text()
        for item in shown:
            text.append("    " + item.text + "\n", style=DIFF_STYLES.get(item.kind, ""))
        if more:
            text.append(f"    … {more:,} more diff lines\n", style="dim")
        self.console.print(text, end="")

    # -- notices, end of task -------------------------------------------------------------------

    def _notice(self, event: Notice) -> None:
        self._end_reply()
        style = NOTICE_STYLES.get(event.level, "")
        self.console.print(Text(f"{event.level}: ", style=style) + Text(safe_text(event.message)))

    def _mode_switched(self, event: ModeSwitched) -> None:
        state = "on" if event.function_calling else "off: using the text tool protocol"
        self._notice(Notice("warning", f"function calling {state} ({event.reason})"))
        if event.hint:
            self.console.print(Text(event.hint, style="dim"))

    def _task_finished(self, event: TaskFinished) -> None:
        self._end_reply()
        self._started.clear()
        if event.reason == "interrupted":
            self.console.print(Text("Interrupted. The session goes on; type a new message.", style="yellow"))
        if self.status.last:
            self.console.print(Text(self.status.last, style="dim"), justify="right")

    # -- the front-end interface the session uses -----------------------------------------------

    def banner(self, info: BannerInfo) -> None:
        title = Text("vLLM Bot", style="bold cyan")
        if info.label:
            title += Text("  ") + Text(f" {info.label} ", style="bold reverse yellow")
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim")
        grid.add_column()
        for label, value in info.rows():
            grid.add_row(label, Text(value))
        self.console.print(Group(title, grid))
        hint = "Enter sends · Alt+Enter or Esc Enter: new line · @ completes paths · /help · Ctrl-C stops"
        self.console.print(Text(hint, style="dim"))

    def say(self, text: str) -> None:
        self.stop_live()
        self.console.print(Text(text))

    def error(self, text: str) -> None:
        self.stop_live()
        self.console.print(Text(text, style="bold red"))

    def confirm(
        self, call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None = None
    ) -> Answer:
        """The approval prompt: exactly what will run, then yes / no (+ a sentence) / always."""
        self._end_reply()
        view = approval_view(call, preview, reason, scope)
        self.console.print(Text("? ", style="bold yellow") + Text(view.title, style="bold"))
        self.console.print(Text(f"  ({view.reason})", style="dim"))
        if view.command is not None:
            self.console.print(Text("  $ ", style="dim") + Text(view.command, style="bold"))
        if view.summary:
            self.console.print(Text("  " + view.summary))
        if view.diff:
            self._print_diff(view.diff)
        if view.text:
            self.console.print(Text(view.text, style="dim"))
        if view.always_note:
            self.console.print(Text("  " + view.always_note, style="dim"))
        while True:
            try:
                answer = parse_answer(self.ask(QUESTION))
            except EOFError:
                return Answer(False)
            if answer is not None:
                return answer

    def debug_stream(self) -> _ConsoleLines:
        return _ConsoleLines(self)


class _ConsoleLines:
    """A write()-able stream whose lines are printed dimmed through the console (the DEBUG log)."""

    def __init__(self, ui: RichUI) -> None:
        self.ui = ui

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self.ui.console.print(Text(line, style="dim"))
        return len(text)

    def flush(self) -> None:
        pass


def _ask_line(question: str) -> str:
    from prompt_toolkit import prompt

    return prompt(question)
