"""Run the fake vLLM server in its own process for a benchmark, so its CPU is not counted as ours.

    python benchmarks/serve.py SCENARIO N LOG    -> prints the base URL, serves until stdin closes

Scenarios: "turns" (N requests: N-1 `read` calls, then an answer), "answer" (one answer), "reads"
(N-1 reads of f0.txt, f1.txt, ... on an 8,192-token window, compaction summaries answered outside the
script). Every scripted chat request is logged to LOG as a JSON line {"t": arrival time, "body": ...}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import common  # noqa: F401  (puts src/ on sys.path)

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


def script(scenario: str, n: int, log: Path) -> list[Reply]:
    def record(body: dict[str, Any]) -> None:
        with log.open("a") as f:
            f.write(json.dumps({"t": time.time(), "body": body}) + "\n")

    if scenario == "answer":
        return [Reply(content="Done.", expect=record)]
    path = (lambda i: f"f{i}.txt") if scenario == "reads" else (lambda i: f"notes/n{i % 7}.txt")
    replies = [
        Reply(content=f"Step {i}: reading.", calls=[Call("read", {"path": path(i)})], expect=record)
        for i in range(n - 1)
    ]
    return [*replies, Reply(content="All done.", expect=record)]


def summary(body: dict[str, Any]) -> Reply | None:
    if "You compress a coding agent" in body["messages"][0]["content"]:
        return Reply(content="Summary: read the files; nothing changed.")
    return None


def main() -> None:
    scenario, n, log = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    window = 8192 if scenario == "reads" else 131072
    replies = script(scenario, n, log)
    with FakeVLLM(replies, model="bench/model", max_model_len=window, auto_reply=summary) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin


if __name__ == "__main__":
    main()
