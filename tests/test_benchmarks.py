"""CI runs every benchmark in quick mode: it checks they run and report, never how fast (issue 10)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_benchmark_runs_in_quick_mode(tmp_path):
    out = tmp_path / "benchmarks.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "Command: `python benchmarks/run_all.py --quick`" in text
    for heading in (
        "Start-up",
        "Per-turn overhead",
        "Prompt footprint",
        "Streaming throughput",
        "Tool-call parser",
        "Terminal display",
        "Tools",
        "Checkpoints",
        "Batch: many tasks at once",
    ):
        assert f"## {heading}" in text, heading
    for needle in (
        "cli.py --help: wall",
        "agent overhead per turn beyond the floor",
        "system prompt + tools, function-calling mode",
        "assemble tool-call deltas",
        "4,096-token window",
        "tasks per minute",
    ):
        assert needle in text, needle
    rows = [
        line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| benchmark")
    ]
    assert len(rows) >= 25
