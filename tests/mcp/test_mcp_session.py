"""MCP inside a real session (client, tools, gate, REPL) against the fake vLLM server: prompts as slash
commands, `@server:uri` mentions, the resource tools, a tool list that changes, server log messages,
and a tool_choice that names a tool of a server that failed."""

import io

import pytest
from mcp_support import stdio, wait_until

from vllm_bot.config import Config, McpServerConfig
from vllm_bot.session import Session
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.ui.plain import PlainUI
from vllm_bot.ui.repl import Repl
from vllm_bot.ui.slash.registry import dispatch


def open_session(tmp_path, server, servers, **vllm):
    config = Config()
    config.vllm.base_url = server.base_url
    for key, value in vllm.items():
        setattr(config.vllm, key, value)
    config.mcp.servers = servers
    err = io.StringIO()
    session = Session(
        config, tmp_path, headless=False, front=PlainUI(stream_text=True, out=io.StringIO(), err=err)
    )
    session.start()
    session.output = err
    session.mcp.sync(wait=True)
    return session


def said(session):
    return session.output.getvalue().splitlines()


def user_message(request):
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def tool_results(request):
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
def basic(tmp_path):
    """`basic(script)`: a session with the basic server, against a fake server playing `script`."""
    opened = []

    def make(script=()):
        server = FakeVLLM(list(script)).__enter__()
        session = open_session(tmp_path, server, {"basic": stdio("basic")})
        session.server = server
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close()
        session.server.__exit__(None, None, None)


def test_a_prompt_is_a_slash_command_whose_text_becomes_the_message(basic):
    basic = basic([Reply(content="Reviewed.")])
    Repl(basic, reader=None).command("/mcp__basic__review src/app.py focus='error handling'")
    basic.server.assert_done()
    assert user_message(basic.server.requests[0]) == "Review src/app.py and look for error handling."
    assert "Prompt review from MCP server basic, sent as your message." in said(basic)


def test_prompt_commands_are_listed_in_help_and_say_how_to_call_them(basic):
    basic = basic()
    dispatch(basic, "/help")
    dispatch(basic, "/mcp__basic__review")
    lines = said(basic)
    listed = [" ".join(line.split()) for line in lines]  # /help pads its first column to the longest
    assert "/mcp__basic__review <path> [focus] Ask for a review of one file. (MCP server basic)" in listed
    assert "/mcp__basic__review: missing path. Usage: /mcp__basic__review <path> [focus]" in lines
    assert basic.server.requests == []  # no prompt, no request


def test_resource_mentions_are_attached_to_the_message(basic):
    basic = basic()
    text = basic.with_mentions("Compare @basic:note://greeting with @basic:note://nope, and @nobody:x.")
    assert text.startswith("Compare @basic:note://greeting with @basic:note://nope, and @nobody:x.\n\n")
    assert text.endswith(
        '<attached resource="basic:note://greeting">\n[resource note://greeting (text/plain)]\n'
        "hello from basic\n</attached>"
    )
    lines = said(basic)
    assert any(line.startswith("Attached @basic:note://greeting: ") for line in lines)
    assert any(
        line.startswith(
            "Not attached @basic:note://nope: MCP server basic rejected the request: Unknown resource"
        )
        for line in lines
    )
    assert not any("@nobody" in line for line in lines)  # not a server: left alone


def test_resource_tools_list_and_read_without_asking(basic):
    reads = [
        Call("mcp_list_resources", {}),
        Call("mcp_read_resource", {"server": "basic", "uri": "note://numbers/3"}),
    ]
    basic = basic([Reply(calls=reads), Reply(content="Read them.")])
    definitions = {d["function"]["name"]: d for d in basic.executor.definitions}
    server = definitions["mcp_read_resource"]["function"]["parameters"]["properties"]["server"]
    assert server["enum"] == ["basic"]
    basic.agent.run("what resources are there?")
    basic.server.assert_done()
    listing, number = tool_results(basic.server.requests[1])
    assert listing.splitlines()[:2] == [
        "basic: 1 resource",
        "- note://greeting  greeting (text/plain): A short greeting.",
    ]
    assert "- note://numbers/{n}  number (text/plain): The number n, spelled out." in listing
    assert number == "[resource note://numbers/3 (text/plain)]\nnumber 3"


def test_a_changed_tool_list_is_followed_and_log_messages_go_to_the_log(tmp_path):
    script = [Reply(content="ok")]
    with FakeVLLM(script) as server:
        session = open_session(tmp_path, server, {"flaky": stdio("flaky")})
        try:
            manager = session.mcp.manager
            assert manager.call("mcp__flaky__whoami", {}).value.startswith("vllm-bot ")
            assert manager.call("mcp__flaky__grow", {}).value == "added extra"
            for _ in range(2):
                assert manager.call("mcp__flaky__chatter", {}).value == "chattered"
            wait_until(lambda: "mcp__flaky__extra" in [t.public for t in manager.tools()])
            session.mcp.sync()  # as the REPL does before a task: the new tool goes out with it
            session.agent.run("go")
            log = (tmp_path / ".vllm-bot" / "mcp" / "flaky.log").read_text()
        finally:
            session.close()
    assert "mcp__flaky__extra" in [d["function"]["name"] for d in server.requests[0]["tools"]]
    assert manager.call("mcp__flaky__extra", {"x": 1}).kind == "error"  # closed with the session
    lines = said(session)
    assert "info: MCP server flaky changed its tools: +mcp__flaky__extra" in lines
    warned = [line for line in lines if "it logged" in line]
    assert warned == [
        f"warning: MCP server flaky: it logged a warning: the disk is almost full (see {tmp_path}/.vllm-bot/mcp/flaky.log)"
    ]
    assert log.count("[server-log] warning: the disk is almost full") == 2
    assert log.count("[server-log] error: the cache could not be written") == 2
    assert "[server-log] info: starting the chatter" in log


def test_tool_choice_naming_a_tool_of_a_failed_server_falls_back_to_auto(tmp_path):
    script = [Reply(content="fine")]
    with FakeVLLM(script) as server:
        servers = {"missing": McpServerConfig(command="/nonexistent/mcp-server")}
        session = open_session(tmp_path, server, servers, tool_choice="mcp__missing__search")
        try:
            session.agent.run("go")
            session.mcp.sync()
        finally:
            session.close()
    assert server.requests[0]["tool_choice"] == "auto"
    warned = [line for line in said(session) if "tool_choice" in line]
    assert warned == [
        "warning: vllm.tool_choice names mcp__missing__search, which is not offered now; using auto"
    ]
