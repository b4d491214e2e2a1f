"""MCP resources for the model: two tools that list and read the resources of the session's servers.

They are offered while at least one usable server offers resources. A resource link a tool returns
names its server and URI, so the model can read it; `@server:uri` in a user's message attaches one
(mentions.py). Resources are read-only by the protocol, so the two tools run without asking.
"""

from __future__ import annotations

import threading
from typing import Any

from ..calls import ToolResult
from .connection import list_all_resources
from .manager import McpError, McpManager
from .results import READ_TOOL, cap, describe_contents

LIST_TOOL = "mcp_list_resources"
TOOL_NAMES = (LIST_TOOL, READ_TOOL)
MAX_LISTED = 200  # resources listed per server, then a count of the rest


def definitions(servers: list[str]) -> list[dict[str, Any]]:
    """The two tools' definitions for these servers (their names are the `server` enum)."""
    server = {"type": "string", "enum": list(servers), "description": "The MCP server."}
    return [
        _tool(
            LIST_TOOL,
            f"List the resources (and URI templates) that MCP servers offer; read one with {READ_TOOL}.",
            {"server": {**server, "description": "Only this server (default: every one)."}},
            [],
        ),
        _tool(
            READ_TOOL,
            "Read one resource of an MCP server: a URI from mcp_list_resources, a URI template filled "
            "in, or a resource link a tool returned.",
            {"server": server, "uri": {"type": "string", "description": "The resource's URI."}},
            ["server", "uri"],
        ),
    ]


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def list_resources(
    manager: McpManager, server: str | None, limit: int, cancel: threading.Event | None = None
) -> ToolResult:
    """The listing for one server or every one that offers resources."""
    servers = [server] if server else manager.resource_servers()
    sections = []
    for name in servers:

        async def fetch(_progress: Any, name: str = name) -> Any:
            return await list_all_resources(manager.client(name))

        try:
            resources, templates = manager.request(name, fetch, cancel=cancel)
        except McpError as e:
            sections.append(f"{name}: {e}")
            continue
        sections.append(listing(name, resources, templates))
    if not sections:
        return ToolResult("", LIST_TOOL, "error", "No MCP server of this session offers resources.")
    return ToolResult("", LIST_TOOL, "text", cap("\n\n".join(sections), limit))


def listing(server: str, resources: list[dict[str, Any]], templates: list[dict[str, Any]]) -> str:
    lines = [f"{server}: {len(resources)} resource{'s' if len(resources) != 1 else ''}"]
    for item in resources[:MAX_LISTED]:
        lines.append(f"- {item.get('uri', '')}{_about(item)}")
    if len(resources) > MAX_LISTED:
        lines.append(f"- ... and {len(resources) - MAX_LISTED} more")
    if templates:
        lines.append(f"{server}: URI templates (fill in the {{braces}}, then read the URI)")
        lines.extend(f"- {t.get('uriTemplate', '')}{_about(t)}" for t in templates[:MAX_LISTED])
    return "\n".join(lines)


def _about(item: dict[str, Any]) -> str:
    name = item.get("title") or item.get("name") or ""
    mime = f" ({item['mimeType']})" if item.get("mimeType") else ""
    description = str(item.get("description") or "").strip().splitlines()[:1]
    return f"  {name}{mime}" + (f": {description[0][:160]}" if description else "")


def read_resource(
    manager: McpManager, server: str, uri: str, limit: int, cancel: threading.Event | None = None
) -> ToolResult:
    """The resource's contents as text (binary parts described), or an error result."""
    try:
        text = read_text(manager, server, uri, cancel)
    except McpError as e:
        return ToolResult("", READ_TOOL, "error", f"Cannot read {uri} from MCP server {server}: {e}")
    return ToolResult("", READ_TOOL, "text", cap(text, limit))


def read_text(manager: McpManager, server: str, uri: str, cancel: threading.Event | None = None) -> str:
    """Every part of the resource, each under its header line; raises McpError."""

    async def read(_progress: Any) -> list[dict[str, Any]]:
        result = await manager.client(server).read_resource(uri)
        return [c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in result.contents]

    contents = manager.request(server, read, cancel=cancel)
    if not contents:
        return f"[resource {uri}: empty]"
    return "\n".join(describe_contents(c) for c in contents)
