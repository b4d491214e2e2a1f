"""What a batch counts from an agent's stream-json events: calls, malformed and unparsed ones,
refusals, the tool-call mode used."""

import json

from vllm_bot.batch.tally import Tally


def line(event):
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def call(call_id, name="read", metadata=None):
    return {"id": call_id, "name": name, "arguments": {}, "metadata": metadata or {}}


def finished(call_id, kind="text", value="ok", metadata=None, problem=None):
    return {
        "type": "tool_call_finished",
        "call": call(call_id, metadata=metadata),
        "result": {"kind": kind, "value": value},
        "problem": problem,
    }


def test_counts_from_a_stream():
    events = [
        {"type": "session_started", "model": "m"},
        {"type": "iteration_started", "iteration": 1, "max_iterations": 9},
        {"type": "request_started", "mode": "native", "messages": 2, "attempt": 1},
        {"type": "text_delta", "text": "not even decoded"},
        {"type": "mode_switched", "function_calling": False, "reason": "400", "hint": ""},
        {"type": "request_started", "mode": "text", "messages": 2, "attempt": 1},
        {"type": "request_started", "mode": "summary", "messages": 9, "attempt": 1},
        {"type": "calls_detected", "calls": [call("1"), call("2"), call("3"), call("4")], "source": "text"},
        {"type": "usage_reported", "usage": {"prompt_tokens": 100, "completion_tokens": 7}},
        {"type": "tool_call_started", "call": call("1")},
        finished("1"),
        {"type": "tool_call_started", "call": call("2")},
        finished("2", "error", "Exit code 1"),
        finished("3", "error", "unknown tool 'patch'. Available tools: read", problem="unknown_tool"),
        finished("4", "error", "could not use this tool call: bad JSON", {"error": "bad JSON"}, "unreadable"),
        finished("5", "error", "refused by policy: it removes .git. Do not retry this call."),
        {"type": "iteration_started", "iteration": 2, "max_iterations": 9},
        {"type": "result", "exit_code": 0},
    ]
    tally = Tally()
    for event in events:
        tally.feed(line(event))
    tally.feed(b"not json at all\n")
    assert (tally.iteration, tally.tokens, tally.completion_tokens) == (2, 107, 7)
    assert (tally.mode, tally.fell_back, tally.calls_from_text) == ("native+text", True, 4)
    assert (tally.calls, tally.tool_errors, tally.malformed, tally.unparsed, tally.refused) == (5, 1, 2, 1, 1)
    assert tally.result == {"type": "result", "exit_code": 0}
