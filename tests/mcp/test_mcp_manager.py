"""The MCP manager against real servers written with the SDK, over stdio and HTTP."""

import sys
import time

import pytest
from mcp_support import free_port, start_http_server, stdio, wait_until

from vllm_bot.config import McpConfig, McpServerConfig
from vllm_bot.mcp.manager import McpManager
from vllm_bot.mcp.names import NAME_RE


@pytest.fixture(scope="module")
def manager(tmp_path_factory):
    workspace = tmp_path_factory.mktemp("ws")
    broken = McpServerConfig(
        command=sys.executable, args=["-c", "import sys; sys.exit('broken: no module named srv')"]
    )
    config = McpConfig(
        servers={
            "basic": stdio("basic"),
            "raw": stdio("raw"),
            "missing": McpServerConfig(command="/nonexistent/mcp-server"),
            "broken": broken,
            "off": McpServerConfig(command="/nonexistent/off", enabled=False),
        }
    )
    m = McpManager(config, workspace, log_dir=workspace / ".vllm-bot" / "mcp", reserved=["read", "exec"])
    m.start()
    assert m.wait(60)
    yield m
    m.close()


def status(manager, name):
    return next(s for s in manager.snapshot() if s.name == name)


def test_statuses_and_reasons(manager):
    assert [(s.name, s.status) for s in manager.snapshot()] == [
        ("basic", "connected"),
        ("raw", "connected"),
        ("missing", "failed"),
        ("broken", "failed"),
        ("off", "disabled"),
    ]
    assert status(manager, "missing").error == "command not found: /nonexistent/mcp-server"
    broken = status(manager, "broken").error
    assert "exited" in broken and "its stderr ends: broken: no module named srv" in broken
    assert manager.pending() == []


def test_tools_are_listed_converted_and_named(manager):
    basic = status(manager, "basic")
    assert [(t.public, t.name) for t in basic.tools] == [
        ("mcp__basic__echo", "echo"),
        ("mcp__basic__fail", "fail"),
    ]
    echo = basic.tools[0]
    assert echo.annotations["readOnlyHint"] is True
    assert echo.definition["function"]["parameters"] == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    raw = status(manager, "raw")
    names = [t.public for t in raw.tools]
    assert all(NAME_RE.match(n) for n in names) and len(set(names)) == len(names)
    assert "mcp__raw__get_issue" in names and "mcp__raw__with_defs" in names
    assert any(n.startswith("mcp__raw__a_really_long_tool_name_") and len(n) == 64 for n in names)
    assert sorted(raw.skipped) == [
        "a tool without a name (description: No name at all.)",
        "dangling: its inputSchema refers to '#/$defs/Nope', which it does not contain",
        "invalid_schema: its inputSchema is not valid JSON Schema ('strng' is not valid under any of the given schemas)",
    ]
    assert manager.definitions() == [t.definition for t in manager.tools()]
    assert len(manager.tools()) == 2 + 6


def test_text_result(manager):
    result = manager.call("mcp__basic__echo", {"text": "hi"}, "call_1")
    assert (result.tool_call_id, result.name, result.kind, result.value) == (
        "call_1",
        "mcp__basic__echo",
        "text",
        "echo: hi",
    )


def test_tool_error_is_an_error_result(manager):
    result = manager.call("mcp__basic__fail", {"reason": "the disk is full"}, "c")
    assert result.kind == "error" and "cannot do that: the disk is full" in result.value


def test_data_and_other_content_kinds(manager):
    assert manager.call("mcp__raw__data", {"n": 4}).value == {"n": 4, "square": 16}
    kinds = manager.call("mcp__raw__kinds", {})
    assert kinds.kind == "text"
    assert kinds.value.splitlines() == [
        "three blocks follow",
        "[image image/png, 11 bytes, not shown]",
        "[resource file:///notes.txt (text/plain)]",
        "note text",
        "[resource link report https://example.com/report.pdf (application/pdf)]",
    ]


def test_original_names_reach_the_server(manager):
    dotted = next(t for t in manager.tools() if t.name == "get.issue")
    assert manager.call(dotted.public, {"n": 1}).value == "called get.issue with {'n': 1}"


def test_calls_to_unavailable_servers_are_error_results(manager):
    assert manager.call("mcp__missing__x", {}).kind == "error"
    assert "not an MCP tool" in manager.call("mcp__nope__x", {}).value


def test_notices_for_failed_servers_and_skipped_tools(manager):
    notices = manager.take_notices()
    messages = [m for level, m in notices if level == "warning"]
    assert "MCP server missing is not available: command not found: /nonexistent/mcp-server" in messages
    assert any(m.startswith("MCP server broken is not available:") for m in messages)
    assert sum(m.startswith("MCP server raw: skipped") for m in messages) == 3
    assert manager.take_notices() == []


