"""/mcp: the MCP servers of this session, their status and tools; `/mcp restart NAME` reconnects one."""

from __future__ import annotations

from typing import Any

from ...mcp.report import server_row, status_lines
from .registry import command


@command("mcp", "List MCP servers, their status and tools; restart one", "[restart NAME]")
def _mcp(session: Any, arg: str) -> None:
    tools = getattr(session, "mcp", None)
    manager = tools.manager if tools is not None else None
    if tools is None or manager is None:
        session.say(status_lines([])[0])
        return
    verb, _, name = arg.partition(" ")
    if verb == "restart":
        name = name.strip()
        if manager.restart(name):
            session.say(f"Restarting MCP server {name}; its tools return when it is connected.")
        else:
            known = ", ".join(manager.servers) or "none"
            session.say(
                f"Cannot restart {name!r}: give a server that failed, crashed or was closed ({known})."
            )
        return
    if verb:
        session.say("Usage: /mcp, or /mcp restart NAME")
        return
    tools.sync()
    for line in status_lines([server_row(s) for s in manager.snapshot()]):
        session.say(line)
