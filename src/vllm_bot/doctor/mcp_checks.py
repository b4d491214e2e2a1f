"""The doctor's MCP rows: one check per configured MCP server (connected, its tools and their prompt
cost; or why it is not). An MCP server that fails is a warning: the agent works without its tools."""

from __future__ import annotations

from typing import Any

from ..cliargs import program_name
from .report import Check

MCP_FIX = "see its log, or run `{program} mcp list`; set mcp.servers.{name}.enabled to false to skip it"


def mcp_checks(rows: list[dict[str, Any]]) -> list[Check]:
    """`mcp.report.server_row`s as doctor checks, with id `mcp:NAME` and the row as data."""
    return [_check(row) for row in rows]


def _check(row: dict[str, Any]) -> Check:
    name, status = row["name"], row["status"]
    check_id, title = f"mcp:{name}", f"MCP {name}"
    if status == "disabled":
        return Check(check_id, title, "skip", f"disabled  [{row['target']}]", data=row)
    if status == "connected":
        tools = len(row["tools"])
        detail = f"connected, {tools} tool{'s' if tools != 1 else ''}, ~{row['tokens']} prompt tokens"
        if row["skipped"]:
            detail += f"; skipped {len(row['skipped'])} ({row['skipped'][0]})"
        return Check(check_id, title, "warn" if row["skipped"] else "pass", detail, data=row)
    detail = f"{status}: {row['error'] or 'no answer'}  [{row['target']}]"
    fix = MCP_FIX.format(program=program_name(), name=name)
    if row.get("log"):
        fix = fix.replace("its log", f"its log ({row['log']})")
    return Check(check_id, title, "warn", detail, fix, data=row)
