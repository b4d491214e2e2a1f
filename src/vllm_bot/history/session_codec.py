"""Lossless JSON form of conversation entries (UserMessage, AssistantTurn with ToolCalls, ToolResults),
and the repair that gives every tool call exactly one result after a crash."""

from __future__ import annotations

from typing import Any

from ..calls import AssistantTurn, ToolCall, ToolResult, Usage
from ..conversation import Entry, ToolResults, UserMessage, answer_calls

INTERRUPTED = "interrupted: the agent stopped before this call finished; check the file state before retrying"
NOT_RUN = "not run: the reply was interrupted before this call could run; send it again if still needed"


def call_to_dict(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments, "metadata": call.metadata}


def call_from_dict(data: dict[str, Any]) -> ToolCall:
    return ToolCall(data["id"], data["name"], data["arguments"], dict(data.get("metadata") or {}))


def result_to_dict(result: ToolResult) -> dict[str, Any]:
    return {
        "tool_call_id": result.tool_call_id,
        "name": result.name,
        "kind": result.kind,
        "value": result.value,
    }


def result_from_dict(data: dict[str, Any]) -> ToolResult:
    return ToolResult(data["tool_call_id"], data["name"], data["kind"], data["value"])


def usage_to_dict(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def usage_from_dict(data: dict[str, Any] | None) -> Usage | None:
    return None if data is None else Usage(**data)


def entry_to_dict(entry: Entry) -> dict[str, Any]:
    if isinstance(entry, UserMessage):
        return {"entry": "user", "content": entry.content, "kind": entry.kind}
    if isinstance(entry, AssistantTurn):
        return {
            "entry": "assistant",
            "content": entry.content,
            "tool_calls": [call_to_dict(c) for c in entry.tool_calls],
            "reasoning": entry.reasoning,
            "finish_reason": entry.finish_reason,
            "usage": usage_to_dict(entry.usage),
            "via": entry.via,
            "raw_content": entry.raw_content,
            "partial": entry.partial,
        }
    return {"entry": "results", "via": entry.via, "results": [result_to_dict(r) for r in entry.results]}


def entry_from_dict(data: dict[str, Any]) -> Entry:
    kind = data.get("entry")
    if kind == "user":
        return UserMessage(data["content"], data.get("kind", "task"))
    if kind == "assistant":
        return AssistantTurn(
            content=data["content"],
            tool_calls=[call_from_dict(c) for c in data.get("tool_calls") or []],
            reasoning=data.get("reasoning", ""),
            finish_reason=data.get("finish_reason"),
            usage=usage_from_dict(data.get("usage")),
            via=data.get("via", "native"),
            raw_content=data.get("raw_content"),
            partial=bool(data.get("partial", False)),
        )
    if kind == "results":
        return ToolResults([result_from_dict(r) for r in data["results"]], data.get("via", "native"))
    raise ValueError(f"unknown conversation entry {kind!r}")


def repair(entries: list[Entry], pending: list[ToolResult] | None = None) -> tuple[list[Entry], int]:
    """Give every tool call exactly one result, in call order. `pending` holds results recorded for
    the last turn before the crash. Returns (entries, number of calls given an "interrupted" result)."""
    out: list[Entry] = []
    added = 0
    consumed = -1  # index of a results entry already merged into `out`
    for i, entry in enumerate(entries):
        if i == consumed:
            continue
        out.append(entry)
        if not isinstance(entry, AssistantTurn) or not entry.tool_calls:
            continue
        following = entries[i + 1] if i + 1 < len(entries) else None
        if isinstance(following, ToolResults):
            have, via, consumed = list(following.results), following.via, i + 1
        else:
            have, via = (list(pending or []) if following is None else []), entry.via
        fixed = answer_calls(entry.tool_calls, have, NOT_RUN if entry.partial else INTERRUPTED)
        kept = {id(r) for r in have}
        added += sum(id(r) not in kept for r in fixed)
        out.append(ToolResults(fixed, via))
    return out, added
