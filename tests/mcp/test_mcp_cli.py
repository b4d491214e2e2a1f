"""`python cli.py mcp list` and `python cli.py -p` with MCP servers, as the user runs them."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import jsonrpc_json, stdio_json

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

CLI = Path(__file__).resolve().parents[2] / "cli.py"


def cli(*args, cwd, stdin=""):
    return subprocess.run(
        [sys.executable, str(CLI), *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120
    )


def write_config(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_mcp_list_reports_each_server_and_fails_when_one_is_down(tmp_path):
    config = write_config(
        tmp_path,
        {
            "mcp": {
                "servers": {
                    "basic": stdio_json("basic"),
                    "missing": {"command": "/nonexistent/mcp-server"},
                    "off": {"url": "http://127.0.0.1:9/mcp", "enabled": False},
                }
            }
        },
    )
    done = cli("mcp", "list", "--config", config, "--workspace", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("basic: connected, 2 tools, ~")
    assert re.fullmatch(r"  mcp__basic__echo  \(~\d+ tokens, read-only\)", lines[1])
    assert re.fullmatch(r"  mcp__basic__fail  \(~\d+ tokens, destructive\)", lines[2])
    assert "missing: failed  [stdio: /nonexistent/mcp-server]" in lines
    assert "  error: command not found: /nonexistent/mcp-server" in lines
    assert "off: disabled  [http: http://127.0.0.1:9/mcp]" in lines
    assert done.stderr.strip() == "vllm-bot: not connected: missing"


def test_mcp_list_json_exits_0_when_all_enabled_servers_connect(tmp_path):
    config = write_config(tmp_path, {"mcp": {"servers": {"basic": stdio_json("basic")}}})
    done = cli("mcp", "list", "--json", "--config", config, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["name"] == "basic" and row["status"] == "connected" and row["transport"] == "stdio"
    assert [t["name"] for t in row["tools"]] == ["mcp__basic__echo", "mcp__basic__fail"]
    echo = row["tools"][0]
    assert {k: echo[k] for k in ("name", "mcp_name", "hints", "off")} == {
        "name": "mcp__basic__echo",
        "mcp_name": "echo",
        "hints": ["read-only"],
        "off": False,
    }
    assert row["tokens"] > 0 and all(t["tokens"] > 0 for t in row["tools"])
    assert row["error"] is None and row["warnings"] == [] and row["prompts"] == ["/mcp__basic__review"]
    assert row["resources"] is True
    # The server wrote nothing to its log, so the report points at none.
    assert row["log"] is None and (tmp_path / ".vllm-bot" / "mcp" / "basic.log").read_text() == ""


def test_mcp_list_shows_the_warnings_a_session_prints(tmp_path):
    """What a session warns about a server (a name in enabled_tools it does not list, a tool it
    skips) is in `mcp list` and its JSON too, not only in a session's notices."""
    tools = [
        {"name": "good", "inputSchema": {"type": "object"}},
        {"name": "stringy", "inputSchema": {"type": "string"}},
    ]
    server = {**jsonrpc_json(tmp_path, tools), "enabled_tools": ["good", "nosuch"]}
    config = write_config(tmp_path, {"mcp": {"servers": {"j": server}}})
    done = cli("mcp", "list", "--config", config, "--workspace", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("j: connected, 1 tool, ~")
    assert lines[1] == "  warning: enabled_tools names 'nosuch', a tool the server does not list"
    assert lines[-1] == '  skipped stringy: its inputSchema has type "string", not "object"'
    assert "validation error" not in done.stdout + done.stderr
    done = cli("mcp", "list", "--json", "--config", config, "--workspace", str(tmp_path), cwd=tmp_path)
    [row] = json.loads(done.stdout)
    assert row["warnings"] == ["enabled_tools names 'nosuch', a tool the server does not list"]
    assert row["skipped"] == ['stringy: its inputSchema has type "string", not "object"']


def test_junk_on_a_servers_stdout_is_one_warning_and_no_traceback(tmp_path):
    junk = stdio_json("flaky", env={"FLAKY_JUNK": "1"})
    config = write_config(tmp_path, {"mcp": {"servers": {"junk": junk}}})
    done = cli("mcp", "list", "--config", config, "--workspace", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and done.stderr == ""
    log = tmp_path / ".vllm-bot" / "mcp" / "junk.log"
    assert (
        "  warning: it wrote a line on stdout that is not an MCP message (ignored)"
        in done.stdout.splitlines()
    )
    text = log.read_text()
    assert "[mcp-client] ERROR mcp.client.stdio: Failed to parse JSONRPC message from server" in text
    assert "[mcp-client] Traceback (most recent call last):" in text


def test_mcp_list_bad_config_is_a_usage_error(tmp_path):
    config = write_config(tmp_path, {"mcp": {"servers": {"x": {"command": "a", "url": "http://b"}}}})
    done = cli("mcp", "list", "--config", config, cwd=tmp_path)
    assert done.returncode == 2
    assert f"{config}: 'mcp.servers.x' needs exactly one of 'command'" in done.stderr


@pytest.mark.parametrize(
    ("mode", "flag"), [("parser", "--function-calling"), ("noparser", "--no-function-calling")]
)
def test_headless_task_uses_an_mcp_tool(tmp_path, mode, flag):
    config = write_config(tmp_path, {"mcp": {"servers": {"basic": stdio_json("basic", allow=True)}}})
    script = [Reply(calls=[Call("mcp__basic__echo", {"text": "from the cli"})]), Reply(content="Echoed.")]
    with FakeVLLM(script, mode=mode) as server:
        args = ["--config", config, "--base-url", server.base_url, "--workspace", str(tmp_path)]
        done = cli("-p", "echo something", flag, *args, cwd=tmp_path)
        server.assert_done()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Echoed."
    last = server.requests[1]["messages"][-1]
    assert "echo: from the cli" in last["content"]


def test_interactive_slash_mcp(tmp_path):
    config = write_config(tmp_path, {"mcp": {"servers": {"basic": stdio_json("basic")}}})
    with FakeVLLM([]) as server:
        args = ["--config", config, "--base-url", server.base_url, "--workspace", str(tmp_path)]
        done = cli(*args, cwd=tmp_path, stdin="/mcp\n/exit\n")
    assert done.returncode == 0, done.stderr
    assert "basic: " in done.stderr  # connected, or still starting when /mcp came first


def test_junk_on_stdout_in_a_headless_run_is_one_warning_line(tmp_path):
    junk = stdio_json("flaky", env={"FLAKY_JUNK": "1"}, allow=True)
    config = write_config(tmp_path, {"mcp": {"servers": {"junk": junk}}})
    script = [Reply(calls=[Call("mcp__junk__sleep", {"seconds": 0})]), Reply(content="Slept.")]
    with FakeVLLM(script) as server:
        args = ["--config", config, "--base-url", server.base_url, "--workspace", str(tmp_path)]
        done = cli("-p", "sleep", *args, cwd=tmp_path)
        server.assert_done()
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Failed to parse" not in done.stderr
    warned = [line for line in done.stderr.splitlines() if "not an MCP message" in line]
    assert warned == [
        "warning: MCP server junk: it wrote a line on stdout that is not an MCP message (ignored) "
        f"(see {tmp_path}/.vllm-bot/mcp/junk.log)"
    ]


def test_mcp_list_escapes_the_repositorys_text_in_its_warnings(tmp_path):
    """Server names from a `.mcp.json` reach stderr as escapes: they cannot move the cursor or erase a
    line (the untrusted server's warning, and the one of a server skipped for an unset variable)."""
    servers = {
        "x\x1b[1A\x1b[2Kok": {"command": "true"},
        "\u202eevil": {"command": "${VLLM_BOT_TEST_UNSET_VARIABLE}"},
    }
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    done = cli("mcp", "list", "--workspace", str(tmp_path), cwd=tmp_path)
    assert "not trusted, so ignored: mcpServers.x\\x1b[1A\\x1b[2Kok (.mcp.json)" in done.stderr
    assert "MCP server \\u202eevil skipped" in done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr


def test_mcp_list_escapes_what_a_failing_server_wrote(tmp_path):
    """A server's stderr quoted in its error line reaches the terminal as escapes, not as codes."""
    noisy = {"command": "sh", "args": ["-c", "printf '\\033[2Jboom\\n' >&2; exit 1"]}
    config = write_config(tmp_path, {"mcp": {"servers": {"noisy": noisy}}})
    done = cli("mcp", "list", "--config", config, "--workspace", str(tmp_path), cwd=tmp_path)
    out = done.stdout + done.stderr
    assert "its stderr ends: \\x1b[2Jboom" in out and "\x1b" not in out


def test_junk_on_a_servers_stdout_in_doctor_is_a_warning_and_no_traceback(tmp_path):
    from doctor_model import ideal_model

    junk = stdio_json("flaky", env={"FLAKY_JUNK": "1"})
    config = write_config(tmp_path, {"mcp": {"servers": {"junk": junk}}})
    with FakeVLLM(auto_reply=ideal_model()) as server:
        done = cli(
            "doctor",
            "--config",
            config,
            "--base-url",
            server.base_url,
            "--workspace",
            str(tmp_path),
            cwd=tmp_path,
        )
    assert "Traceback" not in done.stdout + done.stderr and "Failed to parse" not in done.stdout + done.stderr
    assert "MCP junk" in done.stdout and "it wrote a line on stdout that is not an MCP message" in done.stdout
