"""Claude-style MCP settings: a workspace `.mcp.json` read as `mcp.servers` (trusted once, since it
comes from the repository), and a `mcpServers` key in our config answered with how to move it over."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_support import stdio_json

from vllm_bot.config import ConfigError, load_config
from vllm_bot.config.layers import origin, project_summary
from vllm_bot.config.trust import TrustPolicy, TrustStore

CLI = Path(__file__).resolve().parents[2] / "cli.py"
SERVERS = {
    "mcpServers": {
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time", "--tz=${TZ_NAME:-UTC}"]},
        "docs": {
            "type": "http",
            "url": "http://127.0.0.1:${DOCS_PORT}/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
        },
    }
}


def put(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_a_trusted_mcp_json_becomes_mcp_servers(tmp_path):
    ws = tmp_path / "ws"
    mcp_json = put(ws / ".mcp.json", SERVERS)
    asked = []

    def yes(request):
        asked.append(request.keys())
        return True

    store = TrustStore(tmp_path / "trusted.json")
    cfg = load_config(env={"DOCS_PORT": "8931"}, workspace=ws, trust=TrustPolicy(ask=yes, store=store))
    assert asked == [["mcpServers.time", "mcpServers.docs"]]
    time, docs = cfg.mcp.servers["time"], cfg.mcp.servers["docs"]
    assert time.command == "uvx" and time.args == ["mcp-server-time", "--tz=UTC"]
    assert docs.url == "http://127.0.0.1:8931/mcp"
    assert docs.headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}  # expanded when it starts
    assert origin(cfg, "mcp.servers.time") == "project .mcp.json"
    assert ("project .mcp.json", str(mcp_json), "servers time, docs: trusted") in cfg.provenance.files
    assert project_summary(cfg) == ".mcp.json (servers time, docs: trusted)"  # the banner's row
    again = load_config(env={"DOCS_PORT": "8931"}, workspace=ws, trust=TrustPolicy(store=store))
    assert set(again.mcp.servers) == {"time", "docs"}  # asked once


def test_an_untrusted_mcp_json_starts_nothing_and_says_so_in_one_line(tmp_path):
    ws = tmp_path / "ws"
    put(ws / ".mcp.json", SERVERS)
    cfg = load_config(env={"DOCS_PORT": "1"}, workspace=ws, trust=TrustPolicy(ask=lambda r: False))
    assert cfg.mcp.servers == {}
    [warning] = cfg.provenance.warnings
    assert "mcpServers.time, mcpServers.docs (.mcp.json)" in warning and "not trusted" in warning


def test_a_server_whose_variable_is_unset_is_skipped_with_a_warning(tmp_path):
    ws = tmp_path / "ws"
    mcp_json = put(ws / ".mcp.json", SERVERS)
    cfg = load_config(env={}, workspace=ws, trust=TrustPolicy(explicit=True))
    assert set(cfg.mcp.servers) == {"time"}
    assert f"{mcp_json}: MCP server docs skipped: environment variable DOCS_PORT is not set" in (
        cfg.provenance.warnings
    )


@pytest.mark.parametrize(
    "entry, says",
    [
        ({"type": "sse", "url": "http://x/sse"}, "'mcpServers.bad.type' is \"sse\"; vllm-bot speaks"),
        ({"type": "stdio"}, "'mcpServers.bad' (type stdio) needs 'command'"),
        (
            {"type": "http", "url": "http://x", "args": ["a"]},
            "'mcpServers.bad.args' does not go with type http",
        ),
        ({"command": "x", "cwd": "/"}, "unknown key 'mcpServers.bad.cwd'"),
        ({"command": "x", "args": "a b"}, "'mcpServers.bad.args' must be a list of strings"),
    ],
)
def test_a_bad_entry_names_the_key_and_the_file(tmp_path, entry, says):
    ws = tmp_path / "ws"
    mcp_json = put(ws / ".mcp.json", {"mcpServers": {"bad": entry}})
    with pytest.raises(ConfigError) as e:
        load_config(env={}, workspace=ws, trust=TrustPolicy())
    assert str(e.value).startswith(f"{mcp_json}: ") and says in str(e.value)


def test_mcp_servers_in_our_config_says_how_to_move_them(tmp_path):
    user = put(tmp_path / "config.json", SERVERS)
    with pytest.raises(ConfigError) as e:
        load_config(user, env={})
    message = str(e.value)
    assert message.startswith(f"{user}: unknown key 'mcpServers'")
    assert "'${VAR}' in command, args and url is filled in only in a .mcp.json" in message
    converted = json.loads(message[message.index("\n{") : message.rindex("}") + 1])
    assert converted == {
        "mcp": {
            "servers": {
                "time": {"command": "uvx", "args": ["mcp-server-time", "--tz=${TZ_NAME:-UTC}"]},
                "docs": {
                    "url": "http://127.0.0.1:${DOCS_PORT}/mcp",
                    "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                },
            }
        }
    }
    assert ".mcp.json" in message
    # the converted block is valid config as it stands
    fixed = put(tmp_path / "fixed.json", converted)
    assert set(load_config(fixed, env={}).mcp.servers) == {"time", "docs"}


def test_mcp_list_starts_a_workspace_mcp_json_server_only_when_trusted(tmp_path):
    """Through `python cli.py mcp list`, with a real stdio server from a Claude-style .mcp.json."""
    ws = tmp_path / "ws"
    basic = stdio_json("basic")
    put(ws / ".mcp.json", {"mcpServers": {"basic": {"type": "stdio", **basic}}})
    cli = [sys.executable, str(CLI), "mcp", "list", "--workspace", str(ws)]
    untrusted = subprocess.run(cli, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "basic" not in untrusted.stdout  # nothing from the repository started
    [warning] = [line for line in untrusted.stderr.splitlines() if "not trusted" in line]
    assert "mcpServers.basic (.mcp.json)" in warning and "--trust-project" in warning
    trusted = subprocess.run(
        [*cli, "--trust-project"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.splitlines()[0].startswith("basic: connected, 2 tools")
