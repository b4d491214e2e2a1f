"""Shared helpers for the benchmarks: result rows, Markdown tables, measuring a child process."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CLI = ROOT / "cli.py"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


def row(benchmark: str, value: Any, unit: str, note: str = "") -> dict[str, Any]:
    """One result: what was measured, the number, its unit and how to read it."""
    return {"benchmark": benchmark, "value": value, "unit": unit, "note": note}


def to_markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| benchmark | value | unit | note |", "|---|---:|---|---|"]
    lines += [f"| {r['benchmark']} | {r['value']} | {r['unit']} | {r['note']} |" for r in rows]
    return "\n".join(lines)


@dataclass
class ChildRun:
    wall: float  # seconds
    cpu: float  # user + system seconds of the child (and its waited-for children)
    peak_kb: int  # the child's peak resident memory
    returncode: int
    stdout: str
    stderr: str


_COMPILED: set[Path] = set()


def compile_sources(argv: list[str]) -> None:
    """Compile the package of any `cli.py` in argv to bytecode, once. A user's install carries bytecode
    (pip compiles at install; a checkout writes it on its first run), but where PYTHONDONTWRITEBYTECODE
    is set, as on this machine, every run would compile all sources again and the benchmark would time
    the compiler (about 0.3 s of every start-up)."""
    import compileall

    for arg in argv:
        src = Path(arg).resolve().parent / "src"
        if arg.endswith("cli.py") and src.is_dir() and src not in _COMPILED:
            compileall.compile_dir(src, quiet=1)
            _COMPILED.add(src)


def run_child(
    argv: list[str],
    *,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
) -> ChildRun:
    """Run a command and measure exactly that process: wall time, CPU time and peak RSS (wait4)."""
    import threading

    compile_sources(argv)
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    out: list[str] = []
    err: list[str] = []
    peak = [0]
    running = threading.Event()
    running.set()

    def watch() -> None:
        while running.is_set():
            peak[0] = max(peak[0], vm_hwm_kb(proc.pid))
            time.sleep(0.005)

    threads = [
        threading.Thread(target=watch),
        threading.Thread(target=lambda: out.append(proc.stdout.read())),  # type: ignore[union-attr]
        threading.Thread(target=lambda: err.append(proc.stderr.read())),  # type: ignore[union-attr]
    ]
    for thread in threads:
        thread.start()
    if stdin is not None and proc.stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage, not all children's
    wall = time.perf_counter() - started
    running.clear()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for thread in threads:
        thread.join(timeout)
    # Not ru_maxrss: Linux carries the parent's peak across fork+exec into it. VmHWM is the child's
    # own high-water mark, sampled every 5 ms while it runs.
    cpu = usage.ru_utime + usage.ru_stime
    return ChildRun(wall, cpu, peak[0], proc.returncode, "".join(out), "".join(err))


def vm_hwm_kb(pid: int | str = "self") -> int:
    """Peak resident memory of a running process (its own, from /proc); 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def python() -> str:
    return sys.executable


@contextmanager
def scripted_server(script: Path, *args: str, stop_timeout: float = 30) -> Iterator[str]:
    """A benchmark server script (serve.py, serve_batch.py) in its own process: yields the URL it
    prints first; closing its stdin stops it, and its request log is whole only after that."""
    server = subprocess.Popen(
        [python(), str(script), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        yield server.stdout.readline().strip()  # type: ignore[union-attr]
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=stop_timeout)
