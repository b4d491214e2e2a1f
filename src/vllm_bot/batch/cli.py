"""`vllm-bot batch TASKS.jsonl` and `vllm-bot batch merge OUT...` (flags, output, exit codes: README).

Exit codes: 0 every task passed; 1 a task failed (or the server is unreachable: nothing started; or
it stayed away longer than --outage-wait: the tasks not run stay unrun); 2 a bad flag, config, tasks
or results file (nothing started); 3 interrupted (run the same command again to resume). `merge`: 0
merged; 1 tasks named by --tasks have no result; 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cliargs import UsageError, function_calling_flags, overrides_from, program_name, server_flags
from ..config import load_config
from ..errors import EXIT_LIMIT, EXIT_OK, EXIT_RUNTIME
from ..model.client import ModelClient
from ..ui.batch_view import print_table, view_for
from .outage import DEFAULT_OUTAGE_WAIT
from .rayconf import ray_flags, ray_settings
from .report import HEADERS, summarize, summary_lines, task_rows
from .results import ResultsError, merge, results_name, write_atomic
from .runner import Batch
from .settings import DEFAULT_TIME_BUDGET, BatchSettings
from .tasks import TasksError, in_shard, load_tasks, parse_shard

Command = tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]


def command() -> Command:
    return add_arguments, run


def merge_command() -> Command:
    return add_merge_arguments, run_merge


def run_flags(parser: argparse.ArgumentParser) -> None:
    """What `batch` and `eval` share: the server, the workers and each task's limits."""
    server_flags(parser)
    function_calling_flags(parser)
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="tasks in flight at once (default 4; with --ray, the cluster's slots)",
    )
    parser.add_argument("--output-dir", metavar="DIR", help="where results and each task's files go")
    parser.add_argument(
        "--approval",
        choices=["ask", "auto-edit", "full-auto"],
        default="full-auto",
        help="approval mode of each task's agent (default full-auto; nobody answers, so calls that "
        "would ask are refused with a message to the model)",
    )
    parser.add_argument("--yes", action="store_true", help="the same as --approval full-auto")
    parser.add_argument(
        "--outage-wait",
        type=float,
        default=DEFAULT_OUTAGE_WAIT,
        metavar="SECONDS",
        help="while the server is away the queue pauses; after this long the batch stops, exit 1, the "
        f"tasks not run left for the same command to run (default {DEFAULT_OUTAGE_WAIT:g})",
    )
    parser.add_argument("--max-iterations", type=int, metavar="N", help="model requests per task")
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help=f"wall clock per task (default {DEFAULT_TIME_BUDGET:g})",
    )
    parser.add_argument(
        "--check-timeout", type=float, default=300.0, metavar="SECONDS", help="for setup and for check"
    )
    parser.add_argument(
        "--keep-workspaces", action="store_true", help="keep each task's copy of its workspace"
    )
    parser.add_argument("--no-trace", dest="trace", action="store_false", help="no DEBUG trace per task")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run many tasks against the server at once, each in its own copy of its workspace; results as "
        f"JSON lines, resumable. `{program_name()} batch merge --help` joins results of several machines."
    )
    parser.epilog = (
        "exit codes: 0 every task passed, 1 a task failed, 2 bad input, 3 interrupted (rerun resumes)"
    )
    parser.add_argument(
        "tasks", metavar="TASKS.jsonl", help='one {"id", "workspace", "task", "check"?, "setup"?} per line'
    )
    run_flags(parser)
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only this machine's share of the tasks (1 <= I <= N); `auto` reads the index of a SLURM "
        "job array, `auto/N` a Kubernetes indexed Job's (N: its completions)",
    )
    parser.add_argument(
        "--output-format", choices=["text", "json"], default="text", help="summary as a table or JSON"
    )

    ray_flags(parser)


def settings_from(args: argparse.Namespace, output_dir: Path, config: Any) -> BatchSettings:
    """BatchSettings from the flags `run_flags` added (checked: exit 2 on a bad value)."""
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.check_timeout <= 0:
        raise UsageError(f"--check-timeout must be above 0, got {args.check_timeout:g}")
    if args.outage_wait < 0:
        raise UsageError(f"--outage-wait must be 0 or more, got {args.outage_wait:g}")
    return BatchSettings(
        output_dir=output_dir.resolve(),
        workers=args.workers or 4,
        approval="full-auto" if args.yes else args.approval,
        outage_wait=args.outage_wait,
        max_iterations=args.max_iterations,
        time_budget=args.time_budget or config.agent.time_budget or DEFAULT_TIME_BUDGET,
        check_timeout=args.check_timeout,
        function_calling=args.function_calling,
        keep_workspaces=args.keep_workspaces,
        trace=args.trace,
    )


def load(args: argparse.Namespace) -> tuple[Any, str]:
    """(the effective config with the flags on top, the served model): the server is looked at first,
    so a batch never starts against a server that is not there (exit 1)."""
    config = config_from(args)
    model = ModelClient(config.vllm, system_prompt=lambda text_mode, tools: "").resolve_model()
    return config, model


