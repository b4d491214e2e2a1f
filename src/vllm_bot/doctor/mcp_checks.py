"""The doctor's MCP rows: one check per configured MCP server (connected, its tools and their prompt
cost; or why it is not). An MCP server that fails is a warning: the agent works without its tools."""

from __future__ import annotations

from typing import Any

from ..cliargs import program_name
from .report import Check

MCP_FIX = "run `{program} mcp list`; set mcp.servers.{name}.enabled to false to skip it"


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
        if row["warnings"]:
            detail += f"; {row['warnings'][0]}"
        warn = bool(row["skipped"] or row["warnings"])
        return Check(check_id, title, "warn" if warn else "pass", detail, _fix(row) if warn else "", data=row)
    detail = f"{status}: {row['error'] or 'no answer'}  [{row['target']}]"
    return Check(check_id, title, "warn", detail, _fix(row), data=row)


def _fix(row: dict[str, Any]) -> str:
    """How to find out more: the server's log only when it has something in it."""
    fix = MCP_FIX.format(program=program_name(), name=row["name"])
    return f"see its log ({row['log']}), or {fix}" if row.get("log") else fix
