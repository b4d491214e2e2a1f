"""The fake vLLM server for the batch benchmark, in its own process (its CPU is not counted as ours).

    python benchmarks/serve_batch.py TASKS TURNS LATENCY   -> prints the base URL, serves until stdin closes

Task `bench-I` (its text carries "[bench-I]") is a conversation of TURNS model replies: TURNS-1 `read`
calls (of notes/n0.txt ... n6.txt in turn, so the loop guard sees no repeats), then an answer. Every
reply waits LATENCY seconds first, like a model's prefill and decode.
"""

from __future__ import annotations

import sys

import common  # noqa: F401  (puts src/ on sys.path)

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


def conversation(turns: int) -> list[Reply]:
    reads = [
        Reply(content=f"Step {i}.", calls=[Call("read", {"path": f"notes/n{i % 7}.txt"})])
        for i in range(turns - 1)
    ]
    return [*reads, Reply(content="Read the notes; nothing to change.")]


def main() -> None:
    tasks, turns, latency = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    conversations = {f"[bench-{i}]": conversation(turns) for i in range(tasks)}
    with FakeVLLM(
        conversations=conversations, model="bench/model", turn_latency=latency, metrics={}
    ) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin


if __name__ == "__main__":
    main()
