"""The mcp config section: stdio and HTTP servers, strict checks that name the key and the file."""

import json

import pytest

from vllm_bot.config import ConfigError, McpServerConfig, load_config


def load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_config(path, env={}), str(path)


def test_defaults(tmp_path):
    config, _ = load(tmp_path, {})
    assert config.mcp.servers == {} and config.mcp.timeout == 60.0 and config.mcp.startup_timeout == 30.0
    assert config.mcp.max_call_time == 600.0


def test_tool_filters_and_the_progress_cap(tmp_path):
    server = {"command": "srv", "enabled_tools": ["a", "mcp__s__b"], "disabled_tools": ["c"]}
    config, _ = load(tmp_path, {"mcp": {"max_call_time": 120, "servers": {"s": server}}})
    assert config.mcp.max_call_time == 120.0
    assert config.mcp.servers["s"].enabled_tools == ["a", "mcp__s__b"]
    assert config.mcp.servers["s"].disabled_tools == ["c"]
    assert McpServerConfig(command="x").enabled_tools is None  # every tool, unless a list is given


def test_stdio_and_http_servers(tmp_path):
    config, _ = load(
        tmp_path,
        {
            "mcp": {
                "timeout": 20,
                "servers": {
                    "github": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-github"],
                        "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
                        "allow": ["list_issues"],
                    },
                    "docs": {
                        "url": "http://127.0.0.1:8931/mcp",
                        "headers": {"Authorization": "Bearer x"},
                        "timeout": 5,
                    },
                    "off": {"command": "srv", "enabled": False, "allow": True},
                },
            }
        },
    )
    assert config.mcp.timeout == 20.0
    github, docs, off = config.mcp.servers.values()
    assert github == McpServerConfig(
        command="npx",
        args=["-y", "@modelcontextprotocol/server-github"],
        env={"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
        allow=["list_issues"],
    )
    assert docs.url == "http://127.0.0.1:8931/mcp" and docs.headers == {"Authorization": "Bearer x"}
    assert docs.timeout == 5.0 and docs.command is None
    assert off.enabled is False and off.allow is True


@pytest.mark.parametrize(
    ("server", "message"),
    [
        (
            {},
            "'mcp.servers.s' needs exactly one of 'command' (a local stdio server) or 'url' (an HTTP server)",
        ),
        ({"command": "a", "url": "http://x"}, "'mcp.servers.s' needs exactly one of 'command'"),
        ({"command": "a", "timeout": 0}, "'mcp.servers.s.timeout' must be a positive number of seconds"),
        (
            {"command": "a", "allow": "all"},
            "'mcp.servers.s.allow' must be true or false or a list of strings",
        ),
        ({"command": "a", "args": "-y srv"}, "'mcp.servers.s.args' must be a list of strings"),
        ({"command": "a", "env": {"K": 1}}, "'mcp.servers.s.env.K' must be a string"),
        ({"comand": "a"}, "unknown key 'mcp.servers.s.comand' (did you mean 'mcp.servers.s.command'?)"),
        ("npx srv", "'mcp.servers.s' must be an object"),
        (
            {"command": "a", "enabled_tools": "echo"},
            "'mcp.servers.s.enabled_tools' must be a list of strings or null",
        ),
        ({"command": "a", "disabled_tools": [1]}, "'mcp.servers.s.disabled_tools[0]' must be a string"),
    ],
)
def test_bad_servers_name_the_key_and_the_file(tmp_path, server, message):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"mcp": {"servers": {"s": server}}})
    assert message in str(info.value)
    assert str(tmp_path / "config.json") in str(info.value)


def test_servers_must_be_an_object(tmp_path):
    with pytest.raises(ConfigError, match=r"'mcp\.servers' must be an object"):
        load(tmp_path, {"mcp": {"servers": [{"command": "a"}]}})


def test_max_call_time_must_be_positive(tmp_path):
    with pytest.raises(ConfigError, match=r"'mcp\.max_call_time' must be"):
        load(tmp_path, {"mcp": {"max_call_time": 0}})
