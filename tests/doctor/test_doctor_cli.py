"""The doctor as a user meets it: the text report, the real `cli.py doctor` process, and `/doctor`."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from doctor_model import ideal_model

from vllm_bot.app import main
from vllm_bot.config import load_config
from vllm_bot.model.client import ModelClient
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.ui.slash.registry import dispatch, load_all

ROOT = Path(__file__).resolve().parents[2]


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
        session = StandInSession(config=config, client=client, said=[], workspace=tmp_path)
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
        session = StandInSession(config=config, client=client, said=[], workspace=tmp_path)
        dispatch(session, "/doctor")
    assert client.function_calling is False and "Switched this session to the text protocol." in session.said


def test_slash_doctor_with_debug_on_writes_its_probes_into_the_sessions_trace(tmp_path, capsys):
    """DEBUG=1 or /debug in a session: /doctor's probes go into the session's trace like its requests."""
    from vllm_bot.model.trace import Trace

    path = tmp_path / "config.json"
    path.write_text("{}")
    trace = Trace.in_state_dir(tmp_path / "state", secrets=["sk-session-secret"])
    with FakeVLLM(auto_reply=ideal_model(), api_key="sk-session-secret") as server:
        overrides = {"vllm.base_url": server.base_url, "vllm.api_key": "sk-session-secret"}
        config = load_config(path, env={}, overrides=overrides)
        client = ModelClient(config.vllm, system_prompt=lambda t, d: "")
        client.resolve_model()
        session = StandInSession(config=config, client=client, said=[], workspace=tmp_path, trace=trace)
        dispatch(session, "/doctor")
        chats = len(server.auto_replied)
    trace.close()
    records = [json.loads(line) for line in trace.path.read_text().splitlines()]
    assert chats and [r["kind"] for r in records].count("request") == chats
    assert "sk-session-secret" not in trace.path.read_text()
    assert "[DEBUG] check tool_call_stream: PASS" in capsys.readouterr().err


def test_doctor_reports_each_mcp_server_without_changing_the_verdict(tmp_path):
    from mcp_support import stdio_json

    config = tmp_path / "config.json"
    servers = {
        "basic": stdio_json("basic"),
        "missing": {"command": "/nonexistent/mcp-server"},
        "off": {"url": "http://127.0.0.1:9/mcp", "enabled": False},
    }
    config.write_text(json.dumps({"mcp": {"servers": servers}}))
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    with FakeVLLM(auto_reply=ideal_model()) as server:
        base = (
            "doctor",
            "--config",
            str(config),
            "--base-url",
            server.base_url,
            "--workspace",
            str(tmp_path),
        )
        text = run_cli(*base, env_extra=state)
        done = run_cli(*base, "--output-format", "json", env_extra=state)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert any(line.startswith("  PASS  MCP basic ") and "connected, 2 tools" in line for line in lines)
    [missing] = [i for i, line in enumerate(lines) if line.startswith("  WARN  MCP missing ")]
    assert "command not found: /nonexistent/mcp-server" in lines[missing]
    assert "mcp list" in lines[missing + 1] and "fix:" in lines[missing + 1]
    assert any(line.startswith("  SKIP  MCP off ") for line in lines)
    assert "Verdict: the agent can work with native tool calls (" in text.stdout  # MCP rows count as warnings

    report = json.loads(done.stdout)
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["mcp:basic"]["status"] == "pass"
    assert [t["name"] for t in checks["mcp:basic"]["data"]["tools"]] == [
        "mcp__basic__echo",
        "mcp__basic__fail",
    ]
    assert checks["mcp:missing"]["status"] == "warn" and checks["mcp:off"]["status"] == "skip"
    assert report["exit_code"] == 0 and (tmp_path / ".vllm-bot" / "mcp").is_dir()


def test_doctor_without_mcp_servers_has_no_mcp_rows(tmp_path):
    with FakeVLLM(auto_reply=ideal_model()) as server:
        done = run_cli(
            "doctor",
            "--base-url",
            server.base_url,
            "--output-format",
            "json",
            env_extra={"XDG_STATE_HOME": str(tmp_path / "state")},
        )
    assert not [c for c in json.loads(done.stdout)["checks"] if c["id"].startswith("mcp:")]


def test_slash_doctor_reports_the_sessions_own_mcp_servers(tmp_path):
    from mcp_support import stdio

    from vllm_bot.config import McpConfig
    from vllm_bot.mcp.manager import McpManager

    path = tmp_path / "config.json"
    path.write_text("{}")
    manager = McpManager(McpConfig(servers={"basic": stdio("basic")}), tmp_path, log_dir=tmp_path / "logs")
    manager.start()
    try:
        assert manager.wait(60)
        with FakeVLLM(auto_reply=ideal_model()) as server:
            config = load_config(path, env={}, overrides={"vllm.base_url": server.base_url})
            client = ModelClient(config.vllm, system_prompt=lambda t, d: "")
            client.resolve_model()
            mcp = SimpleNamespace(manager=manager)
            session = StandInSession(config=config, client=client, said=[], workspace=tmp_path, mcp=mcp)
            dispatch(session, "/doctor")
    finally:
        manager.close()
    [line] = [line for line in session.said if "MCP basic" in line]
    assert line.startswith("  PASS  MCP basic") and "connected, 2 tools" in line


def test_doctor_escapes_the_repositorys_text_in_its_warnings(tmp_path, capsys):
    servers = {
        "x\x1b[1A\x1b[2Kok": {"command": "true"},
        "\u202eevil": {"command": "${VLLM_BOT_TEST_UNSET_VARIABLE}"},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    main(["doctor", "--workspace", str(tmp_path), "--base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert "not trusted, so ignored: mcpServers.x\\x1b[1A\\x1b[2Kok (.mcp.json)" in err
    assert "MCP server \\u202eevil skipped" in err
    assert "\x1b" not in err and "\u202e" not in err
