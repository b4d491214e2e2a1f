"""MCP tools through the whole loop: the fake vLLM server calls them in function-calling and text
mode, and their results reach the model with the right kind."""

import re
import sys
from types import SimpleNamespace

import pytest
from mcp_support import make_executor, stdio

from vllm_bot.agent.loop import Agent
from vllm_bot.config import Config, McpServerConfig, VllmConfig
from vllm_bot.events import Notice
from vllm_bot.mcp.bridge import McpTools
from vllm_bot.model.client import ModelClient
from vllm_bot.prompts import system_prompt
from vllm_bot.safety.approval import Answer, ApprovalGate
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools.definitions import tool_names
from vllm_bot.ui.slash.registry import dispatch


class Recorder(list):
    def __call__(self, event):
        self.append(event)

    def notices(self, level="warning"):
        return [e.message for e in self if isinstance(e, Notice) and e.level == level]


class Harness:
    """The session's parts wired as session.py wires them, around a fake vLLM server."""

    def __init__(
        self, workspace, server, servers, *, function_calling=True, approval="full-auto", confirm=None
    ):
        self.config = Config()
        self.config.mcp.servers = servers
        self.config.agent.approval = approval
        self.events = Recorder()
        self.executor = make_executor(workspace)
        self.mcp = McpTools(self.config, workspace, workspace / ".vllm-bot")
        self.gate = ApprovalGate(approval, confirm, preview=self.mcp.preview(self.executor.preview))
        vllm = VllmConfig(
            base_url=server.base_url, model=server.model, enable_function_calling=function_calling, timeout=10
        )

        def prompt(text_mode, definitions):
            return system_prompt(
                "system.yaml",
                role="R",
                workspace=str(workspace),
                definitions=definitions,
                text_mode=text_mode,
            )

        self.client = ModelClient(vllm, system_prompt=prompt)
        self.agent = Agent(self.client, self.executor, self.config.agent, self.events, gate=self.gate)
        self.mcp.start(self.executor, self.gate, self.events)

    def run(self, task="use the tools"):
        self.mcp.sync(wait=True)
        return self.agent.run(task)

    def close(self):
        self.mcp.close()


ECHO_AND_FAIL = [
    Reply(
        content="Calling both.",
        calls=[Call("mcp__basic__echo", {"text": "hi"}), Call("mcp__basic__fail", {"reason": "no disk"})],
    ),
    Reply(content="All done."),
]


@pytest.mark.parametrize(("mode", "function_calling"), [("parser", True), ("noparser", False)])
def test_mcp_tools_in_both_modes(tmp_path, mode, function_calling):
    with FakeVLLM(list(ECHO_AND_FAIL), mode=mode) as server:
        h = Harness(tmp_path, server, {"basic": stdio("basic")}, function_calling=function_calling)
        try:
            outcome = h.run()
            h.mcp.sync()  # idempotent: nothing is registered twice
            assert tool_names(h.executor.definitions).count("mcp__basic__echo") == 1
        finally:
            h.close()
        server.assert_done()
    assert (outcome.reason, outcome.answer) == ("done", "All done.")
    first, second = server.requests
    system = first["messages"][0]["content"]
    if function_calling:
        sent = {d["function"]["name"]: d for d in first["tools"]}
        assert {"mcp__basic__echo", "mcp__basic__fail"} <= set(sent)
        assert sent["mcp__basic__echo"]["function"]["parameters"]["required"] == ["text"]
        assert "mcp__basic__echo" not in system  # native mode: the tools travel in `tools` only
        echo, fail = [m["content"] for m in second["messages"] if m["role"] == "tool"]
        assert echo == "echo: hi"
        assert fail.startswith("ERROR: ") and "cannot do that: no disk" in fail
        assert second["tools"] == first["tools"]  # same tool set: the prefix cache keeps hitting
    else:
        assert "tools" not in first
        assert "**mcp__basic__echo(text: string)**: Return the text unchanged" in system
        assert "**mcp__basic__fail(reason: string)**" in system
        user = second["messages"][-1]
        assert user["role"] == "user"
        assert "[Tool result] mcp__basic__echo succeeded:\necho: hi" in user["content"]
        assert "[Tool result] mcp__basic__fail FAILED:\n" in user["content"]
        assert "cannot do that: no disk" in user["content"]
    assert second["messages"][0]["content"] == system  # unchanged system prompt between requests


