"""`vllm-bot doctor`: probe the configured vLLM endpoint and say what works, what does not, and which
`vllm serve` flags fix it. Exit 0 when the agent can work (natively or through its text protocol),
1 otherwise. The command, its flags and its JSON report are a contract (docs/doctor.md)."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cliargs import connection_flags, overrides_from, resolve_workspace, trust_policy
from ..config import load_config
from ..config.statedir import workspace_state_dir
from ..model.trace import Trace
from ..printable import safe_text
from .report import footer, header, render_json, row, wrap_hanging
from .sandbox_check import sandbox_check

if TYPE_CHECKING:
    from ..model.trace import Trace


def command() -> tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]:
    """The sub-command entry for app.SUBCOMMANDS."""
    return add_arguments, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check the vLLM server: reachability, /health, /version, /v1/models, /tokenize, /metrics, "
        "native tool calls (streamed and not, parallel, long arguments), reasoning separation and "
        "usage reporting; suggest the `vllm serve` flags that fix what fails."
    )
    parser.epilog = "exit codes: 0 the agent can work with this server, 1 it cannot, 2 usage or config error"
    connection_flags(parser)
    parser.add_argument(
        "--output-format",
        choices=["text", "json"],
        default="text",
        help="text (default, printed as the checks run) or one JSON object",
    )


def run(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args.workspace)
    config = load_config(
        args.config, overrides=overrides_from(args), workspace=workspace, trust=trust_policy(args)
    )
    for warning in config.provenance.warnings:
        print(f"vllm-bot: {safe_text(warning)}", file=sys.stderr)

    local = lambda: [sandbox_check(config, workspace)]  # noqa: E731
    debug = Debug.start(config, workspace) if config.agent.debug else None
    try:
        return diagnose(
            config,
            json_output=args.output_format == "json",
            mcp_rows=mcp_rows(config, args),
            local=local,
            debug=debug,
        )
    finally:
        if debug is not None:
            debug.trace.close()


@dataclass
class Debug:
    """`--debug` / DEBUG=1: each step on stderr, and the raw requests and answers in a trace file
    (`.vllm-bot/traces/` in the workspace, the API key redacted), as in a session."""

    trace: Trace

    @classmethod
    def start(cls, config: Any, workspace: Path) -> Debug:
        trace = Trace.in_state_dir(workspace_state_dir(workspace), secrets=[config.vllm.api_key])
        debug = cls(trace)
        debug.log(f"Trace of raw requests and responses: {trace.path}")
        return debug

    def log(self, line: str) -> None:
        print(f"[DEBUG] {line}", file=sys.stderr, flush=True)


def mcp_rows(config: Any, args: argparse.Namespace) -> Callable[[], list[dict[str, Any]]] | None:
    """Connect to the configured MCP servers (in the workspace, as a session would), or None."""
    if not config.mcp.servers:
        return None
    from ..mcp.report import mcp_report

    workspace = resolve_workspace(args.workspace)
    return lambda: mcp_report(config, workspace)


def diagnose(
    config: Any,
    *,
    json_output: bool = False,
    mcp_rows: Callable[[], list[dict[str, Any]]] | None = None,
    local: Callable[[], list[Any]] | None = None,
    debug: Debug | None = None,
) -> int:
    """Run every check against `config`'s server (and its MCP servers) and print the report on stdout;
    returns the exit code."""
    if json_output:
        from .checkup import Doctor

        report = Doctor(config, mcp_rows=mcp_rows, local=local, **_debugging(debug)).run()
        print(render_json(report))
        return report.exit_code

    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    return run_checks(
        config,
        lambda text: print(wrap_hanging(text, width) if width else text, flush=True),
        mcp_rows,
        local,
        debug,
    ).exit_code


def _debugging(debug: Debug | None) -> dict[str, Any]:
    return {"trace": debug.trace, "log": debug.log} if debug is not None else {}


def run_checks(
    config: Any,
    say: Callable[[str], None],
    mcp_rows: Callable[[], list[dict[str, Any]]] | None = None,
    local: Callable[[], list[Any]] | None = None,
    debug: Debug | None = None,
) -> Any:
    """The text report, each row said as its check finishes (the command and `/doctor`); the Report."""
    from .checkup import Doctor

    say(header(config.vllm.base_url))
    on_check = lambda check: say(row(check))  # noqa: E731
    report = Doctor(config, on_check=on_check, mcp_rows=mcp_rows, local=local, **_debugging(debug)).run()
    say(footer(report))
    return report