def config_from(args: argparse.Namespace) -> Any:
    """The effective config with the flags on top (the server not asked)."""
    overrides = {**overrides_from(args), "agent.time_budget": args.time_budget}
    return load_config(args.config, overrides=overrides)


def run(args: argparse.Namespace) -> int:
    tasks_path = Path(args.tasks)
    try:
        shard = parse_shard(args.shard) if args.shard else None
        specs = [s for s in load_tasks(tasks_path) if in_shard(s.id, shard)]
    except (TasksError, ValueError) as e:
        raise UsageError(str(e)) from None
    config = config_from(args)
    output_dir = (
        Path(args.output_dir) if args.output_dir else tasks_path.with_name(tasks_path.stem + "-batch")
    )
    settings = settings_from(args, output_dir, config)
    settings.shard, settings.ray = shard, ray_settings(args)
    batch = Batch(settings, config, specs, view_for())
    try:
        todo = batch.todo()
    except ResultsError as e:
        raise UsageError(str(e)) from None
    if not todo:  # nothing to run: the server need not be there
        rows = list(batch.earlier().values())
        batch.view.note(f"nothing to do: every task has a result in {batch.results.path}")
        code = exit_code(rows, False, [])
        report(rows, {}, args.output_format, code, extra={"results": str(batch.results.path), "not_run": []})
        return code
    batch.connect()
    outcome = batch.run()
    code = exit_code(outcome.rows, outcome.interrupted, outcome.not_run)
    extra = outcome_fields(outcome, settings)
    report(outcome.rows, outcome.server, args.output_format, code, extra, outcome.wall_seconds)
    if outcome.interrupted:
        left = len(outcome.not_run)
        print(f"vllm-bot: interrupted; the same command resumes ({left} tasks left)", file=sys.stderr)
    elif outcome.stopped:
        print(f"vllm-bot: stopped: {outcome.stopped} ({len(outcome.not_run)} tasks left)", file=sys.stderr)
    return code


def exit_code(rows: list[dict[str, Any]], interrupted: bool, not_run: list[str]) -> int:
    if interrupted:
        return EXIT_LIMIT
    return EXIT_OK if not not_run and all(r.get("passed") for r in rows) else EXIT_RUNTIME


def outcome_fields(outcome: Any, settings: BatchSettings) -> dict[str, Any]:
    return {
        "output_dir": str(settings.output_dir),
        "results": str(settings.output_dir / results_name(settings.shard)),
        "interrupted": outcome.interrupted,
        "stopped": outcome.stopped,
        "not_run": outcome.not_run,
        "wall_seconds": round(outcome.wall_seconds, 3),
    }


def report(
    rows: list[dict[str, Any]],
    server: dict[str, float | None],
    output_format: str,
    code: int,
    extra: dict[str, Any],
    wall_seconds: float | None = None,
) -> None:
    """The summary on stdout: a table with lines under it, or one JSON object."""
    summary = summarize(rows)
    if output_format == "json":
        data = {"type": "batch_summary", "schema_version": 1, **extra, "summary": summary, "server": server}
        print(json.dumps({**data, "exit_code": code}, ensure_ascii=True))
        return

    table, note = task_rows(rows)
    notes = ([note] if note else []) + summary_lines(summary, server, wall_seconds)
    if extra.get("results"):
        notes.append(f"results: {extra['results']}")
    print_table("batch results", HEADERS, table, notes)


def add_merge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Join the results of several batch output directories (or results files) into one."
    parser.epilog = "exit codes: 0 merged, 1 tasks named by --tasks have no result, 2 bad input"
    parser.add_argument("paths", nargs="+", metavar="OUT", help="batch output directories or results files")
    parser.add_argument(
        "-o", "--output", metavar="FILE", default="results-merged.jsonl", help="merged results (JSONL)"
    )
    parser.add_argument(
        "--tasks", metavar="TASKS.jsonl", help="report the tasks of this file that have no result"
    )
    parser.add_argument(
        "--output-format", choices=["text", "json"], default="text", help="summary as a table or JSON"
    )


def run_merge(args: argparse.Namespace) -> int:
    try:
        rows, notes = merge([Path(p) for p in args.paths])
        wanted = [s.id for s in load_tasks(Path(args.tasks))] if args.tasks else []
    except (ResultsError, TasksError) as e:
        raise UsageError(str(e)) from None
    for note in notes:
        print(f"vllm-bot batch merge: {note}", file=sys.stderr)
    write_atomic(Path(args.output), rows)
    done = {row["id"] for row in rows}
    missing = [task_id for task_id in wanted if task_id not in done]
    code = EXIT_RUNTIME if missing else EXIT_OK
    extra = {"results": str(Path(args.output).resolve()), "missing": missing}
    report(rows, {}, args.output_format, code, extra)
    if missing:
        print(
            f"vllm-bot batch merge: {len(missing)} tasks have no result: {', '.join(missing[:20])}",
            file=sys.stderr,
        )
    return code
