"""vLLM Bot beside its peers, same server, same method: 20-turn sessions against the fake server in
its own process with zero model latency, each agent in its own protocol (serve.py's "turns" for us:
`read` calls; "mini": one bash block a reply, then mini-swe-agent's submit command; "aider": one prose
answer for each message piped to it). Figures, medians of the interleaved runs: the agent's time
between two model requests (end of one answer to the arrival of the next request), launch to first
request, whole-process wall and peak RSS, the size of the first request (cl100k tokens of its messages
and tools, when tiktoken is installed: `pip install -e '.[bench]'`) and `--help`'s wall time.

    MINI=path/to/mini AIDER=path/to/aider python benchmarks/bench_peers.py [--quick] [--runs N] [--turns N]

A peer whose path is not given (or not installed) is left out, and the table says so. Peer set-up:
`uv venv P && uv pip install --python P/bin/python mini-swe-agent` (2.4.6 measured) or `aider-chat`
(0.86 measured). mini-swe-agent runs its text-based config (`--model-class litellm_textbased -c
mini_textbased.yaml`, its bash-block regex set to the server's) with litellm's bundled cost map
(`LITELLM_LOCAL_MODEL_COST_MAP`: this machine has no network); aider with `--no-git`, no repo map,
no analytics, no version check.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_prompt import cl100k
from common import CLI, ROOT, ChildRun, median, python, row, run_child, scripted_server, to_markdown

SERVE = ROOT / "benchmarks" / "serve.py"
CHAT = "/v1/chat/completions"
MODEL = "bench/model"  # the model serve.py serves


def _workspace(tmp: Path) -> Path:
    workspace = tmp / "ws"
    (workspace / "notes").mkdir(parents=True)
    for i in range(7):
        (workspace / "notes" / f"n{i}.txt").write_text("".join(f"note {i} line {k}\n" for k in range(40)))
    return workspace


def _ours(url: str, workspace: Path, tmp: Path, n: int) -> ChildRun:
    argv = [python(), str(CLI), "-p", "read the notes", "--yes", "--base-url", url]
    argv += ["--workspace", str(workspace), "--max-iterations", str(n + 5)]
    # one state dir for every run, as a user has: the first run keeps what later starts reuse
    return run_child(argv, env={"XDG_STATE_HOME": str(tmp.parent / "state-ours")})


def _mini(url: str, workspace: Path, tmp: Path, n: int) -> ChildRun:
    argv = [os.environ["MINI"], "-y", "--exit-immediately", "--model-class", "litellm_textbased"]
    argv += ["-c", "mini_textbased.yaml", "-c", f"model.model_name=openai/{MODEL}"]
    argv += ["-c", f"model.model_kwargs.api_base={url}", "-c", "model.action_regex=```bash\\s*\\n(.*?)\\n```"]
    argv += ["-c", "agent.cost_limit=0", "-c", f"agent.step_limit={n + 5}", "-t", "read the notes"]
    argv += ["-o", str(tmp / "trajectory.json")]
    env = {
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "MSWEA_CONFIGURED": "true",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "OPENAI_API_KEY": "EMPTY",
        "HOME": str(tmp / "home"),
    }
    return run_child(argv, env=env, cwd=workspace)


def _aider(url: str, workspace: Path, tmp: Path, n: int) -> ChildRun:
    argv = [os.environ["AIDER"], "--model", f"openai/{MODEL}", "--openai-api-base", url]
    argv += ["--openai-api-key", "EMPTY", "--no-git", "--map-tokens", "0", "--no-check-update"]
    argv += ["--analytics-disable", "--no-show-model-warnings", "--no-stream", "--no-pretty", "--yes-always"]
    argv += ["--no-fancy-input", "--no-detect-urls", "--no-auto-lint", "--no-auto-test"]
    messages = "".join(f"question {i}: anything to change in notes?\n" for i in range(n))
    return run_child(argv, env={"HOME": str(tmp / "home")}, stdin=messages, cwd=workspace)


AGENTS = {
    "vllm-bot": ("turns", _ours, None),
    "mini-swe-agent": ("mini", _mini, "MINI"),
    "aider": ("aider", _aider, "AIDER"),
}
HELP = {"vllm-bot": [python(), str(CLI)], "mini-swe-agent": ["MINI"], "aider": ["AIDER"]}


def help_wall(agent: str) -> float:
    """Milliseconds for `AGENT --help`, the whole process."""
    argv = [os.environ.get(a, a) for a in HELP[agent]] + ["--help"]
    child = run_child(argv)
    assert child.returncode == 0, f"{agent} --help: {child.stderr[-2000:]}"
    return child.wall * 1000


def request_tokens(body: dict[str, Any]) -> float:
    """cl100k tokens of what a chat request gives the model: every message's text and the tools'
    JSON (NaN without tiktoken)."""
    count = cl100k()
    if count is None:
        return float("nan")
    texts = []
    for message in body.get("messages", []):
        content = message.get("content") or ""
        texts += [content] if isinstance(content, str) else [p.get("text", "") for p in content]
    if body.get("tools"):
        texts.append(json.dumps(body["tools"]))
    return float(sum(count(t) for t in texts))


def session(agent: str, n: int, tmp: Path) -> dict[str, Any]:
    scenario, run, _ = AGENTS[agent]
    workspace = _workspace(tmp)
    (tmp / "home").mkdir()
    log = tmp / "requests.jsonl"
    with scripted_server(SERVE, scenario, str(n), str(log)) as url:
        launched = time.time()
        child = run(url, workspace, tmp, n)
    assert child.returncode == 0, f"{agent}: {child.stderr[-2000:]}"
    chats = [r for r in (json.loads(line) for line in log.read_text().splitlines()) if r["path"] == CHAT]
    assert len(chats) == n, f"{agent}: {len(chats)} chat requests for {n} turns"
    gaps = [(b["t"] - a["done"]) * 1000 for a, b in itertools.pairwise(chats)]
    first = (chats[0]["t"] - launched) * 1000
    figures = {"gap": median(gaps), "first": first, "wall": child.wall, "peak": child.peak_kb / 1024}
    return {**figures, "tokens": request_tokens(chats[0]["body"])}


def available() -> list[str]:
    return [a for a, (_, _, var) in AGENTS.items() if var is None or Path(os.environ.get(var, "")).is_file()]


def run(quick: bool = False, runs: int = 3, n: int = 20) -> list[dict[str, Any]]:
    runs, n = (1, 5) if quick else (runs, n)
    agents = available()
    results: dict[str, list[dict[str, Any]]] = {a: [] for a in agents}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        for i in range(runs):
            for agent in agents:
                results[agent].append(session(agent, n, Path(tmp) / f"{agent}-{i}"))
                results[agent][-1]["help"] = help_wall(agent)
    rows = []
    for key, label, unit in (
        ("gap", f"agent time per turn, {n}-turn session", "ms"),
        ("first", "launch to first model request", "ms"),
        ("wall", f"{n}-turn session: wall", "s"),
        ("peak", f"{n}-turn session: peak RSS", "MiB"),
        ("tokens", "first request: cl100k tokens of messages and tools", "tokens"),
        ("help", "--help: wall", "ms"),
    ):
        values = {a: median([r[key] for r in results[a]]) for a in agents}
        ours = values["vllm-bot"]
        if math.isnan(ours):
            rows.append(row(label, "n/a", unit, "tiktoken not installed: pip install -e '.[bench]'"))
            continue
        peers = "; ".join(
            f"{a} {v:.1f} (ours / theirs {ours / v:.2f})" for a, v in values.items() if a != "vllm-bot"
        )
        missing = [a for a in AGENTS if a not in agents]
        note = (peers or "no peer installed") + (f"; not installed: {', '.join(missing)}" if missing else "")
        rows.append(row(label, round(ours, 1), unit, f"median of {runs}; " + note))
    return rows


if __name__ == "__main__":
    count = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    turns = int(sys.argv[sys.argv.index("--turns") + 1]) if "--turns" in sys.argv else 20
    print(to_markdown(run("--quick" in sys.argv, count, turns)))
