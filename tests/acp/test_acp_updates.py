"""The pure parts of the ACP front end: events to session updates (the task list as a plan, a call's
life from asked-about to failed), and which lines are JSON-RPC messages at all."""

import pytest

from vllm_bot.acp.stdio import problem
from vllm_bot.acp.updates import Updates
from vllm_bot.calls import ToolCall, Usage, text_result
from vllm_bot.events import (
    PlanUpdated,
    SubagentEvent,
    TaskFinished,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)


def test_the_task_list_is_an_acp_plan_with_every_step_each_time():
    steps = [
        {"text": "Read the failing test", "status": "completed"},
        {"text": "Fix add()", "status": "in_progress"},
        {"text": "Run the tests", "status": "pending"},
        {"text": "A status we do not know", "status": "blocked"},
    ]
    (plan,) = Updates("/w", lambda call: None)(PlanUpdated(steps))
    dumped = plan.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["sessionUpdate"] == "plan"
    assert [(e["content"], e["status"]) for e in dumped["entries"]] == [
        ("Read the failing test", "completed"),
        ("Fix add()", "in_progress"),
        ("Run the tests", "pending"),
        ("A status we do not know", "pending"),
    ]


def test_a_call_asked_about_then_finished_or_left_open():
    updates = Updates("/w", lambda call: None)
    read, run = ToolCall("c1", "read", {"path": "src/a.py"}), ToolCall("c2", "exec", {"command": "ls"})
    announced = updates.announce(read)
    assert (announced.status, announced.kind, announced.locations[0].path) == (
        "pending",
        "read",
        "/w/src/a.py",
    )
    (done,) = updates(ToolCallFinished(read, text_result(read, "1\tx = 1"), 0.1))
    assert (done.session_update, done.status, done.raw_output) == (
        "tool_call_update",
        "completed",
        "1\tx = 1",
    )
    updates.announce(run)
    (closed,) = updates(TaskFinished("interrupted", "", 3, 1))
    assert (closed.tool_call_id, closed.status) == ("c2", "failed")
    assert updates(TaskFinished("done", "", 0, 1)) == []


def test_a_sub_agents_calls_are_lines_of_its_delegate_call_then_its_answer():
    """Issue 37 in the editor: what a sub-agent does shows under the parent's delegate call."""
    updates = Updates("/w", lambda call: None)
    delegate = ToolCall("d1", "delegate", {"task": "Where is add() defined?"})
    updates(ToolCallStarted(delegate))
    (first,) = updates(SubagentEvent("d1", ToolCallStarted(ToolCall("s1", "read", {"path": "src/a.py"}))))
    (second,) = updates(SubagentEvent("d1", ToolCallStarted(ToolCall("s2", "exec", {"command": "ls"}))))
    assert (second.session_update, second.tool_call_id) == ("tool_call_update", "d1")
    [line] = first.content[0].content.text.splitlines()
    assert line.startswith("→ ") and "src/a.py" in line
    lines = second.content[0].content.text.splitlines()
    assert lines[0] == line and len(lines) == 2 and "ls" in lines[1]
    (done,) = updates(ToolCallFinished(delegate, text_result(delegate, "In src/a.py, line 3."), 2.0))
    assert done.status == "completed" and done.content[0].content.text == "In src/a.py, line 3."
    # A sub-agent's event for a call the editor was never told of is dropped, not sent.
    assert updates(SubagentEvent("d9", ToolCallStarted(ToolCall("s3", "read", {"path": "b"})))) == []


def test_usage_is_the_context_used_of_the_window():
    usage = Usage(prompt_tokens=1200, completion_tokens=300)
    (update,) = Updates("/w", lambda call: None)(UsageReported(usage, usage, 1.0, 32768))
    assert (update.used, update.size) == (1500, 32768)
    assert Updates("/w", lambda call: None)(UsageReported(usage, usage, 1.0, None)) == []


@pytest.mark.parametrize(
    "message, why",
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, None),
        ({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, None),
        ({"jsonrpc": "2.0", "id": 0, "result": {}}, None),
        ({"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}}, None),
        ([{"jsonrpc": "2.0"}], "one JSON object"),
        ("initialize", "one JSON object"),
        ({"id": 1, "method": "initialize"}, '"jsonrpc" member'),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, '"id" member'),
        ({"jsonrpc": "2.0", "id": 1, "method": 3}, '"method" member'),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "text"}, '"params" member'),
        ({"jsonrpc": "2.0", "id": 1}, "needs a"),
    ],
)
def test_which_lines_are_json_rpc_messages(message, why):
    found = problem(message)
    assert found is None if why is None else why in found
