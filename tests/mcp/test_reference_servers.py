"""The MCP client against reference servers nobody here wrote: mcp-server-time and mcp-server-git
(PyPI) over stdio, @modelcontextprotocol/server-everything (npm) over stdio and streamable HTTP.

.ci/run installs them into .mcp-servers/; without them these tests skip locally (the message says
how to install them) and fail in CI.
"""

import subprocess
import threading

import pytest
from mcp_support import free_port, reference_command, start_http_server, wait_until

from vllm_bot.config import McpConfig, McpServerConfig
from vllm_bot.mcp import resources
from vllm_bot.mcp.manager import McpManager
from vllm_bot.mcp.prompts import parse_arguments, prompt_text
from vllm_bot.mcp.report import server_row, status_lines
from vllm_bot.tools.definitions import signature


def open_manager(tmp_path, **servers):
    manager = McpManager(McpConfig(servers=servers, timeout=30), tmp_path, log_dir=tmp_path / "logs")
    manager.start()
    assert manager.wait(60), [(s.name, s.status) for s in manager.snapshot()]
    return manager


def stdio_server(name, *args, **config):
    command, *rest = reference_command(name)
    return McpServerConfig(command=command, args=[*rest, *args], **config)


def test_time_server(tmp_path):
    m = open_manager(tmp_path, time=stdio_server("time", "--local-timezone", "UTC"))
    try:
        [state] = m.snapshot()
        assert state.status == "connected" and state.skipped == []
        # It declares resources and lists none: no resource tools for it.
        assert state.resources is False and m.resource_servers() == []
        tools = {t.name: t for t in state.tools}
        assert signature(tools["convert_time"].definition) == (
            "mcp__time__convert_time(source_timezone: string, time: string, target_timezone: string)"
        )
        now = m.call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
        assert now.kind == "data" and now.value["timezone"] == "Asia/Tokyo"
        converted = m.call(
            "mcp__time__convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"},
        )
        assert converted.kind == "data" and converted.value["target"]["datetime"].endswith("17:30:00+05:30")
        bad = m.call("mcp__time__get_current_time", {"timezone": "Mars/Olympus"})
        assert bad.kind == "error" and "Mars/Olympus" in bad.value
    finally:
        m.close()


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_git_server_on_a_real_repository(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / "notes.txt").write_text("first\n")
    m = open_manager(tmp_path, git=stdio_server("git", "--repository", str(repo)))
    try:
        where = {"repo_path": str(repo)}
        assert "notes.txt" in m.call("mcp__git__git_status", where).value
        assert m.call("mcp__git__git_add", {**where, "files": ["notes.txt"]}).kind != "error"
        committed = m.call("mcp__git__git_commit", {**where, "message": "Add notes"})
        assert committed.kind != "error", committed.value
        assert git(repo, "log", "--format=%s") == "Add notes\n"  # a real commit in the real repository
        log = m.call("mcp__git__git_log", {**where, "max_count": 1})
        assert "Add notes" in str(log.value)
        outside = m.call("mcp__git__git_status", {"repo_path": str(tmp_path)})
        assert outside.kind == "error"  # the server refuses a path outside its --repository
    finally:
        m.close()


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request, tmp_path_factory):
    """A manager connected to server-everything over stdio or streamable HTTP (timeout 2 s)."""
    tmp_path = tmp_path_factory.mktemp(f"everything-{request.param}")
    command = reference_command("everything")
    proc = None
    if request.param == "stdio":
        server = McpServerConfig(command=command[0], args=[*command[1:], "stdio"], timeout=2)
    else:
        port = free_port()
        proc = start_http_server(port, [*command, "streamableHttp"], env={"PORT": str(port)})
        server = McpServerConfig(url=f"http://127.0.0.1:{port}/mcp", timeout=2)
    m = open_manager(tmp_path, everything=server)
    m.log = tmp_path / "logs" / "everything.log"
    yield m
    m.close()
    if proc is not None:
        proc.terminate()
        proc.wait(10)


def test_everything_tools_and_the_one_that_needs_tasks(everything):
    # simulate-research-query requires task-augmented calls: skipped with a reason, never offered.
    # (The server adds it after the handshake and says its tools changed: the re-list finds it.)
    wait_until(lambda: any("simulate-research-query" in s for s in everything.snapshot()[0].skipped))
    names = [t.name for t in everything.tools()]
    assert "simulate-research-query" not in names and "echo" in names
    assert everything.call("mcp__everything__echo", {"message": "hi"}).value == "Echo: hi"
    assert "5" in str(everything.call("mcp__everything__get-sum", {"a": 2, "b": 3}).value)
    annotated = everything.find("mcp__everything__get-annotated-message")
    assert signature(annotated.definition) == (
        'mcp__everything__get-annotated-message(messageType: "error"|"success"|"debug", includeImage?: boolean)'
    )


