"""Tool listings as servers really send them, from a raw JSON-RPC server (tests/mcp_servers/jsonrpc.py):
a malformed tool costs only itself, a name listed twice keeps its first tool, what is skipped is said
once a session, and the resource tools come only with resources."""

import pytest
from mcp_support import jsonrpc, managers

from vllm_bot.mcp.report import server_row, status_lines

OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}}


@pytest.fixture
def start(tmp_path):
    with managers(tmp_path) as make:
        yield lambda **servers: make(servers)


def test_one_malformed_tool_costs_only_itself(start, tmp_path):
    tools = [
        {"name": "good", "description": "Fine.", "inputSchema": OBJECT},
        {"name": "stringy", "inputSchema": {"type": "string"}},
        {"name": "noschema", "description": "No inputSchema at all."},
        {"description": "No name.", "inputSchema": OBJECT},
        {"name": "numbered", "description": 3, "inputSchema": OBJECT},  # only the SDK objects to this
        {"name": "later", "inputSchema": OBJECT},
    ]
    m = start(j=jsonrpc(tmp_path, tools))
    [state] = m.snapshot()
    assert state.status == "connected" and state.error is None
    assert [t.name for t in state.tools] == ["good", "later"]
    assert state.skipped == [
        'stringy: its inputSchema has type "string", not "object"',
        "noschema: it has no inputSchema (MCP requires one, even when empty)",
        "a tool without a name (description: No name.)",
        "numbered: the MCP SDK cannot read it (description: Input should be a valid string)",
    ]
    notices = [message for _, message in m.take_notices()]
    assert notices == [f"MCP server j: skipped {reason}" for reason in state.skipped]  # one line each
    assert m.call("mcp__j__good", {"a": "x"}).value == 'good (listed at 0) called with {"a": "x"}'
    assert m.call("mcp__j__later", {}).value == "later (listed at 5) called with {}"


def test_a_listing_the_sdk_cannot_read_at_all_is_one_line(start, tmp_path):
    m = start(j=jsonrpc(tmp_path, "not a list"))  # type: ignore[arg-type]
    [state] = m.snapshot()
    assert state.status == "failed"
    assert state.error == "its answer is not valid MCP (tools: Input should be a valid list)"


def test_a_name_listed_twice_keeps_its_first_tool(start, tmp_path):
    first = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    second = {"type": "object", "properties": {"y": {"type": "string"}}}
    tools = [
        {"name": "twin", "description": "The first.", "inputSchema": first},
        {"name": "other", "inputSchema": OBJECT},
        {"name": "twin", "description": "The second.", "inputSchema": second},
    ]
    m = start(j=jsonrpc(tmp_path, tools))
    [state] = m.snapshot()
    assert [t.public for t in m.tools()] == ["mcp__j__twin", "mcp__j__other"]
    twin = m.find("mcp__j__twin")
    assert twin is not None and twin.definition["function"]["description"] == "The first."
    assert twin.definition["function"]["parameters"]["properties"] == {"x": {"type": "integer"}}
    twice = "twin: a second tool with this name (the server lists it twice; kept the first)"
    assert state.skipped == [twice]
    assert m.take_notices() == [("warning", f"MCP server j: skipped {twice}")]
    # /mcp and `mcp list` show the tool once and the second listing as skipped.
    lines = status_lines([server_row(state)])
    assert [line for line in lines if "mcp__j__twin" in line] == [lines[1]]
    assert f"  skipped {twice}" in lines
    assert m.call("mcp__j__twin", {"x": 1}).value == 'twin (listed at 0) called with {"x": 1}'


def test_what_is_skipped_is_said_once_a_session_not_after_every_restart(start, tmp_path):
    tools = [{"name": "good", "inputSchema": OBJECT}, {"name": "bad", "inputSchema": {"type": "array"}}]
    server = jsonrpc(tmp_path, tools)
    server.enabled_tools = ["good", "nosuch"]
    m = start(j=server)
    assert [message for _, message in m.take_notices()] == [
        'MCP server j: skipped bad: its inputSchema has type "array", not "object"',
        "MCP server j: enabled_tools names 'nosuch', a tool the server does not list",
    ]
    for _ in range(2):
        assert m.restart("j") and m.wait(60)
        assert m.snapshot()[0].status == "connected"
    assert m.take_notices() == []
    [row] = [server_row(s) for s in m.snapshot()]
    assert row["skipped"] == ['bad: its inputSchema has type "array", not "object"']
    assert row["warnings"] == ["enabled_tools names 'nosuch', a tool the server does not list"]


def test_resource_tools_only_for_servers_that_have_resources(start, tmp_path):
    declares = {"tools": {}, "resources": {}}
    note = {"uri": "note://one", "name": "one", "mimeType": "text/plain"}
    m = start(
        empty=jsonrpc(tmp_path, [], capabilities=declares),
        notes=jsonrpc(tmp_path, [], capabilities=declares, resources=[note]),
        silent=jsonrpc(tmp_path, []),
    )
    assert [s.status for s in m.snapshot()] == ["connected"] * 3
    assert m.resource_servers() == ["notes"]
    rows = {s.name: server_row(s) for s in m.snapshot()}
    assert [name for name, row in rows.items() if row["resources"]] == ["notes"]
