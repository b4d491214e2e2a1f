"""Command line: parse arguments, load config, wire the parts together and run.

Flags, sub-commands and exit codes here are a contract relied on by users' scripts: add, never rename.
Exit codes: 0 task finished; 1 runtime failure; 2 usage or config error; 3 stopped by a limit or Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .cliargs import (
    UsageError,
    connection_flags,
    function_calling_flags,
    home_workspace,
    overrides_from,
    program_name,
    resolve_workspace,
    trust_policy,
)
from .config import ConfigError, load_config
from .errors import EXIT_LIMIT, EXIT_RUNTIME, EXIT_USAGE, UserFacingError
from .prompts import PromptError

OUTPUT_FORMATS = ("text", "json", "stream-json")

DESCRIPTION = "vLLM Bot: an autonomous coding agent for local models served by vLLM."
EXIT_CODES = """exit codes: 0 task finished, 1 runtime failure (e.g. server unreachable),
2 usage or config error, 3 stopped by a limit (iterations, loop guard, context) or by Ctrl-C."""

# (command, what it does, an example's arguments); --help writes the examples with the command the
# user ran (`vllm-bot` or `python cli.py`).
COMMANDS = (
    ("doctor", "check the server: tool calls, parsers, reasoning", "doctor"),
    ("undo", "put back the files the agent changed last turn", "undo --list"),
    ("diff", "what the agent changed (last turn or session)", "diff --session"),
    ("sessions", "the saved sessions of this workspace", "sessions"),
    ("mcp list", "connect to the MCP servers and list their tools", "mcp list --json"),
    ("batch", "many tasks at once, results as JSON lines", "batch tasks.jsonl --workers 8"),
    ("batch merge", "join the results of several machines", "batch merge out-1 out-2"),
    ("eval", "score this model and server on bundled tasks", "eval --modes native,text"),
    ("acp", "be an editor's agent (Agent Client Protocol, stdio)", "acp --base-url URL"),
)

EXAMPLES = (
    ("", "interactive session in this directory"),
    ('-p "fix the failing test"', "one task, headless; the answer goes to stdout"),
    ("-p - < task.txt", "read the task from stdin"),
    ("--continue", "resume the latest session in this directory"),
    ('-p "..." --output-format json', "one JSON object with the answer, calls and usage"),
    ("--demo", "a scripted demo task, no GPU or server needed"),
)


def epilog(prog: str) -> str:
    """The sub-commands, the exit codes and the examples, written with the command the user ran."""
    name_width = max(len(name) for name, _, _ in COMMANDS) + 2
    meaning_width = max(len(meaning) for _, meaning, _ in COMMANDS) + 4
    commands = [
        f"  {name:<{name_width}}{meaning:<{meaning_width}}{prog} {ex}" for name, meaning, ex in COMMANDS
    ]
    lines = [f"{prog} {args}".rstrip() for args, _ in EXAMPLES]
    width = max(len(line) for line in lines) + 4
    examples = [f"  {line:<{width}}{meaning}" for line, (_, meaning) in zip(lines, EXAMPLES, strict=True)]
    return "\n".join(
        ["commands (each has --help):", *commands, "", EXIT_CODES, "", "examples:", *examples, ""]
    )


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The main parser; `prog` (default: the command the user ran) names the command in --help."""
    prog = prog or program_name()
    parser = argparse.ArgumentParser(
        prog=prog,
        description=DESCRIPTION,
        epilog=epilog(prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-p", "--prompt", metavar="TASK", help='run one task headless and exit ("-" reads stdin)'
    )
    connection_flags(parser)
    function_calling_flags(parser)
    parser.add_argument(
        "--yes", action="store_true", help="approve every tool call (approval mode full-auto)"
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="plan mode: the model explores read-only and presents a plan; with -p the plan is printed "
        "and the run exits 0",
    )
    parser.add_argument(
        "--max-iterations", type=int, metavar="N", help="stop after N model requests per task"
    )
    parser.add_argument(
        "--allow-home",
        action="store_true",
        help="work with your home directory (or a folder above it) as the workspace; its dotfiles and "
        "dot-folders stay out of reach (an interactive start asks instead)",
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue", dest="continue_", action="store_true", help="resume the latest session here"
    )
    resume.add_argument("--resume", metavar="ID", help="resume a saved session (`sessions` lists them)")
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=None,
        help="with -p: text (the answer, default), json (one object) or stream-json (one event per line); "
        "see docs/output-schema.md",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="run a scripted demo task on a throwaway sample project (no GPU or server needed)",
    )
    parser.add_argument("--version", action="version", version=f"vllm-bot {__version__}")
    return parser


