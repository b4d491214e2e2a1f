"""Per-turn overhead: scripted sessions of N turns (each a `read` call, the last an answer) through
the real `cli.py -p` against the fake server in its own process with zero model latency, compared
with the floor: a bare loop sending the same requests through the openai SDK (floor.py).

The cost of one turn is the slope between the shortest and the longest session (start-up cancels
out); our overhead per turn is the agent's slope minus the floor's. Also: peak memory per session
length, request bytes as the session grows, and how compaction bounds them on a small window.

    python benchmarks/bench_turns.py [--quick]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import CLI, ROOT, ChildRun, python, row, run_child, scripted_server, to_markdown

SERVE = ROOT / "benchmarks" / "serve.py"
FLOOR = ROOT / "benchmarks" / "floor.py"


def session(n: int, tmp: Path) -> tuple[ChildRun, ChildRun, list[int]]:
    """(agent run, floor run, request sizes in bytes) for an n-turn session."""
    tmp.mkdir(parents=True, exist_ok=True)
    workspace = tmp / f"ws{n}"
    (workspace / "notes").mkdir(parents=True)
    for i in range(7):
        (workspace / "notes" / f"n{i}.txt").write_text("".join(f"note {i} line {k}\n" for k in range(40)))
    log = tmp / f"agent{n}.jsonl"
    with scripted_server(SERVE, "turns", str(n), str(log), stop_timeout=10) as url:
        agent = run_child(
            [
                python(),
                str(CLI),
                "-p",
                "read the notes",
                "--yes",
                "--base-url",
                url,
                "--workspace",
                str(workspace),
                "--max-iterations",
                str(n + 5),
            ],
            env={"XDG_STATE_HOME": str(tmp / "state")},
        )
    assert agent.returncode == 0, agent.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    bodies = [r["body"] for r in records if "body" in r]
    with scripted_server(SERVE, "turns", str(n), str(tmp / f"floor{n}.jsonl"), stop_timeout=10) as url:
        floor = run_child([python(), str(FLOOR), url, str(log)])
    assert floor.returncode == 0, floor.stderr
    return agent, floor, [len(json.dumps(b)) for b in bodies]


def median_session(n: int, tmp: Path, repeats: int) -> tuple[ChildRun, ChildRun, list[int]]:
    """The run with the median agent CPU of `repeats` (CPU time on a shared machine is noisy)."""
    runs = [session(n, tmp / f"r{i}") for i in range(repeats)]
    return sorted(runs, key=lambda r: r[0].cpu)[len(runs) // 2]


def run(quick: bool = False) -> list[dict[str, Any]]:
    lengths = (3, 8) if quick else (5, 20, 80)
    repeats = 1 if quick else 3
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-turns-") as tmp_name:
        tmp = Path(tmp_name)
        results = {n: median_session(n, tmp, repeats) for n in lengths}
    for n, (agent, floor, _) in results.items():
        note = (
            f"agent {agent.cpu / n * 1000:.1f} ms CPU/turn incl. start-up; floor {floor.cpu / n * 1000:.1f}"
        )
        rows.append(row(f"{n}-turn session: wall", round(agent.wall, 2), "s", note))
        rows.append(
            row(
                f"{n}-turn session: peak RSS",
                round(agent.peak_kb / 1024, 1),
                "MB",
                f"floor (bare SDK loop) {floor.peak_kb / 1024:.1f} MB",
            )
        )
    short, long = min(lengths), max(lengths)
    span = long - short
    a0, f0, _ = results[short]
    a1, f1, sizes = results[long]
    agent_cpu = (a1.cpu - a0.cpu) / span * 1000
    floor_cpu = (f1.cpu - f0.cpu) / span * 1000
    agent_wall = (a1.wall - a0.wall) / span * 1000
    rows.append(
        row(
            "CPU per turn: agent",
            round(agent_cpu, 2),
            "ms",
            f"slope {short}->{long} turns, start-up excluded; median of {repeats} runs per length",
        )
    )
    rows.append(
        row("CPU per turn: floor (bare SDK loop)", round(floor_cpu, 2), "ms", "same requests, nothing else")
    )
    rows.append(
        row(
            "agent overhead per turn beyond the floor",
            round(agent_cpu - floor_cpu, 2),
            "ms CPU",
            "target < 5 ms",
        )
    )
    rows.append(row("wall per turn: agent", round(agent_wall, 2), "ms", "zero model latency"))
    growth = (a1.peak_kb - a0.peak_kb) / span
    rows.append(
        row(
            "peak memory growth per turn",
            round(growth, 1),
            "KB",
            f"requests grow by ~{(sizes[-1] - sizes[0]) / max(1, len(sizes) - 1):.0f} B/turn",
        )
    )
    marks = sorted({0, len(sizes) // 4, len(sizes) // 2, len(sizes) - 1})
    rows.append(
        row(
            "request bytes as the session grows",
            " / ".join(f"{sizes[i]:,}" for i in marks),
            "B",
            "turns " + ", ".join(str(i + 1) for i in marks) + ": linear in the conversation",
        )
    )
    rows += compaction_bound(quick)
    rows += retained_heap(quick)
    return rows


def compaction_bound(quick: bool) -> list[dict[str, Any]]:
    """On a 4,096-token window with 50 KB tool outputs, request size stays bounded (in-process)."""
    from vllm_bot.agent.loop import Agent
    from vllm_bot.config import AgentConfig, ContextConfig, ToolsConfig, VllmConfig
    from vllm_bot.model.client import ModelClient
    from vllm_bot.model.retry import Retrier, RetryPolicy
    from vllm_bot.testing.fake_vllm import FakeVLLM
    from vllm_bot.testing.script import Call, Reply
    from vllm_bot.tools import ToolExecutor

    turns = 20 if quick else 60

    def summarize(body: dict[str, Any]) -> Reply | None:
        if "You compress a coding agent" in body["messages"][0]["content"]:
            return Reply(content="Summary: read the big files; nothing changed.")
        return None

    with tempfile.TemporaryDirectory(prefix="bench-compact-") as tmp_name:
        ws = Path(tmp_name)
        for i in range(5):
            (ws / f"big{i}.txt").write_text("".join(f"{i}:{k} " + "y" * 50 + "\n" for k in range(900)))
        script = [Reply(calls=[Call("read", {"path": f"big{n % 5}.txt"})]) for n in range(turns)]
        with FakeVLLM([*script, Reply(content="done")], max_model_len=4096, auto_reply=summarize) as server:
            client = ModelClient(
                VllmConfig(base_url=server.base_url, model=server.model),
                system_prompt=lambda t, d: "You are a coding agent.",
                context=ContextConfig(),
                retrier=Retrier(RetryPolicy(), sleep=lambda s: None),
            )
            client.resolve_model()
            agent = Agent(
                client, ToolExecutor(ws, ToolsConfig()), AgentConfig(max_iterations=turns + 5), lambda e: None
            )
            agent.run("read them all")
            chat = [b for b in server.requests if "You compress" not in b["messages"][0]["content"]]
            sizes = [len(json.dumps(b)) for b in chat]
            tokens = [server.prompt_tokens(b) for b in chat]
            summaries = len(server.auto_replied)
    half = len(sizes) // 2
    return [
        row(
            f"{turns} turns of 50 KB reads on a 4,096-token window",
            f"{max(sizes[:half]):,} / {max(sizes[half:]):,}",
            "B max request",
            f"first half / second half; max {max(tokens):,} tokens; {summaries} compactions",
        )
    ]


def retained_heap(quick: bool) -> list[dict[str, Any]]:
    """Python heap the agent keeps per turn (tracemalloc; the fake server runs in its own process)
    while compaction holds the history to an 8,192-token window: distinct 6 KB reads."""
    import gc
    import tracemalloc

    from vllm_bot.agent.loop import Agent
    from vllm_bot.config import AgentConfig, ContextConfig, ToolsConfig, VllmConfig
    from vllm_bot.events import Event, IterationStarted
    from vllm_bot.model.client import ModelClient
    from vllm_bot.model.retry import Retrier, RetryPolicy
    from vllm_bot.tools import ToolExecutor

    turns = 40 if quick else 120
    first, last = turns // 4, turns - 5
    marks: dict[int, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-heap-") as tmp_name:
        ws = Path(tmp_name)
        for i in range(turns):
            lines = (f"file {i} line {k} " + "z" * 40 + "\n" for k in range(100))
            (ws / f"f{i}.txt").write_text("".join(lines))
        with scripted_server(SERVE, "reads", str(turns), str(ws / "log.jsonl"), stop_timeout=10) as url:
            client = ModelClient(
                VllmConfig(base_url=url),
                system_prompt=lambda t, d: "You are a coding agent.",
                context=ContextConfig(),
                retrier=Retrier(RetryPolicy(), sleep=lambda s: None),
            )
            client.resolve_model()

            def observe(event: Event) -> None:
                if isinstance(event, IterationStarted) and event.iteration in (first, last):
                    gc.collect()
                    marks[event.iteration] = (tracemalloc.get_traced_memory()[0], _history_chars(agent))

            config = AgentConfig(max_iterations=turns + 5)
            agent = Agent(client, ToolExecutor(ws, ToolsConfig()), config, observe)
            tracemalloc.start()
            try:
                agent.run("read them all")
            finally:
                tracemalloc.stop()
    (heap0, chars0), (heap1, chars1) = marks[first], marks[last]
    return [
        row(
            "heap retained per turn, history held by compaction",
            round((heap1 - heap0) / (last - first) / 1024, 2),
            "KB",
            f"tracemalloc, turns {first}->{last} of distinct 6 KB reads on an 8,192-token window; "
            f"history {chars0 / 1024:.0f} -> {chars1 / 1024:.0f} K chars",
        )
    ]


def _history_chars(agent: Any) -> int:
    entries = agent.conversation.entries
    texts = [getattr(e, "content", "") or "" for e in entries]
    texts += [r.as_text() for e in entries for r in getattr(e, "results", [])]
    return sum(len(t) for t in texts)


if __name__ == "__main__":
    print(to_markdown(run(quick="--quick" in sys.argv)))
