"""A saved session resumes on a server with a smaller window than it was made on (issue 35, item 2):
sessions keep tool results whole, so `--continue` clips and compacts the loaded history to the window
it resumes on before its first request, through `python cli.py` and the fake vLLM server. Before,
a big result in the newest turn, which compaction never cuts, ended it with "Compacted ~28,476 ->
~28,476 tokens (nothing to do)" and exit 3 before any request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
COMPACT_MARK = "You compress a coding agent's earlier work"


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def summarizer(body):
    if COMPACT_MARK in body["messages"][0]["content"]:
        return Reply(content="Summary: read notes.txt.")
    return None


def notes(size: int) -> str:
    """`size` characters the fake server counts at about one token per 1.6 characters."""
    line = "{:05d}:a,b;c.d=e\n"
    return "".join(line.format(i) for i in range(size // len(line.format(0)) + 1))


@pytest.mark.parametrize("window", [8192, 2048])
def test_continue_fits_a_saved_session_into_a_smaller_window(tmp_path, window):
    ws = init_repo(tmp_path / "ws", {"notes.txt": notes(23_000)})
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("DEBUG", None)

    def run(server, *args):
        cli = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(ws), "--base-url", server.base_url]
        return subprocess.run([*cli, "--yes", *args], capture_output=True, text=True, env=env, timeout=120)

    # The session stops right after the read (a limit, a crash, Ctrl-C): its newest turn holds it.
    first = [Reply(calls=[Call("read", {"path": "notes.txt"})])]
    with FakeVLLM(first, max_model_len=65536) as server:
        made = run(server, "-p", "read notes.txt", "--max-iterations", "1")
        server.assert_done()
    assert made.returncode == 3 and "Stopped after 1 iteration" in made.stderr, made.stderr
    [saved] = (ws / ".vllm-bot" / "sessions").glob("*.jsonl")
    assert any(len(json.dumps(line)) > 23_000 for line in saved.read_text().splitlines())  # saved whole

    with FakeVLLM([Reply(content="Carried on.")], max_model_len=window, auto_reply=summarizer) as server:
        resumed = run(server, "--continue", "-p", "carry on", "--output-format", "json")
        server.assert_done()
        prompts = [server.prompt_tokens(b) for b in server.requests + server.auto_replied]
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "Carried on."
    assert all(p < window for p in prompts), prompts  # nothing was sent that the window refuses
