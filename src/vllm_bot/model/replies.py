"""A finished reply as the turn the loop sees: calls from native `tool_calls`, else extracted from the
text (`TOOL_CALL:` blocks, leaked `<tool_call>` tags); calls cut off by max_tokens are marked so the
loop answers them with an error instead of running them.
"""

from __future__ import annotations

from typing import Any

from ..calls import AssistantTurn
from ..events import CallsDetected, Debug, Emit
from ..parsing import extract_tool_calls, split_reasoning
from .streaming import RawReply

TRUNCATED_CALL = (
    "your reply was cut off by the max_tokens limit while writing this call, so it was not run. "
    "Make smaller calls (for a big file: write a first part, then add the rest with edit)."
)


def to_turn(reply: RawReply, definitions: list[dict[str, Any]], native: bool, emit: Emit) -> AssistantTurn:
    reasoning, content = split_reasoning(reply.content)
    calls = reply.assembler.finish()
    source, formats = "native", ["native"]
    if not calls:
        extraction = extract_tool_calls(content, definitions)
        calls, source, formats = extraction.calls, "text", extraction.formats
        if calls and native:
            content = extraction.content  # history shows the calls as native tool_calls instead
    if calls and reply.finish_reason == "length":
        for call in calls:
            call.metadata["error"] = TRUNCATED_CALL
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


def broken_native_arguments(reply: RawReply) -> bool:
    """Native calls whose streamed arguments are not JSON (not cut off by max_tokens)."""
    if reply.finish_reason == "length" or not reply.assembler.active:
        return False
    return any("not valid JSON" in (c.error or "") for c in reply.assembler.finish())
