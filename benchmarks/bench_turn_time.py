"""The agent's own time per turn, seen from the server: from the end of one streamed answer to the
arrival of the next chat request (everything the agent does in between: parse, run the tool, save
history, count tokens, build and send the request). Sessions of 5 / 20 / 80 / 200 `read` turns and
of 20 `exec` turns (a command that exits at once; in the sandbox when bubblewrap works here, in a
plain folder and in a git repository; and with `sandbox.mode: off`), run through the real `cli.py -p`
against the fake server in its own process with zero model latency; the lengths are interleaved and
every figure is the median of the runs. The `exec` sessions run once more with the model taking
THINK seconds before each answer, as a real one does; the gaps never include the thinking. Also:
launch to first chat request, whole-process wall, CPU and peak RSS, and how many `/tokenize` requests
a session makes. With `--baseline DIR` (another checkout, e.g. an older commit) its `cli.py` runs in
turn with ours, against the same server, and each row gives both.

    python benchmarks/bench_turn_time.py [--quick] [--runs N] [--baseline DIR]
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import CLI, ROOT, ChildRun, median, python, row, run_child, scripted_server, to_markdown

SERVE = ROOT / "benchmarks" / "serve.py"
CHAT = "/v1/chat/completions"


def session(scenario: str, n: int, tmp: Path, cli: Path = CLI, state: Path | None = None) -> dict[str, Any]:
    """One n-turn session: the gaps between chat requests (ms), launch -> first request (ms), the
    number of /tokenize requests, and the process's own figures."""
    workspace = tmp / "ws"
    (workspace / "notes").mkdir(parents=True)
    for i in range(7):
        (workspace / "notes" / f"n{i}.txt").write_text("".join(f"note {i} line {k}\n" for k in range(40)))
    if "-repo" in scenario:  # a repository, as most users' workspaces are
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    log = tmp / "requests.jsonl"
    think = THINK if scenario.endswith("-think") else 0.0
    with scripted_server(SERVE, scenario.split("-")[0], str(n), str(log), str(think)) as url:
        argv = [python(), str(cli), "-p", "read the notes", "--yes", "--base-url", url]
        argv += ["--workspace", str(workspace), "--max-iterations", str(n + 5)]
        if "-unsandboxed" in scenario:
            (tmp / "config.json").write_text(json.dumps({"sandbox": {"mode": "off"}}))
            argv += ["--config", str(tmp / "config.json")]
        launched = time.time()
        run: ChildRun = run_child(argv, env={"XDG_STATE_HOME": str(state or tmp / "state")})
    assert run.returncode == 0, run.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    chats = [r for r in records if r["path"] == CHAT]
    assert len(chats) == n, f"{len(chats)} chat requests for {n} turns"
    gaps = [(b["t"] - a["done"]) * 1000 for a, b in itertools.pairwise(chats)]
    return {
        "gap": median(gaps),
        "gap_last": median(gaps[-min(5, len(gaps)) :]),
        "first": (chats[0]["t"] - launched) * 1000,
        "tokenize": sum(r["path"] == "/tokenize" for r in records),
        "wall": run.wall,
        "cpu": run.cpu,
        "peak": run.peak_kb / 1024,
    }


THINK = 0.2  # seconds the "model" takes before each answer in the -think sessions
CASES = [("turns", 5), ("turns", 20), ("execs", 20), ("execs-repo", 20), ("execs-unsandboxed", 20)]
CASES += [("execs-think", 20), ("execs-repo-think", 20), ("execs-unsandboxed-think", 20)]
CASES += [("turns", 80), ("turns", 200)]


def run(quick: bool = False, runs: int = 5, baseline: Path | None = None) -> list[dict[str, Any]]:
    cases = [c for c in CASES if c[1] <= 20] if quick else CASES
    runs = 1 if quick else runs
    clis = {"ours": CLI, **({"baseline": baseline / "cli.py"} if baseline else {})}
    results: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-turn-time-") as tmp_name:
        for i in range(runs):  # interleaved: a slow minute on the shared machine hits every length
            for scenario, n in cases:
                for who, cli in clis.items():
                    tmp = Path(tmp_name) / f"{who}-{scenario}{n}-{i}"
                    state = Path(tmp_name) / f"state-{who}"  # one per checkout, as a user has one
                    results.setdefault((who, scenario, n), []).append(session(scenario, n, tmp, cli, state))
    rows: list[dict[str, Any]] = []
    for scenario, n in cases:
        rows += _rows(scenario, n, {who: results[who, scenario, n] for who in clis}, runs)
    first = {
        who: median([s["first"] for (w, _, _), ss in results.items() if w == who for s in ss]) for who in clis
    }
    rows.append(
        row("cli.py -p: launch to first chat request", round(first["ours"]), "ms", _vs(first, "{:.0f} ms"))
    )
    return rows


def _rows(scenario: str, n: int, by: dict[str, list[dict[str, Any]]], runs: int) -> list[dict[str, Any]]:
    def med(key: str) -> dict[str, float]:
        return {who: median([s[key] for s in sessions]) for who, sessions in by.items()}

    tool = {
        "turns": "`read`",
        "execs": "`exec`",
        "execs-repo": "`exec` (in a repository)",
        "execs-unsandboxed": "unsandboxed `exec`",
    }[scenario.removesuffix("-think")]
    thinks = f", the model thinking {THINK:g} s" if scenario.endswith("-think") else ""
    gap, last, cpu = med("gap"), med("gap_last"), med("cpu")
    note = f"median gap of {n - 1}, median of {runs} runs; last 5 turns {last['ours']:.1f} ms"
    cpu_note = f"peak RSS {med('peak')['ours']:.1f} MiB, {med('tokenize')['ours']:.0f} /tokenize requests"
    return [
        row(
            f"agent time per turn, {n} {tool} turns{thinks}",
            round(gap["ours"], 1),
            "ms",
            note + _vs(gap, "{:.1f} ms"),
        ),
        row(
            f"{n}-turn {tool} session{thinks}: CPU",
            round(cpu["ours"], 2),
            "s",
            cpu_note + _vs(cpu, "{:.2f} s"),
        ),
        row(
            f"{n}-turn {tool} session{thinks}: wall",
            round(med("wall")["ours"], 2),
            "s",
            _vs(med("wall"), "{:.2f} s"),
        ),
    ]


def _vs(values: dict[str, float], fmt: str) -> str:
    if "baseline" not in values:
        return ""
    return f"; baseline {fmt.format(values['baseline'])} (ratio {values['ours'] / values['baseline']:.2f})"


if __name__ == "__main__":
    count = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    base = Path(sys.argv[sys.argv.index("--baseline") + 1]) if "--baseline" in sys.argv else None
    print(to_markdown(run(quick="--quick" in sys.argv, runs=count, baseline=base)))
