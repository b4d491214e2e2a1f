"""`vllm-bot batch`: tasks per minute against the fake server with a fixed per-turn latency, by number
of workers, and the CPU one task turn costs inside a batch compared with a lone headless session.

Every task is a real agent process in its own git worktree; the fake server runs in its own process
with 200 ms per reply, so a task of 4 turns takes at least 0.8 s of model time and N workers can at
best finish N tasks per (0.8 s + start-up). On a small machine the agents' start-up (Python and the
openai SDK, about a CPU-second each) is the limit long before the server is. The machine's load
average is recorded with the figures: this box is shared.

    python benchmarks/bench_batch.py [--quick]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import CLI, ROOT, ChildRun, python, row, run_child, scripted_server, to_markdown

SERVE = ROOT / "benchmarks" / "serve_batch.py"
LATENCY = 0.2
TURNS = 4


def _workspace(tmp: Path) -> Path:
    repo = tmp / "repo"
    (repo / "notes").mkdir(parents=True)
    for i in range(7):
        (repo / "notes" / f"n{i}.txt").write_text("".join(f"note {i} line {k}\n" for k in range(40)))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "notes"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def batch(tmp: Path, tasks: int, workers: int, turns: int, latency: float) -> ChildRun:
    """One `vllm-bot batch` run of `tasks` tasks; every task must finish."""
    tmp.mkdir(parents=True)
    repo = _workspace(tmp)
    tasks_file = tmp / "tasks.jsonl"
    lines = [
        {"id": f"bench-{i}", "workspace": str(repo), "task": f"Read the notes [bench-{i}]"}
        for i in range(tasks)
    ]
    tasks_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with scripted_server(SERVE, str(tasks), str(turns), str(latency)) as url:
        run = run_child(
            [
                python(),
                str(CLI),
                "batch",
                str(tasks_file),
                "--base-url",
                url,
                "--workers",
                str(workers),
                "--no-trace",
                "--max-iterations",
                str(turns + 2),
                "--output-format",
                "json",
            ],
            env={"XDG_STATE_HOME": str(tmp / "state")},
        )
    summary = json.loads(run.stdout.splitlines()[-1]) if run.stdout.strip() else {}
    assert run.returncode == 0 and summary.get("summary", {}).get("passed") == tasks, run.stderr[-2000:]
    return run


def lone(tmp: Path, turns: int) -> ChildRun:
    """One headless session of `turns` turns, as a batch task would run it but alone."""
    tmp.mkdir(parents=True)
    repo = _workspace(tmp)
    with scripted_server(SERVE, "1", str(turns), "0.0") as url:
        run = run_child(
            [
                python(),
                str(CLI),
                "-p",
                "Read the notes [bench-0]",
                "--yes",
                "--base-url",
                url,
                "--workspace",
                str(repo),
                "--output-format",
                "stream-json",
                "--max-iterations",
                str(turns + 2),
            ],
            env={"XDG_STATE_HOME": str(tmp / "state")},
        )
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def throughput(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    plan = {2: 2} if quick else {1: 6, 4: 16, 16: 48, 64: 128}
    rows = []
    for workers, tasks in plan.items():
        load = os.getloadavg()[0]
        run = batch(tmp / f"w{workers}", tasks, workers, TURNS, LATENCY)
        per_minute = tasks / run.wall * 60
        rows.append(
            row(
                f"{workers} worker{'s' if workers > 1 else ''}: tasks per minute",
                round(per_minute, 1),
                "tasks/min",
                f"{tasks} tasks of {TURNS} turns at {LATENCY * 1000:.0f} ms/turn in {run.wall:.1f} s; "
                f"{run.cpu / tasks:.2f} CPU-s per task (all processes); load average {load:.1f} at start",
            )
        )
    return rows


def per_turn(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    """CPU per task turn: the slope between short and long tasks, start-up excluded (the start-up of a
    Python process varies by a tenth of a CPU-second, so the long tasks are long)."""
    short, long, tasks, repeats = (2, 3, 1, 1) if quick else (2, 42, 8, 3)
    runs = {n: batch(tmp / f"turns{n}", tasks, 4, n, 0.0) for n in (short, long)}
    in_batch = (runs[long].cpu - runs[short].cpu) / (tasks * (long - short)) * 1000
    slopes = []
    for i in range(repeats):
        alone = {n: lone(tmp / f"lone{n}-{i}", n) for n in (short, long)}
        slopes.append((alone[long].cpu - alone[short].cpu) / (long - short) * 1000)
    single = statistics.median(slopes)
    return [
        row(
            "CPU per task turn in a batch",
            round(in_batch, 2),
            "ms",
            f"slope {short}->{long} turns, {tasks} tasks, 4 workers, zero latency: agents, git and the batch",
        ),
        row(
            "CPU per turn of a lone headless session",
            round(single, 2),
            "ms",
            f"slope {short}->{long} turns, same replies; median of {repeats}",
        ),
        row(
            "batch cost per task turn beyond a lone session",
            round(in_batch - single, 2),
            "ms CPU",
            "stream-json events, read and tallied by the batch; the agent's own cost is in bench_turns",
        ),
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp_name:
        tmp = Path(tmp_name)
        return throughput(tmp, quick) + per_turn(tmp, quick)


if __name__ == "__main__":
    print(to_markdown(run(quick="--quick" in sys.argv)))
