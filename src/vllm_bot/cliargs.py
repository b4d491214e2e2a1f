"""Command-line pieces the main command and every sub-command share: flags, config overrides, the
workspace argument and the usage error. Sub-commands import these, never `app` (the wiring)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any


def program_name(argv0: str | None = None) -> str:
    """The command the user ran, for messages: `vllm-bot` (the installed entry point), `python cli.py`
    (as typed, from a checkout) or `python -m vllm_bot.app`. `argv0` defaults to sys.argv[0]."""
    if argv0 is None:
        argv0 = sys.argv[0] if sys.argv else ""
    path = Path(argv0)
    if path.name == "cli.py":
        return f"python {shlex.quote(argv0)}"
    if path.name == "app.py" and path.parent.name == "vllm_bot":
        return "python -m vllm_bot.app"
    return "vllm-bot"


def config_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config file (default: config.json next to cli.py in a checkout, "
        "else ~/.config/vllm-bot/config.json)",
    )


def workspace_flag(parser: argparse.ArgumentParser, help: str = "the project directory") -> None:
    parser.add_argument("--workspace", metavar="DIR", help=f"{help} (default: current directory)")


def connection_flags(parser: argparse.ArgumentParser) -> None:
    """Flags shared by a task and the sub-commands that talk to the server."""
    parser.add_argument("--base-url", help="vLLM server URL (default http://localhost:8000/v1)")
    parser.add_argument("--model", help='served model name ("auto": the first one the server lists)')
    parser.add_argument("--api-key", help="API key the server was started with (--api-key)")
    config_flag(parser)
    workspace_flag(parser)
    parser.add_argument("--debug", action="store_true", default=None, help="log each step and keep a trace")


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "vllm.base_url": getattr(args, "base_url", None),
        "vllm.model": getattr(args, "model", None),
        "vllm.api_key": getattr(args, "api_key", None),
        "vllm.enable_function_calling": getattr(args, "function_calling", None),
        "agent.max_iterations": getattr(args, "max_iterations", None),
        "agent.debug": getattr(args, "debug", None),
        "agent.approval": "full-auto" if getattr(args, "yes", False) else None,
    }


class UsageError(Exception):
    """Bad command-line usage (exit 2)."""


def resolve_workspace(value: str | None) -> Path:
    path = Path(value).expanduser() if value else Path.cwd()
    if not path.is_dir():
        raise UsageError(f"workspace {path} is not a directory")
    return path.resolve()
