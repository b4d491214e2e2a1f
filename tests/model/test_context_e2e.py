"""The context window through `python cli.py -p` and the fake vLLM server (issue 35): a big tool result
is clipped when it is added, whatever follows it; a window smaller than the agent's own prompt says
what is too big."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gateway import CardStripper

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
COMPACT_MARK = "You compress a coding agent's earlier work"


def summarizer(body):
    if COMPACT_MARK in body["messages"][0]["content"]:
        return Reply(content="Summary: read big.txt a few times.")
    return None


def run_cli(workspace: Path, server: FakeVLLM, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(workspace)]
    command += ["--base-url", server.base_url, "--yes", *args]
    env = {**os.environ, "XDG_STATE_HOME": str(workspace.parent / "state")}
    env.pop("DEBUG", None)
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    return ws


def dense_file(path: Path, size: int) -> None:
    """`size` bytes of text the fake server counts at about one token per 1.6 characters (a tokenizer
    with a small vocabulary, like the real tier's tiny model)."""
    lines, i = [], 0
    while sum(map(len, lines)) < size:
        lines.append(f"{i:05d}:a,b;c.d=e\n")
        i += 1
    path.write_text("".join(lines))


def test_a_big_result_is_clipped_even_with_the_loop_guard_note_after_it(workspace):
    """Issue 35, item 1: the third identical read of a 19.7 KB file gets the loop guard's note after
    it; the read is clipped all the same, and the task goes on to its answer."""
    dense_file(workspace / "big.txt", 19_700)
    read = Call("read", {"path": "big.txt"})
    script = [Reply(calls=[read]), Reply(calls=[read]), Reply(calls=[read]), Reply(content="Done.")]
    with FakeVLLM(script, max_model_len=8192, auto_reply=summarizer) as server:
        proc = run_cli(workspace, server, "-p", "read big.txt", "--output-format", "json")
        server.assert_done()
        prompts = [server.prompt_tokens(b) for b in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"] == "Done."
    assert all(p < 8192 for p in prompts)  # never refused
    last = server.requests[-1]["messages"]
    assert "3 times in a row" in last[-1]["content"]  # the loop guard's note came after the third read
    third = last[-2]["content"]
    assert "characters cut here" in third and len(third) < 19_700


@pytest.mark.parametrize(
    ("window", "configured"),
    [(8192, {"vllm": {"context_window": 32768}}), (4096, {})],
    ids=["context_window above the server's", "assumed window above the server's"],
)
def test_the_window_is_learned_from_the_max_tokens_400_behind_a_gateway(workspace, window, configured):
    """Issue 35, item 3: behind a gateway that drops max_model_len from /v1/models, the first request
    asks for more output tokens than the whole window; vLLM's 400 `max_tokens=N cannot be greater
    than max_model_len=W` teaches the window, and the request is sent again within it."""
    config = workspace.parent / "config.json"
    config.write_text(json.dumps(configured))
    with (
        FakeVLLM([Reply(content="Hello.")], max_model_len=window) as server,
        CardStripper(server.url) as gateway,
    ):
        proc = run_cli(workspace, gateway, "-p", "hi", "--config", str(config), "--output-format", "json")
        server.assert_done()
        refused, sent = server.requests
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["answer"] == "Hello."
    assert refused["max_tokens"] > window >= sent["max_tokens"] + server.prompt_tokens(sent)
    notes = [n["message"] for n in result["notices"]]
    assert any(f"The server's context window is {window:,} tokens" in n for n in notes), notes


def test_a_window_smaller_than_the_agents_own_prompt_says_what_to_change(workspace):
    """Issue 35, item 4: on a 1k window the system prompt and the tool definitions alone leave no room
    for an answer: no compaction can help, and "start a new task with less context" would not."""
    with FakeVLLM([], max_model_len=1024) as server:
        proc = run_cli(workspace, server, "-p", "hi", "--output-format", "json")
        server.assert_done()
        assert server.requests == []
    assert proc.returncode == 3, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert "too small for the agent's own prompt" in error and "1,024 tokens" in error
    for fix in ("--max-model-len", "MCP tools", "system_prompt.instructions_max_tokens"):
        assert fix in error
    assert "Start a new task" not in error and "Compacted" not in proc.stderr
