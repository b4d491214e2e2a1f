"""Parser throughput: how long parse_tool_calls and StreamFilter take on 1 MB replies.

`run(quick)` returns rows {"benchmark", "value", "unit", "note"}; `python benchmarks/bench_parsing.py`
prints them as a Markdown table. The issue's bar: a 1 MB reply parses in well under 100 ms.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from common import row, to_markdown

from vllm_bot.parsing import StreamFilter, parse_tool_calls

MB = 1_000_000


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def prose_reply(size: int = MB) -> str:
    """A long answer: prose (English and Japanese), code blocks that mention call syntax, inline
    code, a table, and three real calls spread through it."""
    block = (
        "The handler reads `config.json` and falls back to {defaults} when a key is missing.\n"
        "設定ファイルが見つからない場合は既定値を使います。\n\n"
        '```python\nEXAMPLE = \'<tool_call>{"name": "exec"}</tool_call>\'\n'
        'if x > 1:\n    y = {"a": [1, 2]}\n```\n\n'
        "| key | meaning |\n|---|---|\n| `TOOL_CALL:` | our format |\n\n"
    )
    call = 'TOOL_CALL: {"name": "read", "args": {"path": "src/app.py", "offset": 10}}\n'
    third = block * max(1, (size - 3 * len(call)) // 3 // len(block))
    return third + call + third + call + third + call


def json_write_reply(size: int = MB) -> str:
    content = _fill('def f(x):\n    return {"x": x, "s": "a\\\\b"}  # </tool_call>\n', size)
    call = {"name": "write", "arguments": {"path": "big.py", "content": content}}
    return "Writing it.\n<tool_call>\n" + json.dumps(call) + "\n</tool_call>"


def xml_write_reply(size: int = MB) -> str:
    content = _fill('def f(x):\n    return {"x": x}  # </tool_call> <function=exec>\n', size)
    return (
        "<tool_call>\n<function=write>\n<parameter=path>\nbig.py\n</parameter>\n"
        f"<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    )


def adversarial_reply(size: int = MB) -> str:
    """Every line starts something call-like that never completes."""
    return _fill('{"name": "read", "arguments": {"path": "a\n<tool_call>{\n`x ```\n[TOOL_CALLS]\n', size)


def malformed_reply(size: int) -> str:
    """Unescaped quotes: only json-repair can read it."""
    content = _fill('print("hi") and "more" ', size)
    return 'TOOL_CALL: {"name": "write", "args": {"path": "a.py", "content": "' + content + '"}}'


def _best_ms(fn: Callable[[], object], repeat: int) -> float:
    """Best CPU time of `repeat` runs (CPU time: the CI machine is shared)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best * 1000


def _stream(text: str, delta: int) -> None:
    f = StreamFilter()
    for i in range(0, len(text), delta):
        f.feed(text[i : i + delta])
    f.flush()


def _row(benchmark: str, ms: float, note: str) -> dict:
    return row(benchmark, round(ms, 1), "ms CPU", note)


def run(quick: bool = False) -> list[dict]:
    repeat = 1 if quick else 5
    parse_tool_calls(json_write_reply(1000))  # imports (jsonschema, json-repair) are not measured
    parse_tool_calls(malformed_reply(100))
    rows = []
    cases = [
        ("prose, code and 3 calls", prose_reply()),
        ("one JSON write call", json_write_reply()),
        ("one Qwen3 XML write call", xml_write_reply()),
        ("stress: unfinished call syntax on every line", adversarial_reply()),
    ]
    for label, text in cases:
        calls = parse_tool_calls(text)
        ms = _best_ms(lambda text=text: parse_tool_calls(text), repeat)
        speed = len(text.encode()) / MB / (ms / 1000)
        rows.append(_row(f"parse 1 MB reply: {label}", ms, f"{speed:.0f} MB/s, {len(calls)} calls"))
    size = MB // 4 if quick else MB
    prose, call = prose_reply(size), json_write_reply(size)
    ms = _best_ms(lambda: _stream(prose, 4), 1)
    note = f"{len(prose) // 4:,} feeds, {ms * 4000 / len(prose):.1f} µs per feed"
    rows.append(_row(f"stream a {len(prose) // 1000} kB prose reply in 4-char deltas", ms, note))
    ms = _best_ms(lambda: _stream(call, 4), 1)
    note = "held back whole; rescanned after each 1/16 growth"
    rows.append(_row(f"stream a {len(call) // 1000} kB call in 4-char deltas", ms, note))
    text = malformed_reply(100_000)
    ms = _best_ms(lambda: parse_tool_calls(text), 1)
    note = "json-repair; bodies over 200 kB are refused"
    rows.append(_row("repair a 100 kB call with unescaped quotes", ms, note))
    return rows


def main() -> None:
    print(to_markdown(run(quick="--quick" in sys.argv)))


if __name__ == "__main__":
    main()
