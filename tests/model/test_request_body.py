"""The chat body's JSON bytes (model/request.py): the same document as the body, whatever the
encoder has seen before, so reusing the encoding of earlier messages never sends a stale one."""

from __future__ import annotations

import json

from vllm_bot.model.request import BodyEncoder, request_body


def test_the_bytes_are_the_body_request_after_request() -> None:
    encoder = BodyEncoder()
    system = {"role": "system", "content": 'You are a coding agent. «ünïcode» \u2028 and "quotes"'}
    messages = [system, {"role": "user", "content": "fix app.py"}]
    first = request_body({"model": "m", "messages": messages, "stream": True, "extra_body": {"top_k": 20}})
    assert json.loads(encoder.encode(first)) == first
    turn = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}
    second = {**first, "messages": [*messages, turn, {"role": "tool", "tool_call_id": "c1", "content": "x"}]}
    assert json.loads(encoder.encode(second)) == second
    changed = {
        **second,
        "messages": [{"role": "system", "content": "another prompt"}, *second["messages"][1:]],
    }
    assert json.loads(encoder.encode(changed)) == changed  # a new dict is encoded anew
    assert json.loads(encoder.encode({"messages": []})) == {"messages": []}
    assert json.loads(BodyEncoder().encode({"model": "m"})) == {"model": "m"}