def test_server_stderr_goes_to_a_log_file(manager):
    broken = status(manager, "broken")
    assert broken.log_path is not None and "broken: no module named srv" in broken.log_path.read_text()


def test_start_up_timeout(tmp_path):
    mute = McpServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    m = McpManager(McpConfig(servers={"mute": mute}, startup_timeout=1), tmp_path)
    m.start()
    try:
        assert m.wait(30)
        assert m.snapshot()[0].error == "no answer within 1 s (mcp.startup_timeout)"
    finally:
        m.close()


def test_close_while_starting_does_not_hang(tmp_path):
    mute = McpServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    m = McpManager(McpConfig(servers={"mute": mute}), tmp_path)
    m.start()
    m.close()
    assert m.snapshot()[0].status == "closed" and m.take_notices() == []


def test_http_server_with_headers_from_the_environment(tmp_path, monkeypatch):
    port = free_port()
    proc = start_http_server(port)
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    server = McpServerConfig(
        url=f"http://127.0.0.1:{port}/mcp", headers={"Authorization": "Bearer ${MCP_TEST_TOKEN}"}
    )
    m = McpManager(McpConfig(servers={"web": server}), tmp_path)
    m.start()
    try:
        assert m.wait(60)
        assert [t.public for t in m.tools()] == [
            "mcp__web__echo",
            "mcp__web__fail",
            "mcp__web__authorization",
        ]
        assert m.call("mcp__web__echo", {"text": "over http"}).value == "echo: over http"
        assert m.call("mcp__web__authorization", {}).value == "Bearer s3cret"
        assert m.call("mcp__web__fail", {"reason": "x"}).kind == "error"
    finally:
        m.close()
        proc.terminate()
        proc.wait(10)


def test_unset_environment_variable_fails_that_server_only(tmp_path, monkeypatch):
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    server = McpServerConfig(url="http://127.0.0.1:9/mcp", headers={"X-Key": "${MCP_TEST_UNSET}"})
    m = McpManager(McpConfig(servers={"web": server}), tmp_path)
    m.start()
    try:
        assert m.wait(30)
        assert m.snapshot()[0].error == (
            "environment variable MCP_TEST_UNSET is not set (used in mcp.servers.web.headers.X-Key)"
        )
    finally:
        m.close()


def test_unreachable_http_server(tmp_path):
    server = McpServerConfig(url=f"http://127.0.0.1:{free_port()}/mcp")
    m = McpManager(McpConfig(servers={"web": server}), tmp_path)
    m.start()
    try:
        assert m.wait(30)
        state = m.snapshot()[0]
        assert state.status == "failed" and state.error.startswith("HTTP error talking to http://127.0.0.1:")
    finally:
        m.close()


def test_unwritable_log_directory_is_a_warning_not_a_hang(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    m = McpManager(
        McpConfig(servers={"gone": McpServerConfig(command="/nonexistent/x")}), tmp_path, log_dir=not_a_dir
    )
    m.start()
    try:
        assert m.wait(30)
        notices = [message for _, message in m.take_notices()]
        assert notices[0].startswith("MCP server gone: no log file (")
        assert notices[1] == "MCP server gone is not available: command not found: /nonexistent/x"
    finally:
        m.close()


def test_an_http_server_gone_while_idle_is_noticed_by_its_ping(tmp_path):
    port = free_port()
    proc = start_http_server(port)
    server = McpServerConfig(url=f"http://127.0.0.1:{port}/mcp")
    pinged = McpManager(McpConfig(servers={"web": server}, ping_interval=0.2), tmp_path / "a")
    unpinged = McpManager(McpConfig(servers={"web": server}, ping_interval=0), tmp_path / "b")
    for m in (pinged, unpinged):
        m.start()
    try:
        assert pinged.wait(60) and unpinged.wait(60)
        time.sleep(1)  # several pings answered: still connected
        assert pinged.snapshot()[0].status == "connected" and pinged.take_notices() == []
        proc.kill()
        proc.wait(10)
        # Nobody calls anything: the ping notices, the restart is tried once and fails.
        wait_until(lambda: pinged.snapshot()[0].status == "failed")
        notices = [message for _, message in pinged.take_notices()]
        assert any(n.startswith("MCP server web stopped (") and "restarting it" in n for n in notices), (
            notices
        )
        assert unpinged.snapshot()[0].status == "connected"  # without the ping: seen at the next call
    finally:
        pinged.close()
        unpinged.close()
        if proc.poll() is None:
            proc.kill()
