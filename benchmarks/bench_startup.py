"""Start-up: `cli.py --help` and `--version` (wall time, peak memory), and the time from launching
`cli.py -p` to its first request reaching the server.

    python benchmarks/bench_startup.py [--quick]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import CLI, ROOT, median, python, row, run_child, scripted_server, to_markdown


def bench_flag(flag: str, runs: int) -> list[dict[str, Any]]:
    results = [run_child([python(), str(CLI), flag]) for _ in range(runs)]
    assert all(r.returncode == 0 for r in results), results[0].stderr
    wall = median([r.wall for r in results]) * 1000
    peak = median([r.peak_kb for r in results]) / 1024
    note = f"median of {runs} runs; target < 150 ms"
    return [
        row(f"cli.py {flag}: wall", round(wall), "ms", note),
        row(f"cli.py {flag}: peak RSS", round(peak, 1), "MB", ""),
    ]


def first_request(runs: int) -> list[dict[str, Any]]:
    """Launch `cli.py -p` against a fake server in its own process; measure launch -> first request."""
    delays, totals = [], []
    state = Path(tempfile.mkdtemp(prefix="bench-start-state-"))  # one for every run, as a user has
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
            log = Path(tmp) / "requests.jsonl"
            workspace = Path(tmp) / "ws"
            workspace.mkdir()
            # the server writes its log as it stops
            with scripted_server(
                ROOT / "benchmarks" / "serve.py", "answer", "1", str(log), stop_timeout=10
            ) as url:
                launched = time.time()
                run = run_child(
                    [python(), str(CLI), "-p", "say done", "--base-url", url, "--workspace", str(workspace)],
                    env={"XDG_STATE_HOME": str(state)},
                )
            assert run.returncode == 0, run.stderr
            records = [json.loads(line) for line in log.read_text().splitlines()]
            arrived = next(r["t"] for r in records if "body" in r)  # the first chat request
            delays.append((arrived - launched) * 1000)
            totals.append(run.wall * 1000)
    shutil.rmtree(state, ignore_errors=True)
    note = f"median of {runs} runs; fake server in its own process, zero model latency"
    return [
        row("cli.py -p: launch to first request at the server", round(median(delays)), "ms", note),
        row(
            "cli.py -p: whole one-turn task", round(median(totals)), "ms", "start, one request, answer, exit"
        ),
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    runs = 3 if quick else 11
    return [*bench_flag("--help", runs), *bench_flag("--version", runs), *first_request(2 if quick else 7)]


if __name__ == "__main__":
    print(to_markdown(run(quick="--quick" in sys.argv)))
