"""The doctor as a user meets it: the text report, the real `cli.py doctor` process, and `/doctor`."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from doctor_model import ideal_model

from vllm_bot.app import main
from vllm_bot.client import ModelClient
from vllm_bot.config import load_config
from vllm_bot.slash import dispatch, load_all
from vllm_bot.testing.fake_vllm import FakeVLLM

ROOT = Path(__file__).resolve().parents[1]


def test_text_report_has_a_row_per_check_fixes_and_the_command(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text("{}")
    with FakeVLLM(
        auto_reply=ideal_model(), mode="noparser", think_in_content=True, model="Qwen/Qwen3-8B"
    ) as server:
        url = server.base_url
        code = main(["doctor", "--config", str(config), "--base-url", url])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"vLLM Bot doctor · {url}"
    assert any(line.startswith("  FAIL  tool call ") for line in lines)
    assert any(line.startswith("  WARN  reasoning ") for line in lines)
    assert any(line.startswith("  PASS  text protocol ") for line in lines)
    for i, line in enumerate(lines):  # every FAIL row is followed by its fix
        if line.startswith("  FAIL"):
            assert lines[i + 1].strip().startswith("fix: ")
    assert (
        "Suggested: vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice --tool-call-parser hermes "
        "--reasoning-parser qwen3" in out
    )
    assert "Verdict: the agent can work through its text protocol" in out
    assert "Remembered: sessions with this server and model start in text mode" in out
    assert code == 0


def run_cli(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_")}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_cli_process_json_and_exit_codes(tmp_path):
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    with FakeVLLM(auto_reply=ideal_model()) as server:
        done = run_cli("doctor", "--base-url", server.base_url, "--output-format", "json", env_extra=state)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["mode"] == "native" and report["exit_code"] == 0
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").rglob("servers.json"))

    bad = run_cli("doctor", "--output-format", "xml")
    assert bad.returncode == 2 and "--output-format" in bad.stderr


def test_cli_help_lists_the_flags():
    done = run_cli("doctor", "--help")
    assert done.returncode == 0
    for flag in ("--base-url", "--model", "--api-key", "--config", "--output-format"):
        assert flag in done.stdout
    assert "exit codes" in done.stdout


class StandInSession(SimpleNamespace):
    """What /doctor uses of a Session (the real one needs the tools package from another branch)."""

    def say(self, text):
        self.said.append(text)


def test_slash_doctor_reports_and_follows_the_verdict(tmp_path):
    assert "doctor" in load_all()
    path = tmp_path / "config.json"
    path.write_text("{}")
    with FakeVLLM(auto_reply=ideal_model()) as server:
        config = load_config(path, env={}, overrides={"vllm.base_url": server.base_url})
        client = ModelClient(config.vllm, system_prompt=lambda t, d: "")
        client.resolve_model()
        client.function_calling = False  # e.g. a remembered fallback from before the server was fixed
        session = StandInSession(config=config, client=client, said=[])
        dispatch(session, "/doctor")
    text = "\n".join(session.said)
    assert (
        "PASS  tool call, streamed" in text and "Verdict: the agent can work with native tool calls" in text
    )
    assert client.function_calling is True and "Native function calling is on again" in text

    with FakeVLLM(auto_reply=ideal_model(), mode="noparser") as server:
        config = load_config(path, env={}, overrides={"vllm.base_url": server.base_url})
        client = ModelClient(config.vllm, system_prompt=lambda t, d: "")
        client.resolve_model()
        session = StandInSession(config=config, client=client, said=[])
        dispatch(session, "/doctor")
    assert client.function_calling is False and "Switched this session to the text protocol." in session.said
