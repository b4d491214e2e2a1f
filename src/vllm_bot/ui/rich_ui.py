"""The terminal front end: rich rendering of the loop's events (with live_view.py, the only modules
that import rich). Finished Markdown blocks, tool calls and results are printed once, for good, above
one live region (live_view.py), so redrawing stays cheap on long replies. Events are handled, and
everything is printed, under one lock the redraws take too: a redraw never interleaves with a print.
Keys typed while a task runs: typeahead.py."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

from ..agent.planning import PlanChoice
from ..calls import ToolCall, ToolResult
from ..config import UiConfig
from ..doctor.report import wrap_hanging
from ..events import (
    Event,
    FirstToken,
    ModeChanged,
    ModeSwitched,
    Notice,
    PlanUpdated,
    ReasoningDelta,
    RequestStarted,
    SubagentEvent,
    TaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFinished,
)
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from . import rich_blocks
from .banner import BannerInfo
from .display import (
    MarkdownStream,
    TailBuffer,
    call_title,
    diff_lines,
    fold_head,
    output_rows,
    printable_markdown,
    result_body,
    result_lines,
    safe_text,
    shown_output,
    split_diff,
)
from .keys import terminal_key_reader
from .live_view import LiveRegion, LiveView
from .recap import RecapPart
from .status import StatusLine
from .typeahead import TypeAhead

DIFF_STYLES = {"add": "green", "remove": "red", "hunk": "cyan", "header": "bold", "note": "dim"}
WRITE_PREVIEW_LINES = 12
DIFF_LINES = 40
RESULT_LINES = 8
NOTICE_STYLES = {"info": "cyan", "warning": "yellow", "error": "bold red"}


class RichUI:
    """Consumer of loop events for an interactive terminal; also the approval prompt and `say`."""

    def __init__(
        self,
        config: UiConfig,
        *,
        console: Console | None = None,
        ask: Callable[[str], str] | None = None,
        status: StatusLine | None = None,
        read_key: Callable[[], str] | None = None,
    ) -> None:
        self.config = config
        self.console = console or Console(highlight=False)
        self.show_reasoning = config.show_reasoning
        self.status = status or StatusLine()
        self.ask = ask or _ask_line
        self.read_key = read_key if read_key is not None or ask is not None else terminal_key_reader()
        self.lock = threading.RLock()  # events, prints and redraws: one at a time
        self._view = LiveView(lambda: self.show_reasoning, self.status.footer)
        self._view.output_lines = config.output_lines
        self._region = LiveRegion(self.console, self._view, config.refresh_per_second, self.lock)
        self.typing: TypeAhead | None = None  # keys typed while a task runs (a terminal's)
        if read_key is None and ask is None and sys.stdin.isatty():
            self.typing = self._view.typing = TypeAhead(
                sys.stdin.fileno(), self.lock, self._region.refresh, self.expand
            )
        self._folded: tuple[str, str] | None = None  # the last output shown folded: (title, all of it)
        self._markdown = MarkdownStream()
        self._started: dict[str, ToolCall] = {}
        self.tasks: list[dict[str, str]] = []  # the model's task list, shown above the input
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
            PlanUpdated: self._plan_updated,
            ModeChanged: lambda e: self.say(f"Approval mode: {e.mode}."),
            SubagentEvent: self._subagent,
        }

    def __call__(self, event: Event) -> None:
        with self.lock:
            self.status(event)
            handler = self._handlers.get(type(event))
            if handler is not None:
                handler(event)

    def _print(self, *objects: RenderableType, **options: Any) -> None:
        with self.lock:
            self.console.print(*objects, **options)

    # -- the live region ------------------------------------------------------------------------

    def _start_live(self, phase: str, label: str = "") -> None:
        with self.lock:
            view = self._view
            view.phase, view.label, view.started = phase, label, time.monotonic()
            self._region.start()

    def stop_live(self) -> None:
        """End the live region (before printing a prompt, or when a task ends)."""
        with self.lock:
            self._region.stop()
            self._view.phase = "idle"

    # -- the model's reply ----------------------------------------------------------------------

    def _request(self, event: RequestStarted) -> None:
        self._end_reply()
        self._view.reasoning, self._view.reasoning_chars, self._view.reasoning_tail = [], 0, ""
        label = "Compacting the conversation" if event.mode == "summary" else "Waiting for the model"
        if event.attempt > 1:
            label += f" (attempt {event.attempt})"
        self._start_live("wait", label)

    def _first_token(self, event: FirstToken) -> None:
        if self._view.phase == "wait":  # a reply of only tool calls streams nothing else to show
            self._view.label = "Receiving the reply"

    def _reasoning_delta(self, event: ReasoningDelta) -> None:
        self._view.add_reasoning(event.text)

    def _end_reasoning(self) -> None:
        thought = self._view.take_reasoning()
        if thought is None:
            return
        text, seconds = thought
        if self.show_reasoning and text:
            self._print(Text(safe_text(text), style="dim italic"))
        words = len(text.split())
        hint = "" if self.show_reasoning else "  (/reasoning on shows it)"
        self._print(Text(f"✻ Thought for {seconds:.1f}s, {words:,} words{hint}", style="dim"))

    def _text(self, event: TextDelta) -> None:
        if self._view.phase != "text":
            self._end_reasoning()
            self._start_live("text")
        self._markdown.feed(event.text)
        done = self._markdown.take_done()
        if done.strip():
            self._print(Markdown(done))
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
            self._print(Markdown(rest))

    # -- tool calls -----------------------------------------------------------------------------

    def _call_started(self, event: ToolCallStarted) -> None:
        self._end_reply()
        call = event.call
        self._started[call.id] = call
        self._print(Text("● ", style="bold magenta") + Text(call_title(call), style="bold"))
        if call.name == "write" and isinstance(call.arguments.get("content"), str):
            self._write_preview(str(call.arguments.get("path", "")), call.arguments["content"])
        if call.name not in ("read", "write", "edit"):  # exec and MCP tools: live output / progress
            self._view.tail = TailBuffer()
            self._start_live("exec")

    def _write_preview(self, path: str, content: str) -> None:
        lines, more = fold_head(content.splitlines(), WRITE_PREVIEW_LINES)
        lexer = Syntax.guess_lexer(path, code="\n".join(lines))
        self._print(Syntax(safe_text("\n".join(lines)), lexer, line_numbers=True, word_wrap=False))
        if more:
            self._folded = (f"Write {path}", content)
            self._print(Text(f"  … {more:,} more lines (Ctrl-O or /expand shows all)", style="dim"))

    def _output(self, event: ToolOutput) -> None:
        if self._view.phase == "exec" and self._view.tail is not None:
            self._view.tail.feed(event.text)

    def _call_finished(self, event: ToolCallFinished) -> None:
        tail = self._view.tail if self._view.phase == "exec" else None
        self.stop_live()
        self._view.tail = None
        call, result = event.call, event.result
        if self._started.pop(call.id, None) is None:  # refused: never started
            self._print(Text("○ ", style="yellow") + Text(call_title(call), style="dim"))
            self._result_line(result.as_text(), "yellow", lines=3)
        elif call.name == "exec":
            self._exec_result(call, result, tail)
        elif call.name == "edit" and not result.is_error:
            summary, diff = split_diff(result.as_text())
            self._result_line(summary, "green")
            self._print_diff(diff, call_title(call))
        else:
            lines = 1 if call.name == "read" and not result.is_error else RESULT_LINES
            if len(result.as_text().strip().splitlines()) > lines:
                self._folded = (call_title(call), result.as_text())
            style = "red" if result.is_error else "green"
            self._result_line(result.as_text(), style, lines=lines, count_more=lines > 1)

    def _exec_result(self, call: ToolCall, result: ToolResult, tail: TailBuffer | None) -> None:
        status, body = result_body(result)
        rows, note = output_rows(tail, body, self.console.width - 2, self.config.output_lines)
        style = "yellow" if status.startswith("Interrupted") else "red" if result.is_error else "green"
        so_far = status.endswith(":")  # killed or timed out: "... Output so far:", then the output
        if so_far:
            self._result_line(status, style, keep_colon=True)
        if note:
            self._folded = (call_title(call), shown_output(body))
            self._print(Text("  " + note, style="dim"))
        if rows:
            self._print(Text("\n".join("  " + row for row in rows), style="dim", no_wrap=True))
        elif so_far:
            self._print(Text("    (no output)", style="dim"))
        if not so_far:
            self._result_line(status, style)

    def _result_line(
        self, text: str, style: str, lines: int = 1, count_more: bool = True, keep_colon: bool = False
    ) -> None:
        shown, more = result_lines(text, lines, self.console.width, keep_colon)
        line = Text("  ⎿ ", style="dim") + Text("\n    ".join(shown), style=style)
        if more and count_more:
            line.append(f"  (+{more:,} lines)", style="dim")
        self._print(line)

    def _print_diff(self, diff: str, title: str = "") -> None:
        """The diff's first lines; one with a `title` (not the approval's) can be opened in full."""
        shown, more = fold_head(diff_lines(diff), DIFF_LINES)
        text = Text()
        for item in shown:
            text.append("    " + item.text + "\n", style=DIFF_STYLES.get(item.kind, ""))
        if more:
            self._folded = (title, diff) if title else self._folded
            opens = " (Ctrl-O or /expand shows all)" if title else ""
            text.append(f"    … {more:,} more diff lines{opens}\n", style="dim")
        self._print(text, end="")

    # -- folded output, opened ------------------------------------------------------------------

    def expand(self) -> None:
        """Print the last output shown folded, all of it (Ctrl-O, /expand)."""
        with self.lock:
            if self._folded is None:
                self._print(Text("Nothing folded to open yet.", style="dim"))
                return
            title, text = self._folded
            self._print(Text("● ", style="bold magenta") + Text(title, style="bold") + Text("  (in full)"))
            self._print(Text(safe_text(text.strip("\n")), style="dim"))

    # -- notices, end of task -------------------------------------------------------------------

    def _notice(self, event: Notice) -> None:
        self._end_reply()
        style = NOTICE_STYLES.get(event.level, "")
        self._print(Text(f"{event.level}: ", style=style) + Text(safe_text(event.message)))

    def _mode_switched(self, event: ModeSwitched) -> None:
        state = "on" if event.function_calling else "off: using the text tool protocol"
        self._notice(Notice("warning", f"function calling {state} ({event.reason})"))
        if event.hint:
            self._print(Text(event.hint, style="dim"))

    def _plan_updated(self, event: PlanUpdated) -> None:
        self._end_reply()
        self.tasks = event.steps
        rich_blocks.task_list(self, event.steps)

    def _subagent(self, event: SubagentEvent) -> None:
        """A sub-agent's calls, one line each, folded under its delegate call."""
        inner = event.event
        if isinstance(inner, ToolCallStarted):
            self._print(Text("    ↳ " + call_title(inner.call), style="dim"))
        elif isinstance(inner, TaskFinished):
            self._print(
                Text(f"    ↳ sub-agent {inner.reason} after {inner.iterations} requests", style="dim")
            )

    def _task_finished(self, event: TaskFinished) -> None:
        self._end_reply()
        self._started.clear()
        if event.reason == "interrupted":
            self._print(Text("Interrupted. The session goes on; type a new message.", style="yellow"))
        if self.status.last:
            self._print(Text(self.status.last, style="dim"), justify="right")

    # -- the front-end interface the session uses -----------------------------------------------

    def banner(self, info: BannerInfo) -> None:
        rich_blocks.banner(self, info)

    def say(self, text: str) -> None:
        """A line for the user; a long one wraps under its last column (a doctor row's detail)."""
        self.stop_live()
        self._print(Text(wrap_hanging(text, self.console.width)))

    def error(self, text: str) -> None:
        self.stop_live()
        self._print(Text(text, style="bold red"))

    def recap(self, parts: list[RecapPart]) -> None:
        """Where a resumed conversation left off, its answers rendered as Markdown."""
        for part in parts:
            if part.markdown:
                self._print(Padding(Markdown(printable_markdown(part.text)), (0, 0, 0, 2)))
            else:
                self.say(part.text)

    def working(self) -> contextlib.AbstractContextManager[TypeAhead | None]:
        """While a task runs: keys typed show under the live region and queue, Esc stops the task."""
        return self.typing.reading() if self.typing is not None else contextlib.nullcontext()

    def confirm(
        self, call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None = None
    ) -> Answer:
        """The approval prompt: exactly what will run, then a menu answered by one key (yes / always /
        no and what to do instead; Esc: no), or a typed answer when keys cannot be read. Keys typed
        ahead wait meanwhile: the menu reads its own."""
        with self.typing.paused() if self.typing is not None else contextlib.nullcontext():
            return rich_blocks.confirm(self, call, preview, reason, scope)

    def choose_plan(self, plan: str) -> PlanChoice:
        """Plan mode's question (rich_blocks.py)."""
        with self.typing.paused() if self.typing is not None else contextlib.nullcontext():
            return rich_blocks.choose_plan(self, plan)

    def debug_stream(self) -> RichUI:
        """The DEBUG log's stream: this UI, whose `write` prints lines dimmed through the console."""
        return self

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self._print(Text(line, style="dim"))
        return len(text)

    def flush(self) -> None:
        pass


def _ask_line(question: str) -> str:
    from prompt_toolkit import prompt

    return prompt(question)
