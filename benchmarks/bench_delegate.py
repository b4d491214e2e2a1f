"""What delegation saves (issue 37): one exploration task over the ~3,200-line project the eval suite
bundles (`ledger`: 17 modules, 16 test modules), answered (a) by the main agent alone, reading the
modules itself, and (b) with two sub-agents (`delegate`) that read them and answer in a few lines.
Both run through the real `cli.py -p` against the scripted server, which counts tokens as it does for
every test; the figures are the parent's peak context (its largest prompt) and the tokens of the whole
task (every request, sub-agents included).

    python benchmarks/bench_delegate.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import CLI, SRC, row, to_markdown

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

PROJECT = SRC / "vllm_bot" / "eval" / "tasks" / "projects" / "ledger"
TASK = "EXPLORE: which modules parse dates, and how does a budget report total its rows?"
HALVES = {
    "SUB-DATES: which modules parse or format dates?": ["dates.py", "parser.py", "csvimport.py"],
    "SUB-BUDGET: how does a budget report total its rows?": ["budget.py", "reports.py", "query.py"],
}
ANSWER = "dates.py parses dates (used by parser.py, csvimport.py); budget.py totals rows with Money."


def scripts(delegating: bool) -> dict[str, list[Reply]]:
    """The scripted conversations: the main agent's, and with delegation each sub-agent's."""
    if not delegating:
        reads = [Reply(calls=[Call("read", {"path": f"ledger/{m}"})]) for ms in HALVES.values() for m in ms]
        return {"EXPLORE": [*reads, Reply(content=ANSWER)]}
    calls = [Call("delegate", {"task": task}) for task in HALVES]
    found = {"EXPLORE": [Reply(calls=calls), Reply(content=ANSWER)]}
    for task, modules in HALVES.items():
        reads = [Reply(calls=[Call("read", {"path": f"ledger/{m}"})]) for m in modules]
        found[task.split(":")[0]] = [*reads, Reply(content=f"{task.split(':')[0]}: {ANSWER[:80]}")]
    return found


def measure(delegating: bool, tmp: Path) -> dict[str, Any]:
    ws = tmp / ("with" if delegating else "alone")
    shutil.copytree(PROJECT, ws)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp / "state"), "XDG_CONFIG_HOME": str(tmp / "cfg")}
    env.pop("DEBUG", None)
    with FakeVLLM(conversations=scripts(delegating)) as server:
        argv = [sys.executable, str(CLI), "-p", TASK, "--workspace", str(ws), "--base-url", server.base_url]
        proc = subprocess.run([*argv, "--output-format", "json"], capture_output=True, text=True, env=env)
        bodies = list(server.requests)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    result = json.loads(proc.stdout)
    parent = [server_tokens(b) for b in bodies if "EXPLORE" in json.dumps(b["messages"][:2])]
    subs = result.get("subagents", [])
    total = result["usage"]["prompt_tokens"] + result["usage"]["completion_tokens"]
    total += sum(s["usage"]["prompt_tokens"] + s["usage"]["completion_tokens"] for s in subs)
    return {"peak": max(parent), "requests": len(bodies), "total": total}


def server_tokens(body: dict[str, Any]) -> int:
    from vllm_bot.testing.script import count_tokens

    return count_tokens(json.dumps(body.get("messages") or []) + json.dumps(body.get("tools") or []))


def run(quick: bool = False) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        alone, delegated = measure(False, Path(tmp)), measure(True, Path(tmp))
    share = f"{delegated['peak'] / alone['peak']:.0%} of alone; {delegated['requests']} requests"
    ratio = f"{delegated['total'] / alone['total']:.2f}x alone: each sub-agent re-sends only its half"
    every = "prompt + completion, every request"
    return [
        row("parent's peak context, alone", alone["peak"], "tokens", f"{alone['requests']} requests"),
        row("parent's peak context, with 2 sub-agents", delegated["peak"], "tokens", share),
        row("tokens of the whole task, alone", alone["total"], "tokens", every),
        row("tokens of the whole task, with 2 sub-agents", delegated["total"], "tokens", ratio),
    ]


if __name__ == "__main__":
    print(to_markdown(run(quick="--quick" in sys.argv)))
