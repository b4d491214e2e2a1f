"""/mcp: the MCP servers of this session, their status, tools and token cost; restart one; turn a
server or some of its tools off and on for the session. Each server's prompts are commands too:
`/mcp__server__prompt ARGS` sends the prompt the server returns as your message."""

from __future__ import annotations

from typing import Any

from ...mcp.manager import McpError
from ...mcp.prompts import PromptUsage, parse_arguments, prompt_text, usage
from ...mcp.report import server_row, status_lines
from ...mcp.state import McpPrompt
from .registry import PROVIDERS, SlashCommand, StartTask, command

USAGE = "Usage: /mcp, /mcp restart NAME, /mcp off NAME [TOOL...], /mcp on NAME [TOOL...]"


@command(
    "mcp",
    "MCP servers: status, tools and their token cost; restart one; turn off/on",
    "[restart|off|on NAME]",
)
def _mcp(session: Any, arg: str) -> None:
    tools = getattr(session, "mcp", None)
    manager = tools.manager if tools is not None else None
    if tools is None or manager is None:
        session.say(status_lines([])[0])
        return
    verb, *words = arg.split() or [""]
    if not verb:
        tools.sync()
        for line in status_lines([server_row(s) for s in manager.snapshot()]):
            session.say(line)
        return
    if verb not in ("restart", "off", "on") or not words:
        session.say(USAGE)
        return
    name, names = words[0], words[1:]
    if name not in manager.servers:
        session.say(f"No MCP server named {name!r} (servers: {', '.join(manager.servers) or 'none'}).")
    elif verb == "restart":
        _restart(session, manager, name)
    else:
        _switch(session, tools, name, names, verb == "off")


def _restart(session: Any, manager: Any, name: str) -> None:
    if manager.restart(name):
        session.say(f"Restarting MCP server {name}; its tools return when it is connected.")
    else:
        session.say(f"MCP server {name} is starting already; /mcp shows when it is connected.")


def _switch(session: Any, tools: Any, name: str, names: list[str], off: bool) -> None:
    manager = tools.manager
    unknown = manager.set_off(name, names, off)
    if unknown:
        session.say(f"MCP server {name} has no tool named {', '.join(unknown)}; /mcp lists them.")
    state = manager.servers[name]
    if not off and not names and state.status in ("disabled", "closed", "failed", "crashed"):
        manager.restart(name)  # `on` for a server that is not running starts it
    tools.sync()
    what = f"{', '.join(names)} of MCP server {name}" if names else f"MCP server {name}"
    after = "the model no longer sees them" if off else "the model sees them again (once connected)"
    session.say(f"Turned {what} {'off' if off else 'on'} for this session; {after}.")


def prompt_commands(session: Any) -> dict[str, SlashCommand]:
    """A command for each prompt of the session's usable MCP servers."""
    tools = getattr(session, "mcp", None)
    manager = tools.manager if tools is not None else None
    if manager is None:
        return {}
    return {p.command: _prompt_command(p) for p in manager.prompts()}


def _prompt_command(prompt: McpPrompt) -> SlashCommand:
    def run(session: Any, arg: str) -> None:
        manager = session.mcp.manager
        try:
            arguments = parse_arguments(prompt, arg)
            text = prompt_text(manager, prompt, arguments)
        except PromptUsage as e:
            session.say(f"/{prompt.command}: {e}. Usage: /{prompt.command} {usage(prompt)}".rstrip())
            return
        except McpError as e:
            session.say(f"/{prompt.command}: MCP server {prompt.server} did not give the prompt: {e}")
            return
        session.say(f"Prompt {prompt.name} from MCP server {prompt.server}, sent as your message.")
        raise StartTask(text)

    about = prompt.description or f"prompt {prompt.name}"
    return SlashCommand(prompt.command, f"{about} (MCP server {prompt.server})", run, usage(prompt))


PROVIDERS.append(prompt_commands)
