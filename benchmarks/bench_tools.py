"""Benchmarks for the tools: time and peak memory of read, edit and exec on large inputs.

Each measurement runs in a fresh Python subprocess (so ru_maxrss is the peak of that operation's
process, the "agent"), after a warm-up call that imports everything a call needs.

    python benchmarks/bench_tools.py           # full sizes: 1 GB read, 50 MB edit, 200 MB exec
    python benchmarks/bench_tools.py --quick   # small sizes, to check the benchmark runs
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import SRC, to_markdown

LINE = b"%012d the quick brown fox jumps over the lazy dog, again\n"  # 64 bytes

_MEASURE = """
import json, sys, time
sys.path.insert(0, {src!r})
def hwm():  # this process's own peak RSS (ru_maxrss would include the parent's, carried over exec)
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
from pathlib import Path
from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor
ex = ToolExecutor(Path({ws!r}), ToolsConfig(exec_timeout=600))
ex.execute("read", {{"path": "."}})
ex.execute("exec", {{"command": "true"}})
before = hwm()
start = time.perf_counter()
result = ex.execute({tool!r}, {args!r})
seconds = time.perf_counter() - start
peak = hwm()
print(json.dumps({{"seconds": seconds, "before_kb": before, "peak_kb": peak, "kind": result.kind,
                  "head": result.value[:160]}}))
"""


def measure(ws: Path, tool: str, args: dict) -> dict:
    """Run one tool call in a fresh process; returns seconds, peak RSS and the result's start."""
    script = _MEASURE.format(src=str(SRC), ws=str(ws), tool=tool, args=args)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_text_file(path: Path, size: int) -> int:
    """Write about `size` bytes of numbered 64-byte lines; returns the number of lines."""
    lines = max(1, size // len(LINE))
    block = 16384  # lines per write
    with path.open("wb") as f:
        for start in range(0, lines, block):
            f.write(b"".join(LINE % i for i in range(start, min(start + block, lines))))
    return lines


def _rows(name: str, m: dict, note: str) -> list[dict]:
    growth = max(0, m["peak_kb"] - m["before_kb"]) / 1024
    return [
        {"benchmark": f"{name}: time", "value": round(m["seconds"], 3), "unit": "s", "note": note},
        {
            "benchmark": f"{name}: peak memory",
            "value": round(m["peak_kb"] / 1024, 1),
            "unit": "MB RSS",
            "note": f"+{growth:.1f} MB over the warmed-up process; result: {m['kind']}",
        },
    ]


def bench_read(ws: Path, size: int) -> list[dict]:
    lines = make_text_file(ws / "big.log", size)
    offset = lines - lines // 10
    m = measure(ws, "read", {"path": "big.log", "offset": offset, "limit": 100})
    assert m["kind"] == "text" and f"{offset:,}" in m["head"], m
    return _rows(f"read offset={offset:,} of a {size / 1e9:g} GB file", m, "100 lines shown; total counted")


def bench_edit(ws: Path, size: int) -> list[dict]:
    lines = make_text_file(ws / "big.txt", size)
    target = (LINE % (lines // 2)).decode().rstrip("\n")
    m = measure(ws, "edit", {"path": "big.txt", "oldText": target, "newText": "edited line"})
    assert m["kind"] == "text", m
    rows = _rows(f"edit one line in the middle of a {size / 1e6:g} MB file", m, "read + match + atomic write")
    miss = measure(ws, "edit", {"path": "big.txt", "oldText": "the quick brown fox leaps", "newText": "x"})
    rows.append(
        {
            "benchmark": f"edit with no match in a {size / 1e6:g} MB file: time",
            "value": round(miss["seconds"], 3),
            "unit": "s",
            "note": "closest-lines diagnostic (bounded: word sets over 200,000 lines)",
        }
    )
    return rows


def bench_exec(ws: Path, size: int) -> list[dict]:
    m = measure(ws, "exec", {"command": f"yes | head -c {size}; echo done"})
    assert m["kind"] == "text", m
    return _rows(f"exec printing {size / 1e6:g} MB", m, "head+tail kept, first 50 MB spilled to a file")


def run(quick: bool) -> list[dict]:
    """All benchmark rows: {"benchmark", "value", "unit", "note"}."""
    sizes = (20_000_000, 1_000_000, 2_000_000) if quick else (1_000_000_000, 50_000_000, 200_000_000)
    with tempfile.TemporaryDirectory(prefix="vllm-bot-bench-") as tmp:
        ws = Path(tmp)
        rows = bench_read(ws, sizes[0])
        (ws / "big.log").unlink()
        rows += bench_edit(ws, sizes[1])
        rows += bench_exec(ws, sizes[2])
    return rows


if __name__ == "__main__":
    started = time.perf_counter()
    print(to_markdown(run(quick="--quick" in sys.argv)))
    print(f"\n(total {time.perf_counter() - started:.1f} s)")
