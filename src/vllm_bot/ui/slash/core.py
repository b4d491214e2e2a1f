"""Core slash commands: /help, /exit, /clear, /tools, /fc, /expand."""

from __future__ import annotations

from typing import Any

from ...tools.definitions import signature
from ..display import columns
from .registry import command, commands_for


class ExitSession(Exception):
    """Raised by /exit to leave the interactive loop."""


@command("help", "List the commands")
def _help(session: Any, arg: str) -> None:
    rows = [
        (f"/{c.name} {c.usage}".rstrip(), c.help)
        for c in sorted(commands_for(session).values(), key=lambda c: c.name)
    ]
    for line in columns(rows):
        session.say(line)
    session.say(KEYS)


KEYS = (
    "Keys: Enter sends · Ctrl-J or Alt+Enter: new line · Tab completes /commands and @paths · "
    "Ctrl-O: the last folded output in full · Esc or Ctrl-C: stop the task · !command: run it yourself"
)


@command("exit", "Leave the session")
def _exit(session: Any, arg: str) -> None:
    raise ExitSession()


@command("clear", "Start a new conversation")
def _clear(session: Any, arg: str) -> None:
    session.agent.conversation.clear()
    session.say("Conversation cleared.")


@command("tools", "List the tools and their parameters")
def _tools(session: Any, arg: str) -> None:
    rows = [(signature(d), d["function"].get("description", "")) for d in session.executor.definitions]
    for line in columns(rows):
        session.say(line)


@command("fc", "Turn native function calling on or off", "on|off")
def _fc(session: Any, arg: str) -> None:
    if arg not in ("on", "off"):
        state = "on" if session.client.function_calling else "off"
        session.say(f"Function calling is {state}. Use /fc on or /fc off.")
        return
    session.client.function_calling = arg == "on"
    session.say(f"Function calling {arg}.")


@command("expand", "Show the last folded output in full (Ctrl-O)")
def _expand(session: Any, arg: str) -> None:
    session.front.expand()
