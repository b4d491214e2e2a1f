"""`vllm-bot eval`: run the bundled suite through `batch` against the configured server and score it.

Exit codes: 0 the suite ran; 1 some tasks could not be judged (server errors, crashes), some did not
run, or the server is unreachable; 2 bad flags or config; 3 interrupted (the same command with
--output-dir resumes).
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
from ..batch.runner import Batch
from ..batch.tasks import load_tasks
from ..cliargs import UsageError, program_name
from ..config.statedir import user_state_dir
from ..errors import EXIT_LIMIT, EXIT_OK, EXIT_RUNTIME
from ..ui.batch_view import print_table, view_for
from .figures import run_record
from .hiding import confined, sandbox_record
from .report import CALL_HEADERS, SCHEMA_VERSION, SCORE_HEADERS, call_rows, score_rows, task_rows
from .suite import SUITE_VERSION, bundled, materialize, select
from .verdict import UNJUDGED, fixes, verdict

MODES = {"native": True, "text": False}
EVAL_ITERATIONS = 30
EVAL_TIME_BUDGET = 600.0
OWN_DEFAULTS = {  # batch's flags whose default eval sets otherwise
    "--max-iterations": f"model requests per task (default {EVAL_ITERATIONS})",
    "--time-budget": f"wall clock per task (default {EVAL_TIME_BUDGET:g})",
}


def command() -> Command:
    return add_arguments, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Score how well this model and server drive the agent: the bundled tasks (three tiers: tool "
        "use, single file, repository) run through `batch`; prints the tasks solved per tier, how the "
        "model's tool calls fared, tokens and time per solved task, and a verdict that names what to fix."
    )
    parser.epilog = (
        "exit codes: 0 the suite ran, 1 tasks could not be judged or did not run, 2 bad input, 3 interrupted"
    )
    run_flags(parser)
    for action in parser._actions:
        for flag in set(action.option_strings) & set(OWN_DEFAULTS):
            action.help = OWN_DEFAULTS[flag]
    parser.add_argument(
        "--modes", metavar="MODES", help="native, text or native,text (runs each and compares)"
    )
    parser.add_argument(
        "--tasks",
        metavar="IDS",
        help="only these tasks: comma-separated ids or tiers (tools, file, repo); --list shows them",
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
    out.mkdir(parents=True, exist_ok=True)
    sandbox = sandbox_record(config, out.resolve())
    for warning in sandbox["warnings"]:
        print(f"vllm-bot eval: warning: {warning}", file=sys.stderr)
    runs, interrupted, not_run, skipped = run_suite(args, config, tasks, modes, out)
    partial = interrupted or bool(not_run)
    result = {
        "type": "eval_result",
        "schema_version": SCHEMA_VERSION,
        "suite_version": SUITE_VERSION,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "model": model,
        "base_url": config.vllm.base_url,
        "output_dir": str(out.resolve()),
        "sandbox": {"active": sandbox["active"], "mode": sandbox["mode"]},
        "interrupted": interrupted,
        "not_run": not_run,
        "skipped": skipped,
        "runs": runs,
        "verdict": None if partial else verdict(model, runs),
        "fixes": fixes(runs),
        "resume": resume_command(out) if partial else None,
    }
    (out / "eval.json").write_text(json.dumps(result, indent=2) + "\n")
    show(result, {t.id: f"{t.tier}: {t.kind}" for t in tasks}, args.json)
    if partial:
        what = "interrupted" if interrupted else f"{len(not_run)} tasks did not run"
        print(f"vllm-bot eval: {what}, so no verdict; this resumes it: {result['resume']}", file=sys.stderr)
        return EXIT_LIMIT if interrupted else EXIT_RUNTIME
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
) -> tuple[dict[str, Any], bool, list[str], list[dict[str, Any]]]:
    """Each mode's batch over the suite: (records by mode, interrupted, ids not run, skipped tasks)."""
    skipped = [{"id": t.id, "missing": t.missing()} for t in tasks if t.missing()]
    for task in skipped:
        print(
            f"vllm-bot eval: skipping {task['id']} ({', '.join(task['missing'])} not found)", file=sys.stderr
        )
    runnable = [t for t in tasks if not t.missing()]
    tiers = {t.id: t.tier for t in runnable}
    tasks_file, hidden = materialize(runnable, out / "suite")
    specs = load_tasks(tasks_file)
    runs: dict[str, Any] = {}
    not_run: list[str] = []
    for mode in modes:
        mode_config = confined(config, out.resolve(), mode, modes)
        settings = settings_from(args, out / mode, mode_config)
        settings.hidden_paths = [str(hidden)]
        settings.function_calling = MODES.get(mode, args.function_calling)
        print(
            f"vllm-bot eval: {len(specs)} tasks, mode {mode}, output in {settings.output_dir}"
            f" (resume with --output-dir {shlex.quote(str(out))})",
            file=sys.stderr,
        )
        outcome = Batch(settings, mode_config, specs, view_for()).run()
        runs[mode] = run_record(outcome.rows, outcome.server, settings.output_dir, tiers)
        not_run += [f"{mode}/{task_id}" for task_id in outcome.not_run]
        if outcome.interrupted:
            return runs, True, not_run, skipped
    return runs, False, not_run, skipped


def show(result: dict[str, Any], kinds: dict[str, str], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=True))
        return

    runs = result["runs"]
    headers, rows = task_rows(runs, kinds)
    print_table(f"eval: {result['model']} at {result['base_url']}", headers, rows, [])
    print_table("score by tier", SCORE_HEADERS, score_rows(runs), [])
    said = result["verdict"] or "none (the run did not finish)"
    notes = [f"verdict: {said}", *(f"fix: {fix}" for fix in result["fixes"])]
    notes.append(f"sandbox: {'on' if result['sandbox']['active'] else 'OFF'}")
    notes.append(f"details: {result['output_dir']}")
    print_table("tool calls and cost, by mode", CALL_HEADERS, call_rows(runs), notes)


def list_tasks(tasks: list[Any]) -> int:
    rows = [[t.id, t.tier, t.kind, t.language, " ".join(t.task.split())[:60]] for t in tasks]
    print_table(f"{len(tasks)} bundled eval tasks", ["task", "tier", "kind", "language", "what"], rows, [])
    return EXIT_OK


def default_output(model: str) -> Path:
    """A new directory per run in our state dir: $XDG_STATE_HOME/vllm-bot/eval/<time>-<model>."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rsplit("/", 1)[-1])[:40]
    return user_state_dir() / "eval" / f"{time.strftime('%Y%m%d-%H%M%S')}-{slug}"
