"""CI runs every benchmark in quick mode: it checks they run and report, never how fast (issue 10).
One test per suite (`run_all.py --only`), so the parallel workers share them out."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_ALL = ROOT / "benchmarks" / "run_all.py"


def suites() -> dict[str, tuple[str, str]]:
    """run_all.py's SUITES (name -> (module, heading)), read without importing the benchmarks."""
    for node in ast.parse(RUN_ALL.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SUITES":
            return ast.literal_eval(node.value)
    raise AssertionError("benchmarks/run_all.py has no SUITES")


SUITES = suites()
# Rows a suite's section must show, beyond its heading and at least one row.
NEEDLES = {
    "startup": ["cli.py --help: wall"],
    "turns": ["agent overhead per turn beyond the floor", "4,096-token window"],
    "prompt": ["system prompt + tools, function-calling mode"],
    "stream": ["assemble tool-call deltas"],
    "batch": ["tasks per minute"],
}


def test_every_suite_with_needles_is_run():
    assert set(NEEDLES) <= set(SUITES)
    assert {"startup", "turns", "prompt", "stream", "parsing", "ui", "tools", "checkpoints", "batch"} <= set(
        SUITES
    )


@pytest.mark.parametrize("suite", list(SUITES))
def test_every_benchmark_runs_in_quick_mode(tmp_path, suite):
    out = tmp_path / "benchmarks.md"
    proc = subprocess.run(
        [sys.executable, str(RUN_ALL), "--quick", "--only", suite, "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "Command: `python benchmarks/run_all.py --quick`" in text
    assert f"## {SUITES[suite][1]}" in text
    for needle in NEEDLES.get(suite, []):
        assert needle in text, needle
    rows = [
        line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| benchmark")
    ]
    assert rows
