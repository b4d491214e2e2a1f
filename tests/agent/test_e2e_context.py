"""The context window through `python cli.py -p` and the fake vLLM server (issue 16): a configured
window larger than the server's is corrected from /v1/models or from the server's own 400, and the
progress line after compaction counts every call the task made."""

import json
from pathlib import Path

import pytest
from test_e2e import run_cli

from vllm_bot.model.context import MAX_OUTPUT_TOKENS
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

COMPACT_MARK = "You compress a coding agent's earlier work"
GREEK = "alpha beta gamma delta epsilon zeta eta theta\n"


def summarizer(body):
    if COMPACT_MARK in body["messages"][0]["content"]:
        return Reply(content="Summary: read several files, nothing changed yet.")
    return None


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "big.txt").write_text(GREEK * 300)  # ~3,000 tokens as the fake server counts them
    return ws


def run(workspace, server, config, *args):
    path = workspace.parent / "config.json"
    path.write_text(json.dumps(config))
    return run_cli(workspace, server, "-p", "what is in big.txt?", "--yes", "--config", str(path), *args)


def script():
    return [Reply(calls=[Call("read", {"path": "big.txt"})]), Reply(content="Greek letters.")]


def test_a_configured_window_above_the_servers_is_corrected_from_the_servers_400(workspace):
    """The server does not list its window (a proxy) and answers the first too-long prompt with 400.
    (vllm.max_tokens is below the window: a larger one gets the other 400, tests/model/test_context_e2e.py.)"""
    with FakeVLLM(script(), max_model_len=3000, card_max_model_len=False, auto_reply=summarizer) as server:
        config = {"vllm": {"context_window": 20000, "max_tokens": 1000}}
        proc = run(workspace, server, config, "--output-format", "json")
        server.assert_done()
        refused = [b for b in server.requests if server.prompt_tokens(b) >= 3000]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["answer"] == "Greek letters."
    assert len(refused) == 1  # one 400 taught the window; the resend fitted
    notes = [n["message"] for n in result["notices"]]
    assert any(
        "The server's context window is 3,000 tokens, smaller than vllm.context_window" in n for n in notes
    )


def test_a_configured_window_above_max_model_len_is_never_used(workspace):
    with FakeVLLM(script(), max_model_len=3000) as server:
        proc = run(workspace, server, {"vllm": {"context_window": 20000}})
        server.assert_done()
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert all(server.prompt_tokens(b) < 3000 and b["max_tokens"] < 3000 for b in requests)  # never refused
    assert "smaller than vllm.context_window (20,000); using 3,000" in proc.stderr


def test_progress_after_compaction_counts_every_call_of_the_task(workspace):
    for i in range(5):
        (workspace / f"f{i}.txt").write_text(GREEK * 40)
    script = [Reply(content=f"Reading f{i}.", calls=[Call("read", {"path": f"f{i}.txt"})]) for i in range(5)]
    with FakeVLLM(script, max_model_len=2600, auto_reply=summarizer) as server:
        proc = run(workspace, server, {}, "--max-iterations", "5", "--output-format", "json")
        server.assert_done()
        summaries = len(server.auto_replied)
    assert proc.returncode == 3, proc.stderr
    assert summaries >= 1  # older turns were folded into a summary
    answer = json.loads(proc.stdout)["answer"]
    assert "Stopped after 5 iterations" in answer and "Progress: 5 read calls." in answer


def test_max_tokens_by_default_is_the_rest_of_the_window_up_to_a_cap(workspace):
    with FakeVLLM([Reply(content="small"), Reply(content="large")], max_model_len=8192) as server:
        run(workspace, server, {})
        server.max_model_len = 200_000
        run(workspace, server, {})
        server.assert_done()
        small, large = server.requests
    room = 8192 - server.prompt_tokens(small)
    assert room - 200 <= small["max_tokens"] <= room  # the rest of the window, less a small margin
    assert large["max_tokens"] == MAX_OUTPUT_TOKENS == 32768
