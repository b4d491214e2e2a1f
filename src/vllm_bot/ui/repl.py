"""The interactive session: read a message, a slash command or a `!command`, run it, repeat.

In a terminal the input is prompt_toolkit: history per workspace (.vllm-bot/history), Enter sends,
Ctrl-J, Alt+Enter / Esc Enter (or a trailing backslash) starts a new line, a paste stays one message,
Tab completes /commands and @paths, Ctrl-O opens the last folded output. Ctrl-C clears the line; at
an empty prompt it asks to be pressed again to exit; Ctrl-D exits. Messages typed while a task runs
are sent after it (typeahead.py). Without a terminal, lines are read from stdin one message each.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import prompts
from ..agent.interrupts import close_open_calls
from ..calls import ToolCall, new_call_id
from ..errors import EXIT_OK, UserFacingError
from ..events import ToolCallFinished, ToolCallStarted, ToolOutput
from ..tools.listing import SKIP_DIRS
from . import is_terminal
from .banner import menu_rows
from .plan_prompt import task_lines
from .recap import come_back_hint, recap
from .slash.core import ExitSession
from .slash.registry import SlashCommand, StartTask, UnknownCommand, dispatch, load_all
from .typeahead import keeping_terminal

PROMPT = "> "
PLAN_TOOLBAR = " plan mode: nothing changes until you approve a plan (Shift-Tab: next mode)"
EXIT_HINT = "(press Ctrl-C again to exit, or Ctrl-D; /exit also works)"
MAX_PATH_COMPLETIONS = 200
_COMMAND_LINE = re.compile(r"/[a-z][\w-]*(\s|$)")
_CHOICES = re.compile(r"^\[?([\w-]+(?:\|[\w-]+)+)\]?$")


def is_command(text: str) -> bool:
    """`/help`, `/model name`: a command. `/etc/hosts is broken`: a message."""
    return _COMMAND_LINE.match(text) is not None


def expand_command(line: str, commands: dict[str, SlashCommand]) -> str:
    """`/tok` -> `/tokens` when exactly one command starts that way (else the line unchanged)."""
    name, space, rest = line[1:].partition(" ")
    if name in commands:
        return line
    matches = [c for c in commands if c.startswith(name)]
    return f"/{matches[0]}{space}{rest}" if len(matches) == 1 else line


def path_completions(workspace: Path, partial: str, limit: int = MAX_PATH_COMPLETIONS) -> list[str]:
    """Paths inside `workspace` that start with `partial` (directories end with '/')."""
    folder, _, prefix = partial.rpartition("/")
    base = (workspace / folder).resolve() if folder else workspace.resolve()
    try:
        base.relative_to(workspace.resolve())
        entries = sorted(os.scandir(base), key=lambda e: (not e.is_dir(), e.name))
    except (ValueError, OSError):
        return []
    out: list[str] = []
    for entry in entries:
        if not entry.name.startswith(prefix) or entry.name in SKIP_DIRS:
            continue
        if entry.name.startswith(".") and not prefix.startswith("."):
            continue
        shown = (folder + "/" if folder else "") + entry.name
        out.append(shown + "/" if entry.is_dir() else shown)
        if len(out) >= limit:
            break
    return out


def command_completions(text: str, commands: dict[str, SlashCommand]) -> Iterator[tuple[str, str, str]]:
    """(replacement, what it replaces, help) for a line that is a command being typed."""
    name, space, arg = text[1:].partition(" ")
    if not space:
        for cmd in sorted(commands.values(), key=lambda c: c.name):
            if cmd.name.startswith(name):
                yield "/" + cmd.name, text, cmd.help
        return
    found = commands.get(name)
    match = _CHOICES.match(found.usage) if found else None
    if match and " " not in arg:
        for choice in match.group(1).split("|"):
            if choice.startswith(arg):
                yield choice, arg, ""


def _completer(workspace: Path) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class InputCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
            text = document.text_before_cursor
            if text.startswith("/") and "\n" not in text:
                for new, old, meta in command_completions(text, load_all()):
                    yield Completion(new, start_position=-len(old), display_meta=meta)
                return
            word = document.get_word_before_cursor(WORD=True)
            if word.startswith("@"):
                for path in path_completions(workspace, word[1:]):
                    yield Completion(path, start_position=-(len(word) - 1))

    return InputCompleter()


class PromptReader:
    """prompt_toolkit input for a terminal; `expand` is what Ctrl-O runs and `cycle` what Shift-Tab
    runs (above the prompt); `tasks` and `mode` say what shows above and below the input."""

    def __init__(
        self,
        history: Path,
        workspace: Path,
        expand: Callable[[], None] = lambda: None,
        cycle: Callable[[], object] = lambda: None,
        tasks: Callable[[], list[str]] = list,
        mode: Callable[[], str] = lambda: "",
    ) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        if not history.exists():
            history.touch(mode=0o600)  # what people type can be private
        self.tasks = tasks

        self.prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            completer=_completer(workspace),
            key_bindings=_key_bindings(expand, cycle),
            bottom_toolbar=lambda: (
                " plan mode: nothing changes until you approve a plan (Shift-Tab: next mode)"
                if mode() == "plan"
                else None
            ),
            multiline=True,
            complete_while_typing=True,
            prompt_continuation=lambda width, line_number, soft_wrap: ". ".rjust(width),
        )

    def read(self, default: str = "") -> str:
        """One message; `default` is already typed (what was typed while the last task ran)."""
        rows = self.prompt.output.get_size().rows
        above = "".join(line + "\n" for line in self.tasks())  # the task list, while steps are open
        return self.prompt.prompt(above + PROMPT, default=default, reserve_space_for_menu=menu_rows(rows))


def _key_bindings(expand: Callable[[], None], cycle: Callable[[], object] = lambda: None) -> Any:
    from prompt_toolkit.application import run_in_terminal
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @kb.add("enter")
    def _submit(event: Any) -> None:
        buf = event.current_buffer
        if buf.complete_state is not None and buf.document.get_word_before_cursor(WORD=True).startswith("@"):
            buf.complete_state = None  # Enter picks the path; the message goes on
        elif buf.document.text_before_cursor.endswith("\\"):
            buf.delete_before_cursor()
            buf.insert_text("\n")
        else:
            buf.validate_and_handle()

    @kb.add("escape", "enter")
    @kb.add("c-j")  # prompt_toolkit's own Ctrl-J sends, as Enter does
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-o")
    def _expand(event: Any) -> None:
        run_in_terminal(expand)

    @kb.add("s-tab")
    def _cycle(event: Any) -> None:
        run_in_terminal(cycle)  # ask → auto-edit → full-auto → plan, said above the prompt

    @kb.add("c-c")
    def _interrupt(event: Any) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return kb


class LineReader:
    """One message per line from a stdin that is not a terminal."""

    def read(self, default: str = "") -> str:
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")


class Repl:
    def __init__(self, session: Any, reader: Any) -> None:
        self.session = session
        self.front = session.front
        self.reader = reader
        self._exit_armed = False
        self.queued: list[str] = []  # messages typed while a task ran, sent one by one
        self.draft = ""  # typed while a task ran, not sent: the next prompt starts with it

    def run(self) -> int:
        self.session.start(offline_ok=True)  # a server that is down: the session opens anyway
        self.front.banner(self.session.banner_info())
        self.front.recap(recap(self.session.agent.conversation.entries))  # --continue / --resume
        while True:
            try:
                text = self._read()
                if text is None or not text.strip():
                    continue
                if is_command(text.strip()):
                    self.command(text.strip())
                elif text.strip().startswith("!"):
                    self.shell(text.strip()[1:].strip())
                else:
                    self.task(text)
            except (EOFError, ExitSession):
                if self.session.agent.conversation.entries:
                    self.front.say(come_back_hint(self.session.workspace, config=self.session.config))
                return EXIT_OK
            except KeyboardInterrupt:  # Ctrl-C between a task's end and the prompt: not an exit
                close_open_calls(self.session.agent.conversation)
                self.front.stop_live()

    def _read(self) -> str | None:
        if self.queued:  # typed while the last task ran: shown as if typed at the prompt
            text = self.queued.pop(0)
            self.front.say("> " + text.replace("\n", "\n. "))
            return text
        try:
            self.session.mcp.sync()
            draft, self.draft = self.draft, ""
            text = self.reader.read(draft) if draft else self.reader.read()
        except KeyboardInterrupt:
            if self._exit_armed:
                raise ExitSession() from None
            self._exit_armed = True
            self.front.say(EXIT_HINT)
            return None
        self._exit_armed = False
        return text

    def command(self, line: str) -> None:
        try:
            dispatch(self.session, expand_command(line, load_all()))
        except StartTask as e:  # an MCP prompt or /init: its text is the user's next message
            self.task(e.text)
        except UnknownCommand as e:
            self.front.say(str(e))
        except UserFacingError as e:
            self.front.error(str(e))
        except KeyboardInterrupt:
            self.front.stop_live()
            self.front.say("Interrupted.")

    def task(self, text: str) -> None:
        """Run one message; Ctrl-C, Esc or a server failure returns to the prompt with the session intact."""
        agent = self.session.agent
        finished = False
        with self.front.working() as typing:
            self._still_typed(typing)
            try:
                self.session.reconnect()  # after an offline start: try the server again
                self.session.mcp.sync(wait=True)
                self.session.refresh_instructions()
                text = self.session.task_message(text)
                with agent.cancel.sigint():
                    finished = agent.run(text).reason != "interrupted"
            except KeyboardInterrupt:
                close_open_calls(agent.conversation)
                self.front.say("Interrupted.")  # say() ends the live view itself
            except UserFacingError as e:
                close_open_calls(agent.conversation)
                self.front.error(str(e))
            finally:
                self.front.stop_live()
        self._typed_ahead(typing, finished)

    def shell(self, command: str) -> None:
        """`!command`: the user's own command, run as the model's are (in the sandbox unless it is off)
        but never asked about: the user typed it. It and its output go to the model with the next
        message."""
        if not command:
            self.front.say("Type a command after the !, e.g. !git status")
            return
        agent, call = self.session.agent, ToolCall(new_call_id(), "exec", {"command": command})
        self.front(ToolCallStarted(call))
        started, result = time.monotonic(), None
        with self.front.working() as typing:
            self._still_typed(typing)
            try:
                agent.cancel.reset()
                with agent.cancel.sigint(), agent.cancel.tool():
                    result = self.session.executor.execute_call(
                        call,
                        on_output=lambda text: self.front(ToolOutput(call.id, text)),
                        cancel=agent.cancel.event,
                    )
            except KeyboardInterrupt:  # a second Ctrl-C: the command is killed all the same
                self.front.say("Interrupted.")
            finally:
                self.front.stop_live()
        if result is not None:
            self.front(ToolCallFinished(call, result, time.monotonic() - started))
            note = prompts.message("note", file="shell.yaml", command=command, result=result.as_text())
            agent.conversation.add_user(note, kind="note")
        self._typed_ahead(typing, finished=result is not None and not agent.cancel.requested)

    def _still_typed(self, typing: Any) -> None:
        """What waits from an earlier task (more queued messages, an unfinished line) is shown and
        edited with what is typed during this one."""
        if typing is not None:
            typing.give(self.queued, self.draft)
            self.queued, self.draft = [], ""

    def _typed_ahead(self, typing: Any, finished: bool) -> None:
        """Messages queued while a task ran are sent next, in order; after an interrupt or a failure
        they wait in the input instead (with the unfinished line), to be sent or changed."""
        if typing is None:
            return
        queued, line = typing.take()
        if finished:
            self.queued += queued
            self.draft = line
        else:
            self.draft = "\n".join([*self.queued, *queued, *([line] if line else [])])
            self.queued = []


def open_tasks(steps: list[dict[str, str]]) -> list[str]:
    """The task list above the input, while any step is not done."""
    if not steps or all(step.get("status") == "completed" for step in steps):
        return []
    return [f"  {line}" for line in task_lines(steps)]


def run_repl(session: Any, reader_factory: Callable[[Any], Any] | None = None) -> int:
    """The interactive session until /exit, Ctrl-D or a confirmed Ctrl-C."""
    if reader_factory is not None:
        reader = reader_factory(session)
    elif is_terminal():
        reader = PromptReader(
            session.state_dir / "history",
            session.workspace,
            session.front.expand,
            cycle=session.workflow.cycle,
            tasks=lambda: open_tasks(session.front.tasks),
            mode=lambda: session.gate.mode,
        )
    else:
        reader = LineReader()
    try:
        with keeping_terminal(sys.stdin.fileno()) if is_terminal() else contextlib.nullcontext():
            return Repl(session, reader).run()
    finally:
        session.close()
