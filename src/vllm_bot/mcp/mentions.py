"""`@server:uri` in a user's message attaches that MCP resource, as `@path` attaches a file.

`server` must be a connected MCP server of the session that offers resources; anything else
(`@user:pass`, `@decorator`) is left alone. The attachments share the message's budget with `@path`.
"""

from __future__ import annotations

from ..tools.mentions import MENTION, TRAILING
from .manager import McpError, McpManager
from .resources import read_text

MAX_RESOURCES = 8


def mentioned_resources(text: str, servers: list[str]) -> list[tuple[str, str]]:
    """(server, uri) for each `@server:uri` word of `text` naming one of `servers`, in order, once."""
    found: list[tuple[str, str]] = []
    for match in MENTION.finditer(text):
        server, colon, uri = match.group(1).rstrip(TRAILING).partition(":")
        if colon and uri and server in servers and (server, uri) not in found:
            found.append((server, uri))
    return found[:MAX_RESOURCES]


def attach_resources(text: str, manager: McpManager, budget: int) -> tuple[list[str], list[str], int]:
    """(an `<attached>` block per resource `text` mentions, a line per mention for the user, the
    budget left)."""
    mentions = mentioned_resources(text, manager.resource_servers())
    parts: list[str] = []
    told: list[str] = []
    for server, uri in mentions:
        label = f"@{server}:{uri}"
        if budget <= 0:
            told.append(f"Not attached {label}: no room left in this message (the model can read it)")
            continue
        try:
            body = read_text(manager, server, uri)
        except McpError as e:
            told.append(f"Not attached {label}: {e}")
            continue
        note = ""
        if len(body) > budget:
            body = (
                body[:budget] + f"\n[attachment cut to fit the context window: mcp_read_resource reads {uri}]"
            )
            note = ", cut to fit the context window"
        budget -= len(body)
        parts.append(f'<attached resource="{server}:{uri}">\n{body.rstrip()}\n</attached>')
        told.append(f"Attached {label}: {len(body):,} characters{note}")
    return parts, told, budget
