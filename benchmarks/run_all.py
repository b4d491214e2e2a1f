"""Run every benchmark and write the results as Markdown (docs/benchmarks.md by default).

python benchmarks/run_all.py                      # full sizes (several minutes)
python benchmarks/run_all.py --quick --output -   # small sizes to stdout (CI checks they run)
python benchmarks/run_all.py --only startup,turns # a subset
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
import time
from pathlib import Path

from common import ROOT, to_markdown

SUITES = {
    "startup": ("bench_startup", "Start-up"),
    "turns": ("bench_turns", "Per-turn overhead, memory and request size"),
    "turntime": ("bench_turn_time", "Agent time per turn as the conversation grows"),
    "peers": ("bench_peers", "Beside mini-swe-agent and aider (MINI=..., AIDER=...)"),
    "prompt": ("bench_prompt", "Prompt footprint"),
    "delegate": ("bench_delegate", "What delegation saves (sub-agents)"),
    "stream": ("bench_stream", "Streaming throughput"),
    "parsing": ("bench_parsing", "Tool-call parser"),
    "corpus": ("bench_parsing_corpus", "Tool-call parser on held-out corpora (docs/parsing.md)"),
    "ui": ("bench_ui", "Terminal display"),
    "tools": ("bench_tools", "Tools"),
    "checkpoints": ("bench_checkpoints", "Checkpoints"),
    "batch": ("bench_batch", "Batch: many tasks at once (docs/batch.md)"),
}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores ({cpu}){memory}, {system}, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: checks the benchmarks run, not how fast"
    )
    parser.add_argument(
        "--output", default=str(ROOT / "docs" / "benchmarks.md"), help="file, or - for stdout"
    )
    parser.add_argument("--only", help="comma-separated suites: " + ", ".join(SUITES))
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else list(SUITES)
    command = "python benchmarks/run_all.py" + (" --quick" if args.quick else "")
    parts = [
        "# Benchmarks",
        "",
        f"Measured {datetime.date.today().isoformat()} on {machine()}.",
        f"Command: `{command}`. Numbers are medians or best-of-N where a row says so; the machine is",
        "shared, so expect a few percent of noise. Regenerate this file with the command above.",
    ]
    started = time.perf_counter()
    for name in chosen:
        module_name, title = SUITES[name]
        suite_started = time.perf_counter()
        rows = importlib.import_module(module_name).run(quick=args.quick)
        parts += [
            "",
            f"## {title}",
            "",
            to_markdown(rows),
            "",
            f"_{module_name}.py: {time.perf_counter() - suite_started:.1f} s_",
        ]
        print(f"{name}: {len(rows)} rows", file=sys.stderr)
    parts += ["", f"_Total: {time.perf_counter() - started:.0f} s._", ""]
    text = "\n".join(parts)
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
