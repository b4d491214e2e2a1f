"""Conversion between the intermediate format and the OpenAI/vLLM chat wire format (the edge).

Native turns go back as `tool_calls` + `tool` messages; text-mode turns go back as the assistant's
own text followed by one user message carrying the results. Arguments in history are always valid
JSON (vLLM re-parses them for the chat template), and reasoning is never sent back.
"""

from __future__ import annotations

import json
from typing import Any

from ..calls import AssistantTurn, ToolResult
from ..conversation import Conversation, Entry, ToolResults, UserMessage

ERROR_PREFIX = "ERROR: "


def to_messages(conversation: Conversation, system_prompt: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    for entry in conversation.entries:
        messages.extend(entry_messages(entry))
    return _merge_adjacent_user(messages)


def entry_messages(entry: Entry) -> list[dict[str, Any]]:
    if isinstance(entry, UserMessage):
        return [{"role": "user", "content": entry.content}]
    if isinstance(entry, AssistantTurn):
        return [assistant_message(entry)]
    return result_messages(entry)


def assistant_message(turn: AssistantTurn) -> dict[str, Any]:
    if turn.via == "text" or not turn.tool_calls:
        return {"role": "assistant", "content": turn.content}
    return {
        "role": "assistant",
        "content": turn.content,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name or "unknown",
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in turn.tool_calls
        ],
    }


def result_text(result: ToolResult) -> str:
    text = result.as_text()
    return ERROR_PREFIX + text if result.is_error else text


def result_messages(entry: ToolResults) -> list[dict[str, Any]]:
    if entry.via == "native":
        return [
            {"role": "tool", "tool_call_id": r.tool_call_id, "content": result_text(r)} for r in entry.results
        ]
    parts = []
    for r in entry.results:
        status = "FAILED" if r.is_error else "succeeded"
        parts.append(f"[Tool result] {r.name} {status}:\n{r.as_text()}")
    return [{"role": "user", "content": "\n\n".join(parts)}]


def _merge_adjacent_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat templates expect alternating roles; join user messages that follow each other."""
    merged: list[dict[str, Any]] = []
    for m in messages:
        if merged and m["role"] == "user" and merged[-1]["role"] == "user":
            merged[-1] = {"role": "user", "content": merged[-1]["content"] + "\n\n" + m["content"]}
        else:
            merged.append(m)
    return merged
