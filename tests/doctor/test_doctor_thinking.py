"""Issue 35: a reasoning model that spends the probes' budget thinking is inconclusive, not a failure
(the doctor raises the budget once and says which budget would do); `doctor --debug` and `DEBUG=1`
keep the trace docs/doctor.md promises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from doctor_model import ideal_model

from vllm_bot.app import main
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply

ROOT = Path(__file__).resolve().parents[2]


def thinker(words: int):
    """Every reply starts with `words` words of reasoning (about as many tokens), then the answer a
    capable model gives: the call, or the number."""
    ideal = ideal_model()

    def respond(body):
        reply = ideal(body)
        return Reply(reasoning="hmm " * words, content=reply.content, calls=reply.calls)

    return respond


@pytest.fixture
def doctor_json(tmp_path, capsys, monkeypatch):
    for var in ("VLLM_BASE_URL", "VLLM_MODEL", "VLLM_API_KEY", "DEBUG"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "config.json"
    config.write_text("{}")

    def run(server):
        code = main(
            ["doctor", "--config", str(config), "--base-url", server.base_url, "--output-format", "json"]
        )
        report = json.loads(capsys.readouterr().out)
        assert report["exit_code"] == code and server.problems == []
        return report, {c["id"]: c for c in report["checks"]}

    return run


def test_a_model_that_thinks_past_the_probe_budget_gets_it_raised_once(doctor_json):
    """Issue 35, item 5: the text protocol probe's 512 tokens go to thinking (finish_reason length,
    no content); raised once, the model gets to its call, and the report says what budget did."""
    with FakeVLLM(auto_reply=thinker(1500), mode="noparser", model="Qwen/Qwen3-8B") as server:
        report, checks = doctor_json(server)
        budgets = [b["max_tokens"] for b in server.auto_replied]
    assert report["exit_code"] == 0 and report["mode"] == "text", report["verdict"]
    assert checks["text_protocol"]["status"] == "pass"
    # the tool probes get the 400; the reasoning probe runs out of its 1,024 and is raised once; the
    # text protocol probe (512 of its own) goes out with the raised budget
    assert budgets == [1024, 4096, 4096]
    [note] = [n for n in report["notes"] if "thinks before it answers" in n]
    assert "raised its probes' max_tokens once, from 512 to 4,096" in note
    assert "a budget of 1,5" in note  # what the model used: its 1,500 words of thinking and the call


def test_a_model_still_thinking_at_the_raised_budget_is_inconclusive_not_a_failure(doctor_json):
    with FakeVLLM(auto_reply=thinker(6000), mode="noparser", model="Qwen/Qwen3-8B") as server:
        report, checks = doctor_json(server)
    text = checks["text_protocol"]
    assert text["status"] == "warn" and text["data"]["inconclusive"] is True
    assert (
        "hit max_tokens=4096 (raised once from 512) in reasoning before any call; inconclusive"
        in text["detail"]
    )
    assert "a budget above 4,096 tokens would do" in text["fix"]
    assert report["verdict"].startswith("inconclusive: the model was still thinking")
    assert "cannot work" not in report["verdict"] and report["exit_code"] == 1
    assert any("still thinking after 4,096 tokens" in n for n in report["notes"])


def run_doctor_process(workspace: Path, server: FakeVLLM, *args: str, env: dict[str, str] | None = None):
    base = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_") and k != "DEBUG"}
    base["XDG_STATE_HOME"] = str(workspace.parent / "state")
    command = [sys.executable, str(ROOT / "cli.py"), "doctor", "--workspace", str(workspace)]
    command += ["--base-url", server.base_url, "--api-key", "sk-doctor-secret", *args]
    return subprocess.run(command, capture_output=True, text=True, env={**base, **(env or {})}, timeout=60)


@pytest.mark.parametrize("how", ["--debug", "DEBUG=1"])
def test_doctor_debug_logs_each_step_and_keeps_a_redacted_trace(tmp_path, how):
    """Issue 35, item 6."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeVLLM(auto_reply=ideal_model(), api_key="sk-doctor-secret") as server:
        if how == "--debug":
            done = run_doctor_process(workspace, server, "--debug", "--output-format", "json")
        else:
            done = run_doctor_process(workspace, server, "--output-format", "json", env={"DEBUG": "1"})
        chats = len(server.auto_replied)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "native"  # stdout stays one JSON object
    [trace] = (workspace / ".vllm-bot" / "traces").glob("trace-*.jsonl")
    assert f"[DEBUG] Trace of raw requests and responses: {trace}" in done.stderr
    assert "[DEBUG] probe single (streamed, max_tokens=512): 200" in done.stderr
    assert "[DEBUG] check tool_call_stream: PASS" in done.stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds.count("request") == chats and "chunk" in kinds and "response" in kinds
    urls = [r["data"]["url"] for r in records if r["kind"] == "http"]
    assert any(u.endswith("/health") for u in urls) and any(u.endswith("/v1/models") for u in urls)
    assert "sk-doctor-secret" not in trace.read_text()


def test_doctor_without_debug_writes_no_trace(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeVLLM(auto_reply=ideal_model(), api_key="sk-doctor-secret") as server:
        done = run_doctor_process(workspace, server, "--output-format", "json")
    assert done.returncode == 0 and "[DEBUG]" not in done.stderr
    assert not (workspace / ".vllm-bot").exists()
