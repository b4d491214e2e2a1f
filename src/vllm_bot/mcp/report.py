"""What the user sees about MCP servers: `/mcp`, `python cli.py mcp list`, `doctor`, approval previews."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import Config
from ..config.statedir import workspace_state_dir
from ..printable import safe_text
from ..tools.context import plural
from .connection import target
from .logs import has_content
from .manager import McpManager
from .schema import McpTool
from .state import ServerState, unknown_warning


def hints(annotations: dict[str, Any]) -> list[str]:
    """The server's own hints about a tool (unverified claims, shown as such)."""
    found = []
    if annotations.get("readOnlyHint") is True:
        found.append("read-only")
    elif annotations.get("destructiveHint") is True:
        found.append("destructive")
    elif annotations.get("destructiveHint") is False:
        found.append("not destructive")
    if annotations.get("openWorldHint") is True:
        found.append("reaches outside systems")
    return found


def call_preview(tool: McpTool) -> str:
    """The line shown above an approval question for an MCP tool."""
    said = hints(tool.annotations)
    claim = (
        f"the server says: {', '.join(said)}" if said else "no hints from the server: it may change things"
    )
    return f"MCP tool {tool.name} from server {tool.server} ({claim})"


def tokens_estimate(definitions: list[dict[str, Any]]) -> int:
    """Rough prompt tokens the definitions cost on every request (4 characters a token)."""
    return len(json.dumps(definitions, ensure_ascii=False)) // 4


def server_row(state: ServerState) -> dict[str, Any]:
    """One server as plain data: the contract `mcp_report`, `/mcp` and `doctor` rely on."""
    offered = {t.public for t in state.offered()}
    return {
        "name": state.name,
        "transport": "stdio" if state.config.command is not None else "http",
        "target": target(state.config),
        "enabled": state.config.enabled,
        "status": state.status,  # disabled | starting | connected | failed | crashed | closed
        "off": state.off,  # turned off for this session (/mcp off NAME)
        "error": state.error,
        "tools": [
            {
                "name": t.public,
                "mcp_name": t.name,
                "hints": hints(t.annotations),
                "tokens": tokens_estimate([t.definition]),
                "off": t.public not in offered,
            }
            for t in state.tools
        ],
        "hidden": list(state.hidden),  # left out by enabled_tools / disabled_tools
        "skipped": list(state.skipped),
        "warnings": [*state.warnings, *(unknown_warning(state.config, n) for n in state.unknown)],
        "prompts": ["/" + p.command for p in state.prompts],
        "resources": state.resources,
        "tokens": tokens_estimate([t.definition for t in state.offered()]),
        "log": str(state.log_path) if has_content(state.log_path) else None,
    }


def status_lines(rows: list[dict[str, Any]], *, with_tools: bool = True) -> list[str]:
    """Human-readable lines for a list of `server_row`s."""
    if not rows:
        return ["No MCP servers configured (mcp.servers in config.json; see docs/mcp.md)."]
    lines = []
    for row in rows:
        lines.append(f"{row['name']}: {_summary(row)}  [{row['target']}]")
        if row["error"]:
            lines.append(f"  error: {row['error']}")
        lines.extend(f"  warning: {w}" for w in row["warnings"])
        if with_tools:
            for tool in row["tools"]:
                said = f", {', '.join(tool['hints'])}" if tool["hints"] else ""
                state = "off" if tool["off"] else f"~{tool['tokens']} tokens"
                lines.append(f"  {tool['name']}  ({state}{said})")
        if row["hidden"]:
            lines.append(f"  left out by config: {', '.join(row['hidden'])}")
        if row["prompts"]:
            lines.append(f"  prompts: {' '.join(row['prompts'])}")
        lines.extend(f"  skipped {reason}" for reason in row["skipped"])
    return [safe_text(line) for line in lines]  # names and errors come from config files and servers


def _summary(row: dict[str, Any]) -> str:
    status = row["status"] + (", off for this session" if row["off"] else "")
    if row["status"] != "connected" or row["off"]:
        return status
    tools = len([t for t in row["tools"] if not t["off"]])
    extra = ", resources" if row["resources"] else ""
    return f"{status}, {plural(tools, 'tool')}, ~{row['tokens']} tokens{extra}"


def log_dir_in(state_dir: Path) -> Path:
    """Where the servers' stderr logs go (one file per server), in a state directory."""
    return state_dir / "mcp"


def mcp_report(config: Config, workspace: Path) -> list[dict[str, Any]]:
    """Connect to every enabled server (stdio ones in `workspace`, logging to its state directory),
    list its tools, disconnect; one `server_row` per server.

    Takes at most about mcp.startup_timeout plus the time to stop the servers.
    """
    log_dir = log_dir_in(workspace_state_dir(workspace)) if config.mcp.servers else None
    manager = McpManager(config.mcp, workspace, log_dir=log_dir, output_limit=config.tools.output_limit)
    manager.start()
    try:
        manager.wait(config.mcp.startup_timeout + 5)
        return [server_row(s) for s in manager.snapshot()]
    finally:
        manager.close()
