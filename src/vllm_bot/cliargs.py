"""Command-line pieces the main command and every sub-command share: flags, config overrides, the
workspace argument and the usage error. Sub-commands import these, never `app` (the wiring)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config.trust import TrustPolicy, TrustRequest, trusted_by_env

PROGRAM_ENV = "VLLM_BOT_PROGRAM"


def program_name(argv0: str | None = None) -> str:
    """The command the user ran, for messages: `vllm-bot` (the installed entry point), `python cli.py`
    (as typed, from a checkout) or `python -m vllm_bot.app`. `argv0` defaults to sys.argv[0]; an agent
    that `batch` or `eval` started names the command its user ran (PROGRAM_ENV, set by them)."""
    if argv0 is None:
        inherited = os.environ.get(PROGRAM_ENV)
        if inherited:
            return inherited
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
        help="config file, read instead of the user config (~/.config/vllm-bot/config.json)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="apply the workspace's own .vllm-bot/config.json and .mcp.json in full for this run, "
        "safety settings included, without asking",
    )


def workspace_flag(parser: argparse.ArgumentParser, help: str = "the project directory") -> None:
    parser.add_argument("--workspace", metavar="DIR", help=f"{help} (default: current directory)")


def server_flags(parser: argparse.ArgumentParser) -> None:
    """--base-url, --model, --api-key and --config: the server a command talks to, and the config."""
    parser.add_argument("--base-url", help="vLLM server URL (default http://localhost:8000/v1)")
    parser.add_argument("--model", help='served model name ("auto": the first one the server lists)')
    parser.add_argument("--api-key", help="API key the server was started with (--api-key)")
    config_flag(parser)


def connection_flags(parser: argparse.ArgumentParser) -> None:
    """Flags shared by a task and the sub-commands that talk to the server."""
    server_flags(parser)
    workspace_flag(parser)
    parser.add_argument("--debug", action="store_true", default=None, help="log each step and keep a trace")


# The flag behind each dotted key of `overrides_from`, for /config's "where it came from".
FLAG_NAMES = {
    "vllm.base_url": "--base-url",
    "vllm.model": "--model",
    "vllm.api_key": "--api-key",
    "vllm.enable_function_calling": "--function-calling / --no-function-calling",
    "agent.max_iterations": "--max-iterations",
    "agent.debug": "--debug",
    "agent.approval": "--yes / --plan",
}


def function_calling_flags(parser: argparse.ArgumentParser) -> None:
    """--function-calling / --no-function-calling (args.function_calling: True, False or None)."""
    fc = parser.add_mutually_exclusive_group()
    fc.add_argument(
        "--function-calling",
        dest="function_calling",
        action="store_true",
        default=None,
        help="send tools through native function calling (default)",
    )
    fc.add_argument(
        "--no-function-calling",
        dest="function_calling",
        action="store_false",
        help="use the text tool protocol (TOOL_CALL: blocks) only",
    )


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "vllm.base_url": getattr(args, "base_url", None),
        "vllm.model": getattr(args, "model", None),
        "vllm.api_key": getattr(args, "api_key", None),
        "vllm.enable_function_calling": getattr(args, "function_calling", None),
        "agent.max_iterations": getattr(args, "max_iterations", None),
        "agent.debug": getattr(args, "debug", None),
        "agent.approval": approval_flag(args),
    }


def approval_flag(args: argparse.Namespace) -> str | None:
    """--plan (plan mode: nothing changes until a plan is approved; headless: print it and exit) or
    --yes (full-auto); both make no sense together."""
    if getattr(args, "plan", False) and getattr(args, "yes", False):
        raise UsageError("--plan and --yes contradict each other: plan mode changes nothing, --yes all")
    if getattr(args, "plan", False):
        return "plan"
    return "full-auto" if getattr(args, "yes", False) else None


def trust_policy(args: argparse.Namespace, ask: Callable[[TrustRequest], bool] | None = None) -> TrustPolicy:
    """`--trust-project` or VLLM_BOT_TRUST_PROJECT=1 trusts for this run; else `ask` (an interactive
    start) asks, and without it the workspace's safety settings apply only if trusted before."""
    explicit = bool(getattr(args, "trust_project", False)) or trusted_by_env(os.environ)
    return TrustPolicy(explicit=explicit, ask=ask)


class UsageError(Exception):
    """Bad command-line usage (exit 2)."""


def resolve_workspace(value: str | None) -> Path:
    path = Path(value).expanduser() if value else Path.cwd()
    if not path.is_dir():
        raise UsageError(f"workspace {path} is not a directory")
    return path.resolve()


def home_workspace(workspace: Path, *, allowed: bool, ask: Callable[[Path, str], bool] | None = None) -> None:
    """A workspace at $HOME or above it needs --allow-home, or a yes from `ask(workspace, where)` (a
    terminal's question); without either it is a usage error that says what to do."""
    home = Path(os.path.realpath(os.environ.get("HOME") or Path.home()))
    if allowed or home == Path("/") or not home.is_relative_to(workspace):
        return
    where = "your home directory" if workspace == home else f"{workspace}, above your home directory"
    if ask is not None:
        if ask(workspace, where):
            return
        raise UsageError("not started: run it in a project folder (cd into it), or pass --allow-home")
    raise UsageError(
        f"the workspace is {where}: everything in it would be the model's to read and change. Run it in a "
        "project folder (cd into it, or --workspace DIR), or pass --allow-home to work there anyway (its "
        "dotfiles and dot-folders stay out of reach)"
    )