def test_approval_allowlist_and_hints(tmp_path):
    asked = []

    def confirm(call, preview, reason, scope):
        asked.append((call.name, preview))
        return Answer(True)

    script = [
        Reply(calls=[Call("mcp__basic__echo", {"text": "a"}), Call("mcp__basic__fail", {"reason": "b"})]),
        Reply(content="ok"),
    ]
    with FakeVLLM(script) as server:
        h = Harness(
            tmp_path, server, {"basic": stdio("basic", allow=["echo"])}, approval="ask", confirm=confirm
        )
        try:
            h.run()
        finally:
            h.close()
        server.assert_done()
    # echo is allowlisted: it ran without a question; fail was asked, with the server's hint shown.
    assert asked == [("mcp__basic__fail", "MCP tool fail from server basic (the server says: destructive)")]
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert results[0] == "echo: a" and "cannot do that: b" in results[1]


def test_headless_without_yes_refuses_tools_that_are_not_allowlisted(tmp_path):
    script = [
        Reply(calls=[Call("mcp__basic__echo", {"text": "a"}), Call("mcp__basic__fail", {"reason": "b"})]),
        Reply(content="ok"),
    ]
    with FakeVLLM(script) as server:
        # The allowlist takes the public name as well as the server's own name.
        h = Harness(tmp_path, server, {"basic": stdio("basic", allow=["mcp__basic__echo"])}, approval="ask")
        try:
            h.run()
        finally:
            h.close()
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert results[0] == "echo: a"
    assert results[1].startswith("ERROR: not run:") and "nobody can approve it" in results[1]


def test_crash_mid_call_and_missing_command_do_not_stop_the_session(tmp_path):
    servers = {
        "flaky": stdio("flaky"),
        "missing": McpServerConfig(command="/nonexistent/mcp-server"),
    }
    script = [
        Reply(calls=[Call("mcp__flaky__crash", {})]),
        Reply(calls=[Call("mcp__flaky__sleep", {"seconds": 0})]),
        Reply(content="Continuing without it."),
    ]
    with FakeVLLM(script) as server:
        h = Harness(tmp_path, server, servers)
        try:
            outcome = h.run()
        finally:
            h.close()
        server.assert_done()
    assert outcome.reason == "done"
    warnings = h.events.notices()
    assert "MCP server missing is not available: command not found: /nonexistent/mcp-server" in warnings
    assert any(w.startswith("MCP server flaky stopped (the server process exited") for w in warnings)
    crashed = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert crashed[0].startswith("ERROR: MCP server flaky stopped while running crash")
    assert "vllm-bot is restarting it" in crashed[0]
    later = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert later[-1] == "slept 0.0"  # the restarted server answered
    assert "mcp__missing" not in str(server.requests[0]["tools"])
    assert server.requests[2]["tools"] == server.requests[0]["tools"]  # the tools stayed meanwhile


def test_slash_mcp_lists_servers_and_tools(tmp_path):
    servers = {"basic": stdio("basic"), "missing": McpServerConfig(command="/nonexistent/mcp-server")}
    with FakeVLLM([]) as server:
        h = Harness(tmp_path, server, servers)
        lines = []
        session = SimpleNamespace(mcp=h.mcp, say=lines.append)
        try:
            h.mcp.manager.wait(60)
            dispatch(session, "/mcp")
            dispatch(session, "/mcp frobnicate")
            dispatch(session, "/mcp restart nope")
        finally:
            h.close()
    assert lines[0].startswith("basic: connected, 2 tools, ~") and f"[stdio: {sys.executable}" in lines[0]
    assert re.fullmatch(r"  mcp__basic__echo  \(~\d+ tokens, read-only\)", lines[1])
    assert re.fullmatch(r"  mcp__basic__fail  \(~\d+ tokens, destructive\)", lines[2])
    assert lines[3] == "  prompts: /mcp__basic__review"
    assert lines[4] == "missing: failed  [stdio: /nonexistent/mcp-server]"
    assert lines[5] == "  error: command not found: /nonexistent/mcp-server"
    assert lines[6] == "Usage: /mcp, /mcp restart NAME, /mcp off NAME [TOOL...], /mcp on NAME [TOOL...]"
    assert lines[7] == "No MCP server named 'nope' (servers: basic, missing)."
    # /mcp also registered the tools and showed the start-up warning.
    assert "mcp__basic__echo" in tool_names(h.executor.definitions)
    assert h.events.notices() == [
        "MCP server missing is not available: command not found: /nonexistent/mcp-server"
    ]


