"""The interactive session: read a message or a slash command, run it, repeat.

In a terminal the input is prompt_toolkit: history per workspace (.vllm-bot/history), Enter sends,
Alt+Enter / Esc Enter (or a trailing backslash) starts a new line, a paste stays one message, Tab
completes /commands and @paths. Ctrl-C clears the line; at an empty prompt it asks to be pressed
again to exit; Ctrl-D exits. Without a terminal, lines are read from stdin one message each.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..agent.interrupts import close_open_calls
from ..errors import EXIT_OK, UserFacingError
from ..tools.listing import SKIP_DIRS
from . import is_terminal
from .recap import come_back_hint, recap_lines
from .slash.core import ExitSession
from .slash.registry import SlashCommand, StartTask, UnknownCommand, dispatch, load_all

PROMPT = "> "
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
    """prompt_toolkit input for a terminal."""

    def __init__(self, history: Path, workspace: Path) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        if not history.exists():
            history.touch(mode=0o600)  # what people type can be private

        self.prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            completer=_completer(workspace),
            key_bindings=_key_bindings(),
            multiline=True,
            complete_while_typing=True,
            prompt_continuation=lambda width, line_number, soft_wrap: ". ".rjust(width),
        )

    def read(self) -> str:
        return self.prompt.prompt(PROMPT)


def _key_bindings() -> Any:
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
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-c")
    def _interrupt(event: Any) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return kb


class LineReader:
    """One message per line from a stdin that is not a terminal."""

    def read(self) -> str:
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

    def run(self) -> int:
        self.session.start(offline_ok=True)  # a server that is down: the session opens anyway
        self.front.banner(self.session.banner_info())
        for line in recap_lines(self.session.agent.conversation.entries):  # --continue / --resume
            self.front.say(line)
        while True:
            try:
                text = self._read()
                if text is None or not text.strip():
                    continue
                if is_command(text.strip()):
                    self.command(text.strip())
                else:
                    self.task(text)
            except (EOFError, ExitSession):
                if self.session.agent.conversation.entries:
                    self.front.say(come_back_hint(self.session.workspace))
                return EXIT_OK
            except KeyboardInterrupt:  # Ctrl-C between a task's end and the prompt: not an exit
                close_open_calls(self.session.agent.conversation)
                self.front.stop_live()

    def _read(self) -> str | None:
        try:
            self.session.mcp.sync()
            text = self.reader.read()
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
        """Run one message; Ctrl-C or a server failure returns to the prompt with the session intact."""
        agent = self.session.agent
        try:
            self.session.reconnect()  # after an offline start: try the server again
            self.session.mcp.sync(wait=True)
            self.session.refresh_instructions()
            text = self.session.with_mentions(text)
            with agent.cancel.sigint():
                agent.run(text)
        except KeyboardInterrupt:
            close_open_calls(agent.conversation)
            self.front.say("Interrupted.")  # say() ends the live view itself
        except UserFacingError as e:
            close_open_calls(agent.conversation)
            self.front.error(str(e))
        finally:
            self.front.stop_live()


def run_repl(session: Any, reader_factory: Callable[[Any], Any] | None = None) -> int:
    """The interactive session until /exit, Ctrl-D or a confirmed Ctrl-C."""
    if reader_factory is not None:
        reader = reader_factory(session)
    elif is_terminal():
        reader = PromptReader(session.state_dir / "history", session.workspace)
    else:
        reader = LineReader()
    try:
        return Repl(session, reader).run()
    finally:
        session.close()
