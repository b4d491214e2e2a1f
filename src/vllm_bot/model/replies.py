"""A finished reply as the turn the loop sees: calls from native `tool_calls`, else extracted from the
text (`TOOL_CALL:` blocks, leaked `<tool_call>` tags). Calls that must not run are marked so the loop
answers them with an error instead: calls cut off by max_tokens, and native calls the server's parser
took from inside reasoning the model never closed (a `<think>` in the text before them and no
`</think>`: the model was still thinking, as the text parser also holds).
"""

from __future__ import annotations

from typing import Any

from ..calls import AssistantTurn, CallProblem, with_problem
from ..events import CallsDetected, Debug, Emit
from ..parsing import extract_tool_calls, split_reasoning
from ..prompts import message
from .streaming import RawReply

_PROBE = "\u2063end"  # a word no reply contains, to see whether the text ends inside reasoning


def to_turn(reply: RawReply, definitions: list[dict[str, Any]], native: bool, emit: Emit) -> AssistantTurn:
    reasoning, content = split_reasoning(reply.content)
    calls = reply.assembler.finish()
    source, formats = "native", ["native"]
    if calls and ends_in_reasoning(reply.content):
        problem = CallProblem(message("call_in_reasoning"), "in_reasoning")
        calls = [with_problem(call, problem) for call in calls]
    if not calls:
        extraction = extract_tool_calls(content, definitions)
        calls, source, formats = extraction.calls, "text", extraction.formats
        if calls and native:
            content = extraction.content  # history shows the calls as native tool_calls instead
    if calls and reply.finish_reason == "length":
        problem = CallProblem(message("truncated_call"), "truncated")
        calls = [with_problem(call, problem) for call in calls]
    turn = AssistantTurn(
        content=content,
        tool_calls=calls,
        reasoning="\n".join(r for r in (reply.reasoning, reasoning) if r),
        finish_reason=reply.finish_reason,
        usage=reply.usage,
        via="native" if native else "text",
        raw_content=reply.content if reply.content != content else None,
    )
    if calls:
        emit(CallsDetected(calls, source, formats))
    else:
        emit(Debug(f"No tool calls in the reply (finish_reason={reply.finish_reason})"))
    return turn


def ends_in_reasoning(text: str) -> bool:
    """Does `text` end inside a reasoning block the model opened and did not close?"""
    return bool(text) and _PROBE not in split_reasoning(text + _PROBE)[1]


def broken_native_arguments(reply: RawReply) -> bool:
    """Native calls whose streamed arguments are not JSON (not cut off by max_tokens)."""
    if reply.finish_reason == "length" or not reply.assembler.active:
        return False
    return reply.assembler.not_json