def test_slash_mcp_turns_tools_and_servers_off_and_on(tmp_path):
    with FakeVLLM([]) as server:
        h = Harness(tmp_path, server, {"basic": stdio("basic")})
        lines = []
        session = SimpleNamespace(mcp=h.mcp, say=lines.append)
        try:
            h.mcp.sync(wait=True)
            offered = lambda: [n for n in tool_names(h.executor.definitions) if n.startswith("mcp__")]  # noqa: E731
            assert offered() == ["mcp__basic__echo", "mcp__basic__fail"]
            dispatch(session, "/mcp off basic fail")
            assert offered() == ["mcp__basic__echo"]
            dispatch(session, "/mcp")
            assert "  mcp__basic__fail  (off, destructive)" in lines
            assert any(line.startswith("basic: connected, 1 tool, ~") for line in lines)
            dispatch(session, "/mcp off basic")
            assert offered() == []
            assert "off for this session" in h.mcp.manager.call("mcp__basic__echo", {"text": "x"}).value
            dispatch(session, "/mcp on basic")
            assert offered() == ["mcp__basic__echo"]  # fail stays off: it was turned off by name
            dispatch(session, "/mcp on basic mcp__basic__fail")
            assert offered() == ["mcp__basic__echo", "mcp__basic__fail"]
            dispatch(session, "/mcp off basic nosuch")
        finally:
            h.close()
    assert lines[0] == "Turned fail of MCP server basic off for this session; the model no longer sees them."
    assert lines[-2] == "MCP server basic has no tool named nosuch; /mcp lists them."


def test_config_enabled_and_disabled_tools(tmp_path):
    servers = {
        "only": stdio("basic", enabled_tools=["echo", "nosuch"]),
        "less": stdio("basic", disabled_tools=["mcp__less__fail"]),
    }
    with FakeVLLM([]) as server:
        h = Harness(tmp_path, server, servers)
        try:
            h.mcp.sync(wait=True)
            names = [n for n in tool_names(h.executor.definitions) if n.startswith("mcp__")]
            rows = {s.name: s for s in h.mcp.manager.snapshot()}
        finally:
            h.close()
    assert names == ["mcp__only__echo", "mcp__less__echo"]
    assert rows["only"].hidden == ["fail"] and rows["less"].hidden == ["fail"]
    assert "MCP server only: enabled_tools names 'nosuch', a tool the server does not list" in (
        h.events.notices()
    )


def test_no_servers_configured(tmp_path):
    with FakeVLLM([Reply(content="hi")]) as server:
        h = Harness(tmp_path, server, {})
        assert h.mcp.manager is None
        h.run()
        lines = []
        dispatch(SimpleNamespace(mcp=h.mcp, say=lines.append), "/mcp")
        h.close()
    assert lines == ["No MCP servers configured (mcp.servers in config.json; see docs/mcp.md)."]
    assert not [e for e in h.events if isinstance(e, Notice)]


def text_mode_answer(tmp_path, reply):
    """What the model reads after writing `reply` in text mode with the basic server's tools."""
    script = [Reply(content=reply), Reply(content="Sorry.")]
    with FakeVLLM(script, mode="noparser") as server:
        h = Harness(tmp_path, server, {"basic": stdio("basic")}, function_calling=False)
        try:
            h.run()
        finally:
            h.close()
        server.assert_done()
    return server.requests[1]["messages"][-1]["content"]


def test_text_mode_error_hint_shows_the_expected_shape_once(tmp_path):
    user = text_mode_answer(tmp_path, 'TOOL_CALL: {"name": "mcp__basic__echo", "args": {"txt": "a"}}')
    assert user.count('Expected mcp__basic__echo(text), arguments like {"text": "<string>"}') == 1


def test_text_mode_says_once_that_a_call_could_not_be_used(tmp_path):
    user = text_mode_answer(tmp_path, 'TOOL_CALL: {"nome": "mcp__basic__echo", "args": {"text": "a"}}')
    assert 'could not use this tool call: expected an object with "name" and "args".\nYou wrote:' in user
    assert "could not be used" not in user and user.count("could not use this tool call") == 1
