"""End to end through `python cli.py -p` and the fake vLLM server: the AGENTS.md files reach the
system prompt of the real request, and a project config's harmless keys apply while its safety keys
wait for trust (one warning line)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply

ROOT = Path(__file__).resolve().parents[1]


def run(workspace: Path, base_url: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(workspace), "--base-url", base_url, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_agents_md_and_the_project_config_reach_the_request(tmp_path):
    repo = tmp_path / "repo"
    ws = repo / "service"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").write_text("Repository rule: run tests with `make check`.\n")
    (ws / "AGENTS.md").write_text("Service rule: never touch migrations/.\n")
    xdg = tmp_path / "xdg"
    (xdg / "vllm-bot").mkdir(parents=True)
    (xdg / "vllm-bot" / "AGENTS.md").write_text("User rule: answer tersely.\n")
    (xdg / "vllm-bot" / "config.json").write_text(json.dumps({"vllm": {"temperature": 0.7}}))
    (ws / ".vllm-bot").mkdir()
    (ws / ".vllm-bot" / "config.json").write_text(
        json.dumps({"vllm": {"temperature": 0.25}, "sandbox": {"network": True}})
    )
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
    env["XDG_CONFIG_HOME"] = str(xdg)
    with FakeVLLM([Reply(content="Done.")]) as server:
        proc = run(ws, server.base_url, "-p", "hello", env=env)
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system"
    text = system["content"]
    rules = ["User rule: answer tersely.", "Repository rule:", "Service rule: never touch migrations/."]
    assert all(rule in text for rule in rules)
    assert text.index(rules[0]) < text.index(rules[1]) < text.index(rules[2])  # nearest last
    assert server.requests[0]["temperature"] == 0.25  # project beats user config
    warnings = [line for line in proc.stderr.splitlines() if "not trusted, so ignored" in line]
    assert len(warnings) == 1 and "sandbox.network (.vllm-bot/config.json)" in warnings[0]


def test_a_headless_run_escapes_the_repositorys_text_in_its_warnings(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    servers = {
        "x\x1b[1A\x1b[2Kok": {"command": "true"},
        "\u202eevil": {"command": "${VLLM_BOT_TEST_UNSET_VARIABLE}"},
    }
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
    with FakeVLLM([Reply(content="Done.")]) as server:
        proc = run(ws, server.base_url, "-p", "hello", env=env)
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "not trusted, so ignored: mcpServers.x\\x1b[1A\\x1b[2Kok (.mcp.json)" in proc.stderr
    assert "MCP server \\u202eevil skipped" in proc.stderr
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr
