"""Slash commands for the interactive session: a registry filled by the modules that own them.

A module declares its commands with `@command(...)`; its name goes into SLASH_MODULES so it is
imported when the REPL starts (never at `--help` time).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SLASH_MODULES = [
    "vllm_bot.ui.slash.core",
    "vllm_bot.ui.slash.settings",
    "vllm_bot.ui.slash.mcp",
    "vllm_bot.ui.slash.history",
    "vllm_bot.ui.slash.doctor",
    "vllm_bot.ui.slash.project",
]


@dataclass
class SlashCommand:
    name: str
    help: str
    run: Callable[[Any, str], None]  # (session, argument text)
    usage: str = ""


SLASH_COMMANDS: dict[str, SlashCommand] = {}
# Commands a session brings with it (an MCP server's prompts): session -> {name: command}.
PROVIDERS: list[Callable[[Any], dict[str, SlashCommand]]] = []


class StartTask(Exception):
    """Raised by a command whose result is a message for the model (an MCP prompt, /init);
    the REPL runs it."""

    def __init__(self, text: str) -> None:
        super().__init__("start a task")
        self.text = text


def command(
    name: str, help: str, usage: str = ""
) -> Callable[[Callable[[Any, str], None]], Callable[[Any, str], None]]:
    def register(fn: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
        SLASH_COMMANDS[name] = SlashCommand(name, help, fn, usage)
        return fn

    return register


def load_all() -> dict[str, SlashCommand]:
    for module in SLASH_MODULES:
        importlib.import_module(module)
    return SLASH_COMMANDS


def commands_for(session: Any) -> dict[str, SlashCommand]:
    """The built-in commands and the ones this session brings (listed in /help too)."""
    commands = dict(load_all())
    for provide in PROVIDERS:
        commands.update({n: c for n, c in provide(session).items() if n not in commands})
    return commands


class UnknownCommand(Exception):
    def __init__(self, name: str, suggestion: str | None, matches: list[str] | None = None) -> None:
        if matches:  # the start of several names: say which
            listed = " ".join(f"/{m}" for m in matches)
            super().__init__(f"/{name} could be {listed}: type more of it (Tab completes).")
            return
        hint = f" Did you mean /{suggestion}?" if suggestion else ""
        super().__init__(f"Unknown command /{name}.{hint} Type /help for the list.")


def dispatch(session: Any, line: str) -> None:
    """Run a `/name args` line; raises UnknownCommand with the commands `name` starts, or else the
    nearest name."""
    name, _, rest = line[1:].partition(" ")
    commands = commands_for(session)
    if name not in commands:
        matches = sorted(c for c in commands if c.startswith(name))
        close = difflib.get_close_matches(name, list(commands), n=1, cutoff=0.5)
        raise UnknownCommand(name, close[0] if close else None, matches if len(matches) > 1 else None)
    commands[name].run(session, rest.strip())
