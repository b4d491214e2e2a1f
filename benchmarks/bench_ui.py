"""Benchmarks for the terminal UI: CPU the rich display costs while a reply streams, and while a
command floods its output.

Streaming: a Markdown reply (paragraphs, lists, code blocks) arrives as ~4-character deltas at a
fixed token rate; the UI renders into a terminal-like console whose output goes to /dev/null (the
terminal emulator's own cost is not ours). CPU is this process's CPU time (all threads, rich's
refresh thread included) over wall time. Issue 10 asks for < 10 % of a core at 100 tokens/s.

    python benchmarks/bench_ui.py            # 100 tok/s for 30 s; long reply; 200 MB flood
    python benchmarks/bench_ui.py --quick    # short runs, to check the benchmark works
"""

from __future__ import annotations

import os
import sys
import time

from common import row, to_markdown
from rich.console import Console

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
from vllm_bot.config import UiConfig
from vllm_bot.events import (
    RequestStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFinished,
)
from vllm_bot.ui.display import MarkdownStream
from vllm_bot.ui.rich_ui import RichUI

BLOCK = """Here is what I found in `src/app.py`: the **parser** skips the last line when the file does
not end with a newline, so the final record is lost.

- `read_records` splits on `\\n` and drops the last piece
- `tests/test_app.py` only covers files that end with a newline

```python
def read_records(text):
    return [line for line in text.split("\\n") if line]
```

"""


def console() -> Console:
    return Console(file=open(os.devnull, "w"), force_terminal=True, width=120, height=50)


CODE = "```python\n" + "".join(
    f"def function_{i}(arg):\n    return arg * {i}  # note {i}\n" for i in range(400)
)


def stream(tokens: int, rate: float, source: str = BLOCK) -> tuple[float, float]:
    """Feed `tokens` deltas of ~4 characters at `rate` per second; returns (wall s, cpu s)."""
    ui = RichUI(UiConfig(), console=console())
    text = (source * (tokens * 4 // len(source) + 1))[: tokens * 4]
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    wall, cpu = time.perf_counter(), time.process_time()
    ui(RequestStarted("native", 3))
    for n, piece in enumerate(pieces):
        ui(TextDelta(piece))
        if rate:
            delay = wall + (n + 1) / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    ui(TurnFinished(AssistantTurn(text), 1.0, 0.1))
    return time.perf_counter() - wall, time.process_time() - cpu


def live_window_cost(lines: int) -> float:
    """CPU seconds the Markdown splitter and its live window take over a code block of `lines`
    lines fed as 4-character deltas (the window redrawn after each delta, as the live view does)."""
    text = "```python\n" + "".join(f"def function_{i}(arg):\n" for i in range(lines))
    markdown = MarkdownStream()
    cpu = time.process_time()
    for i in range(0, len(text), 4):
        markdown.feed(text[i : i + 4])
        markdown.take_done()
        markdown.live_window(46)
    return time.process_time() - cpu


def flood(megabytes: int) -> tuple[float, float]:
    """A command printing `megabytes` MB in 64 KB chunks, as fast as the UI takes them."""
    ui = RichUI(UiConfig(), console=console())
    call = ToolCall("c", "exec", {"command": "yes"})
    chunk = "y\n" * 32768
    wall, cpu = time.perf_counter(), time.process_time()
    ui(ToolCallStarted(call))
    for _ in range(megabytes * 16):
        ui(ToolOutput("c", chunk))
    ui(ToolCallFinished(call, ToolResult("c", "exec", "text", "Exit code 0 (1.0 s)."), 1.0))
    return time.perf_counter() - wall, time.process_time() - cpu


def run(quick: bool = False) -> list[dict]:
    seconds = 3 if quick else 30
    rows = []
    wall, cpu = stream(100 * seconds, 100.0)
    rows.append(
        row(
            "stream prose at 100 tok/s",
            round(100 * cpu / wall, 1),
            "% of a core",
            f"{wall:.0f} s of Markdown with lists and code; target < 10 %",
        )
    )
    wall, cpu = stream(100 * seconds, 100.0, CODE)
    rows.append(
        row(
            "stream one long code block at 100 tok/s",
            round(100 * cpu / wall, 1),
            "% of a core",
            f"{wall:.0f} s",
        )
    )
    for tokens in (500, 4000) if quick else (1000, 8000):
        wall, cpu = stream(tokens, 0)
        rows.append(
            row(
                f"reply of {tokens} tokens as fast as possible",
                round(1e3 * cpu / tokens, 3),
                "ms CPU/token",
                f"{wall:.2f} s wall",
            )
        )
    for lines in (1000, 4000):
        cpu = live_window_cost(lines)
        rows.append(
            row(
                f"live window over a {lines}-line code block",
                round(1e6 * cpu / (lines * 6), 1),
                "us CPU/delta",
                "splitter + window only; flat when the cost per delta does not grow with the block",
            )
        )
    size = 10 if quick else 200
    wall, cpu = flood(size)
    rows.append(
        row(
            f"exec output flood of {size} MB through the display",
            round(wall, 2),
            "s",
            f"{cpu:.2f} s CPU, {size / wall:.0f} MB/s",
        )
    )
    return rows


def main() -> None:
    print(to_markdown(run(quick="--quick" in sys.argv)))


if __name__ == "__main__":
    main()
