"""`vllm-bot eval`: run the bundled suite through `batch` against the configured server and score it.

Exit codes: 0 the suite ran; 1 some tasks could not be judged (server errors, crashes) or the
server is unreachable; 2 bad flags or config; 3 interrupted (the same command with --output-dir
resumes).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from ..batch.cli import Command, load, run_flags, settings_from
from ..cliargs import UsageError, program_name
from ..errors import EXIT_LIMIT, EXIT_OK, EXIT_RUNTIME
from .report import MODE_HEADERS, SCHEMA_VERSION, UNJUDGED, mode_rows, run_record, task_rows, verdict

MODES = {"native": True, "text": False}
EVAL_ITERATIONS = 30
EVAL_TIME_BUDGET = 600.0


def command() -> Command:
    return add_arguments, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Score how well this model and server drive the agent: the bundled coding tasks run through "
        "`batch`; prints tasks solved, iterations, tokens and time per task, malformed calls, the "
        "tool-call mode used and a one-line verdict."
    )
    parser.epilog = "exit codes: 0 the suite ran, 1 tasks could not be judged, 2 bad input, 3 interrupted"
    run_flags(parser)
    parser.add_argument(
        "--modes", metavar="MODES", help="native, text or native,text (runs each and compares)"
    )
    parser.add_argument(
        "--tasks", metavar="IDS", help="only these tasks (comma-separated ids; --list shows them)"
    )
    parser.add_argument("--list", action="store_true", help="list the bundled tasks and exit")
    parser.add_argument("--json", action="store_true", help="print one JSON object (for tracking over time)")


def parse_modes(value: str | None) -> list[str]:
    if not value:
        return ["default"]
    modes = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes or len(set(modes)) != len(modes):
        raise UsageError(f"--modes takes native, text or native,text; got {value!r}")
    return modes


def run(args: argparse.Namespace) -> int:
    from .suite import bundled, select

    try:
        tasks = select(bundled(), args.tasks)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.list:
        return list_tasks(tasks)
    modes = parse_modes(args.modes)
    if args.function_calling is not None and args.modes:
        raise UsageError(
            "--modes chooses the tool-call mode; leave out --function-calling / --no-function-calling"
        )
    args.max_iterations = args.max_iterations or EVAL_ITERATIONS
    args.time_budget = args.time_budget or EVAL_TIME_BUDGET
    config, model = load(args)
    out = Path(args.output_dir) if args.output_dir else default_output(model)
    runs, interrupted, skipped = run_suite(args, config, tasks, modes, out)
    kinds = {t.id: t.kind for t in tasks}
    result = {
        "type": "eval_result",
        "schema_version": SCHEMA_VERSION,
        "suite_version": suite_version(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "model": model,
        "base_url": config.vllm.base_url,
        "output_dir": str(out.resolve()),
        "interrupted": interrupted,
        "skipped": skipped,
        "runs": runs,
        "verdict": verdict(model, runs),
    }
    (out / "eval.json").write_text(json.dumps(result, indent=2) + "\n")
    show(result, kinds, args.json)
    if interrupted:
        print(f"vllm-bot eval: interrupted; this resumes it: {resume_command(out)}", file=sys.stderr)
        return EXIT_LIMIT
    unjudged = any(run["summary"]["statuses"].get(s) for run in runs.values() for s in UNJUDGED)
    return EXIT_RUNTIME if unjudged else EXIT_OK


def resume_command(out: Path) -> str:
    """The command as run, with `--output-dir` naming this run's directory (a plain rerun starts a
    new one): finished tasks are skipped, each mode's batch resumes where it stopped."""
    args, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
        elif arg == "--output-dir":
            skip = True
        elif not arg.startswith("--output-dir="):
            args.append(arg)
    return f"{program_name()} {shlex.join([*args, '--output-dir', str(out.resolve())])}"


def run_suite(
    args: argparse.Namespace, config: Any, tasks: list[Any], modes: list[str], out: Path
) -> tuple[dict[str, Any], bool, list[dict[str, Any]]]:
    """Each mode's batch over the suite: (records by mode, interrupted, skipped tasks)."""
    from ..batch.runner import Batch
    from ..batch.tasks import load_tasks
    from ..ui.batch_view import view_for
    from .suite import materialize

    skipped = [{"id": t.id, "missing": t.missing()} for t in tasks if t.missing()]
    for task in skipped:
        print(
            f"vllm-bot eval: skipping {task['id']} ({', '.join(task['missing'])} not found)", file=sys.stderr
        )
    runnable = [t for t in tasks if not t.missing()]
    warn_if_unsandboxed(config)
    tasks_file, hidden = materialize(runnable, out / "suite")
    specs = load_tasks(tasks_file)
    runs: dict[str, Any] = {}
    for mode in modes:
        settings = settings_from(args, out / mode, config)
        settings.hidden_paths = [str(hidden)]
        settings.function_calling = MODES.get(mode, args.function_calling)
        print(
            f"vllm-bot eval: {len(specs)} tasks, mode {mode}, output in {settings.output_dir}"
            f" (resume with --output-dir {shlex.quote(str(out))})",
            file=sys.stderr,
        )
        outcome = Batch(settings, config, specs, view_for()).run()
        runs[mode] = run_record(outcome.rows, outcome.server, str(settings.output_dir))
        if outcome.interrupted:
            return runs, True, skipped
    return runs, False, skipped


def warn_if_unsandboxed(config: Any) -> None:
    """The hidden tests are hidden by the sandbox: without it an agent's commands can read them."""
    from ..safety.sandbox.status import probe

    status = probe(config.sandbox)
    if not status.active:
        print(
            f"vllm-bot eval: warning: {status.warning}. The tasks' hidden tests are hidden from the "
            "agents' commands only inside the sandbox, so without it a score may count tasks solved "
            "by reading them",
            file=sys.stderr,
        )


def show(result: dict[str, Any], kinds: dict[str, str], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=True))
        return
    from ..ui.batch_view import print_table

    runs = result["runs"]
    headers, rows = task_rows(runs, kinds)
    print_table(f"eval: {result['model']} at {result['base_url']}", headers, rows, [])
    notes = [f"verdict: {result['verdict']}", f"details: {result['output_dir']}"]
    print_table("per task, by mode", MODE_HEADERS, mode_rows(runs), notes)


def list_tasks(tasks: list[Any]) -> int:
    from ..ui.batch_view import print_table

    rows = [[t.id, t.kind, t.language, " ".join(t.task.split())[:70]] for t in tasks]
    print_table(f"{len(tasks)} bundled eval tasks", ["task", "kind", "language", "what"], rows, [])
    return EXIT_OK


def default_output(model: str) -> Path:
    """A new directory per run in our state dir: $XDG_STATE_HOME/vllm-bot/eval/<time>-<model>."""
    from ..statedir import user_state_dir

    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rsplit("/", 1)[-1])[:40]
    return user_state_dir() / "eval" / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"


def suite_version() -> int:
    from .suite import SUITE_VERSION

    return SUITE_VERSION
