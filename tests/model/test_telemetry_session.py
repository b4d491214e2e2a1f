"""Telemetry and model profiles in a real Session: the session file records the figures, the
profile reaches the requests, and a remembered fallback spares the next session a failed request."""

import json

from vllm_bot.config import load_config
from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.sessions import sessions_dir
from vllm_bot.session import Session
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


def make_session(tmp_path, server, **overrides):
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"sandbox": {"mode": "off"}, "git": {"checkpoints": False}}))
    config = load_config(config_path, env={}, overrides={"vllm.base_url": server.base_url, **overrides})
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "a.py").write_text("print('hi')\n")
    return Session(config, workspace, headless=True)


def records(workspace):
    (path,) = sessions_dir(workspace_state_dir(workspace)).glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_session_file_records_telemetry_per_request(tmp_path, capsys):
    script = [Reply(calls=[Call("read", {"path": "a.py"})]), Reply(content="It prints hi.")]
    with FakeVLLM(script, prompt_tokens_details=True) as server:
        session = make_session(tmp_path, server)
        assert session.run_headless("what does a.py do?") == 0
        server.assert_done()
    saved = [r for r in records(tmp_path / "ws") if r["type"] == "telemetry"]
    assert len(saved) == 2 == len(session.telemetry.turns)
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in saved)
    assert saved[0]["cached_tokens"] == 0 and saved[1]["cached_tokens"] > 0
    assert session.telemetry.cache_hit_rate is not None
    assert "It prints hi." in capsys.readouterr().out


def test_session_applies_the_model_profile(tmp_path):
    with FakeVLLM([Reply(content="ok")]) as server:  # serves Qwen3-Coder: the shipped profile applies
        make_session(tmp_path, server).run_headless("hi")
        body = server.requests[0]
    assert body["temperature"] == 0.7 and body["top_k"] == 20 and body["repetition_penalty"] == 1.05


def test_next_session_starts_in_text_mode_after_a_fallback(tmp_path, capsys):
    script = [Reply(content="first"), Reply(content="second")]
    with FakeVLLM(script, mode="noparser") as server:
        make_session(tmp_path, server).run_headless("one")
        assert len(server.rejected) == 1
        capsys.readouterr()
        second = make_session(tmp_path, server)
        assert second.run_headless("two") == 0
        server.assert_done()
        assert len(server.rejected) == 1  # no failed request the second time
        assert "tools" not in server.requests[-1]
    assert second.client.function_calling is False
    assert "starting in text mode" in capsys.readouterr().err