def test_everything_resources(everything):
    assert everything.resource_servers() == ["everything"]
    listing = resources.list_resources(everything, None, 30000)
    assert listing.kind == "text" and "demo://resource/static/document/" in listing.value
    assert "demo://resource/dynamic/text/{resourceId}" in listing.value  # a URI template
    text = resources.read_resource(everything, "everything", "demo://resource/dynamic/text/1", 30000)
    assert text.kind == "text" and text.value.startswith("[resource demo://resource/dynamic/text/1")
    # A blob whose MIME type is text/plain is shown as text, not "binary, not shown".
    links = everything.call("mcp__everything__get-resource-links", {"count": 2}).value
    assert 'read it with mcp_read_resource(server="everything", uri="demo://resource/dynamic/' in links
    blob = everything.call(
        "mcp__everything__get-resource-reference", {"resourceType": "Blob", "resourceId": 2}
    )
    assert "(text/plain)]\nResource 2: This is a base64 blob" in blob.value and "binary" not in blob.value
    missing = resources.read_resource(everything, "everything", "demo://nowhere", 30000)
    assert missing.kind == "error" and missing.value.startswith(
        "Cannot read demo://nowhere from MCP server everything"
    )


def test_everything_prompts(everything):
    prompts = {p.name: p for p in everything.prompts()}
    assert prompts["args-prompt"].command == "mcp__everything__args-prompt"
    text = prompt_text(
        everything, prompts["args-prompt"], parse_arguments(prompts["args-prompt"], "Boston MA")
    )
    assert "Boston" in text and "MA" in text
    embedded = prompt_text(
        everything, prompts["resource-prompt"], parse_arguments(prompts["resource-prompt"], "Text 1")
    )
    assert "[resource demo://resource/dynamic/text/1" in embedded


def test_everything_progress_keeps_a_long_call_alive(everything):
    shown = []
    # 3 s of work reported every 0.5 s: longer than the 2 s timeout, never 2 s without news.
    result = everything.call(
        "mcp__everything__trigger-long-running-operation", {"duration": 3, "steps": 6}, on_output=shown.append
    )
    assert result.value.startswith("Long running operation completed.")
    assert shown[:2] == ["progress 1/6 (17%)\n", "progress 2/6 (33%)\n"] and len(shown) == 6


def test_everything_call_cancelled(everything):
    event = threading.Event()
    cancel = threading.Timer(0.5, event.set)
    cancel.start()
    result = everything.call(
        "mcp__everything__trigger-long-running-operation", {"duration": 60, "steps": 60}, cancel=event
    )
    assert result.value.startswith("Interrupted by the user before it finished")
    assert everything.call("mcp__everything__echo", {"message": "still here"}).value == "Echo: still here"


def test_everything_log_messages_go_to_its_log(everything):
    assert everything.call("mcp__everything__toggle-simulated-logging", {}).kind == "text"
    try:
        wait_until(lambda: "[server-log] " in everything.log.read_text())
    finally:
        everything.call("mcp__everything__toggle-simulated-logging", {})


def test_an_http_server_that_restarts_is_back_without_stale_lines(tmp_path):
    """server-everything over HTTP stops and starts again on its port: the ping notices, the restart
    connects, and neither the old session's end (the new server answers its DELETE with 400) nor the
    old "stopped answering pings" shows, nor the skipped tool a second time."""
    port = free_port()
    command, env = [*reference_command("everything"), "streamableHttp"], {"PORT": str(port)}
    proc = start_http_server(port, command, env=env)
    server = McpServerConfig(url=f"http://127.0.0.1:{port}/mcp")
    # Pings 2 s apart: the new server is usually up before the next one, which it answers with
    # "no such session" (the case users meet); a ping in between finds no server at all.
    m = McpManager(McpConfig(servers={"everything": server}, ping_interval=2), tmp_path, log_dir=tmp_path)
    m.start()
    said = []
    try:
        assert m.wait(60)
        wait_until(
            lambda: said.extend(m.take_notices()) or any("simulate-research-query" in t for _, t in said)
        )
        proc.terminate()
        proc.wait(10)
        proc = start_http_server(port, command, env=env)
        wait_until(lambda: said.extend(m.take_notices()) or any("restarting it" in t for _, t in said))
        assert m.wait(60)
        wait_until(lambda: any("simulate-research-query" in s for s in m.snapshot()[0].skipped))
        assert m.call("mcp__everything__echo", {"message": "back"}).value == "Echo: back"
        said.extend(m.take_notices())
        [state] = m.snapshot()
    finally:
        m.close()
        proc.terminate()
        proc.wait(10)
    assert state.status == "connected" and state.error is None and state.warnings == []
    texts = [text for _, text in said]
    assert not [t for t in texts if "Session termination" in t], texts
    assert sum("skipped simulate-research-query" in t for t in texts) == 1, texts
    lines = status_lines([server_row(state)], with_tools=False)
    assert lines[0].startswith("everything: connected, ")
    assert not [line for line in lines if "error:" in line or "pings" in line or "warning:" in line], lines
