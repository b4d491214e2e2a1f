"""Streaming throughput without the network: tool-call delta assembly and the whole chunk consumer
(content, reasoning, tool-call deltas, the display filter) fed vLLM-shaped chunk dicts.

    python benchmarks/bench_stream.py [--quick]
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from common import row, to_markdown

from vllm_bot.model.deltas import ToolCallAssembler
from vllm_bot.model.streaming import consume


def assembly(calls: int, fragment: int) -> tuple[float, int]:
    args = json.dumps({"path": "src/module.py", "content": "x = 1\n" * 400})
    pieces = [args[i : i + fragment] for i in range(0, len(args), fragment)]
    entries = []
    for c in range(calls):
        entries.append([{"index": c, "id": f"call-{c}", "type": "function", "function": {"name": "write"}}])
        entries += [[{"index": c, "function": {"arguments": p}}] for p in pieces]
    started = time.process_time()
    assembler = ToolCallAssembler()
    for chunk in entries:
        assembler.feed(chunk)
    assert len(assembler.finish()) == calls
    return time.process_time() - started, len(entries)


def chunks(n: int) -> list[dict[str, Any]]:
    words = "The fix is in `parse()`: the last record was dropped when the file had no final newline. "
    out = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    out += [{"choices": [{"index": 0, "delta": {"content": words[i % 80 : i % 80 + 4]}}]} for i in range(n)]
    out.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return out


def run(quick: bool = False) -> list[dict[str, Any]]:
    calls = 20 if quick else 200
    seconds, fragments = assembly(calls, 8)
    rows = [
        row(
            "assemble tool-call deltas",
            round(fragments / seconds / 1e6, 2),
            "M fragments/s CPU",
            f"{calls} calls of 2.4 kB in 8-char fragments ({fragments:,} entries)",
        )
    ]
    data = chunks(20_000 if quick else 200_000)
    started = time.process_time()
    consume(data, lambda event: None)
    seconds = time.process_time() - started
    rows.append(
        row(
            "consume content chunks (display filter included)",
            round(len(data) / seconds / 1000),
            "k chunks/s CPU",
            f"{len(data):,} chunks of 4 characters: {seconds / len(data) * 1e6:.1f} µs each",
        )
    )
    return rows


if __name__ == "__main__":
    print(to_markdown(run(quick="--quick" in sys.argv)))
