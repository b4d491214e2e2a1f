"""`python cli.py mcp list`: connect to the configured MCP servers, list their tools, exit.

Exit code 0 when every enabled server connected, 1 otherwise (2 for a bad config, as everywhere).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..cliargs import config_flag, resolve_workspace, trust_policy, workspace_flag
from ..config import load_config
from ..errors import EXIT_OK, EXIT_RUNTIME
from ..printable import safe_text


def command() -> tuple[Any, Any]:
    return add_arguments, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="connect to each server and list its tools")
    config_flag(listing)
    workspace_flag(listing, "directory stdio servers run in")
    listing.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from .report import mcp_report, status_lines

    workspace = resolve_workspace(args.workspace)
    config = load_config(args.config, workspace=workspace, trust=trust_policy(args))
    for warning in config.provenance.warnings:
        print(f"vllm-bot: {safe_text(warning)}", file=sys.stderr)
    rows = mcp_report(config, workspace)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("\n".join(status_lines(rows)))
    failed = [r["name"] for r in rows if r["enabled"] and r["status"] != "connected"]
    if failed:
        print(f"vllm-bot: not connected: {', '.join(failed)}", file=sys.stderr)
        return EXIT_RUNTIME
    return EXIT_OK