# Sub-commands: name -> "module:function"; the function returns (add_arguments, run). Modules are
# imported only when their command is used, so `--help` stays fast. run(args) returns the exit code.
SUBCOMMANDS: dict[str, str] = {
    "mcp": "vllm_bot.mcp.cli:command",
    "undo": "vllm_bot.history.cli:undo_command",
    "diff": "vllm_bot.history.cli:diff_command",
    "sessions": "vllm_bot.history.cli:sessions_command",
    "doctor": "vllm_bot.doctor:command",
    "batch": "vllm_bot.batch.cli:command",
    "batch merge": "vllm_bot.batch.cli:merge_command",  # two words: the longest match wins
    "eval": "vllm_bot.eval.cli:command",
    "acp": "vllm_bot.acp.cli:command",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    name = subcommand_name(argv)
    if name is not None:
        return guarded(lambda: run_subcommand(name, argv[len(name.split()) :]), headless=True)
    args = build_parser().parse_args(argv)
    return guarded(lambda: run_session(args), headless=args.prompt is not None)


def subcommand_name(argv: list[str]) -> str | None:
    """The sub-command `argv` starts with ("batch merge" before "batch"), or None."""
    for words in (2, 1):
        name = " ".join(argv[:words])
        if len(argv) >= words and name in SUBCOMMANDS:
            return name
    return None


def run_subcommand(name: str, argv: list[str]) -> int:
    module_name, _, attr = SUBCOMMANDS[name].partition(":")
    add_arguments, run = getattr(importlib.import_module(module_name, __package__), attr)()
    parser = argparse.ArgumentParser(prog=f"{program_name()} {name}")
    add_arguments(parser)
    return int(run(parser.parse_args(argv)))


def run_session(args: argparse.Namespace) -> int:
    from .session import Session, ask_trust

    if args.output_format is not None and args.prompt is None:
        raise UsageError("--output-format applies to headless runs: add -p TASK")
    if args.demo:
        if args.prompt is not None:
            raise UsageError("--demo runs its own task; leave out -p")
        from .demo import run_demo

        return run_demo(args)
    workspace = resolve_workspace(args.workspace)
    task = read_task(args.prompt)
    check_home_workspace(workspace, allowed=args.allow_home, interactive=task is None and sys.stdin.isatty())
    ask = ask_trust if task is None and sys.stdin.isatty() else None  # headless never asks
    trust = trust_policy(args, ask)
    config = load_config(args.config, overrides=overrides_from(args), workspace=workspace, trust=trust)
    session = Session(config, workspace, headless=task is not None, resume=args.resume, latest=args.continue_)
    if task is not None:
        return session.run_headless(task, args.output_format or "text")
    return session.run_interactive()


def check_home_workspace(workspace: Path, *, allowed: bool, interactive: bool) -> None:
    """A workspace at $HOME or above it needs --allow-home, or a yes when a terminal can ask."""
    if interactive:
        from .session import ask_home

        home_workspace(workspace, allowed=allowed, ask=ask_home)
    else:
        home_workspace(workspace, allowed=allowed)


def guarded(action: Any, *, headless: bool) -> int:
    """Run `action`, turning user-facing errors into one line on stderr and an exit code."""
    try:
        return int(action())
    except (ConfigError, PromptError, UsageError) as e:
        print(f"vllm-bot: {e}", file=sys.stderr)
        return EXIT_USAGE
    except UserFacingError as e:
        print(f"vllm-bot: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\nvllm-bot: interrupted", file=sys.stderr)
        return EXIT_LIMIT if headless else 0


def read_task(value: str | None) -> str | None:
    if value is None:
        return None
    task = sys.stdin.read() if value == "-" else value
    if not task.strip():
        raise UsageError("the task is empty (-p TASK, or -p - with the task on stdin)")
    return task


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["EXIT_RUNTIME", "build_parser", "main"]
