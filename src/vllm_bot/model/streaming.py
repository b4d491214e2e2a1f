"""Consume one streamed chat completion: content, reasoning, tool-call deltas, usage, finish reason.

Works on the SDK's chunk and completion objects (and on plain dicts of their shape). Reasoning
arrives as `reasoning` (vLLM >= 0.12) or `reasoning_content` (<= 0.15). Reasoning written in content
(a server without a reasoning parser: `<think>`, `<seed:think>`, `[THINK]`, …) is told apart by the
parser's own scan (`StreamFilter`), so what streams as the answer is what `split_reasoning` keeps
as the answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..calls import Usage
from ..errors import ModelServerError
from ..events import Emit, FirstToken, ReasoningDelta, TextDelta
from ..parsing import StreamFilter
from .deltas import ToolCallAssembler, _get


@dataclass
class RawReply:
    content: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    assembler: ToolCallAssembler = field(default_factory=ToolCallAssembler)
    first_token_at: float | None = None
    chunks: int = 0


def reasoning_of(delta: Any) -> str | None:
    for key in ("reasoning", "reasoning_content"):
        value = _get(delta, key)
        if value is None:
            extra = getattr(delta, "model_extra", None) or {}
            value = extra.get(key)
        if value:
            return str(value)
    return None


def usage_of(raw: Any) -> Usage | None:
    if raw is None:
        return None
    details = _get(raw, "prompt_tokens_details")
    cached = _get(details, "cached_tokens")
    return Usage(
        prompt_tokens=int(_get(raw, "prompt_tokens") or 0),
        completion_tokens=int(_get(raw, "completion_tokens") or 0),
        cached_tokens=int(cached) if cached is not None else None,
    )


def consume(
    chunks: Iterable[Any], emit: Emit, on_chunk: Any = None, definitions: list[dict[str, Any]] | None = None
) -> RawReply:
    """Read the whole stream, emitting display events; raise ModelServerError on an in-stream error."""
    reply = RawReply()
    visible = StreamFilter(definitions)
    parts: list[str] = []
    for chunk in chunks:
        reply.chunks += 1
        if on_chunk is not None:
            on_chunk(chunk)
        _check_legacy_error(chunk)
        usage = usage_of(_get(chunk, "usage"))
        if usage is not None:
            reply.usage = usage
        for choice in _get(chunk, "choices") or []:
            if (_get(choice, "index") or 0) != 0:
                continue
            delta = _get(choice, "delta")
            reasoning = reasoning_of(delta)
            if reasoning:
                _first_token(reply, emit)
                reply.reasoning += reasoning
                emit(ReasoningDelta(reasoning))
            content = _get(delta, "content")
            if content:
                _first_token(reply, emit)
                parts.append(content)
                _route(visible.feed_pieces(content), emit)
            tool_calls = _get(delta, "tool_calls")
            if tool_calls:
                _first_token(reply, emit)
                reply.assembler.feed(tool_calls)
            finish = _get(choice, "finish_reason")
            if finish:
                reply.finish_reason = finish
    _route(visible.flush_pieces(), emit)
    reply.content = "".join(parts)
    return reply


def _route(pieces: Iterable[tuple[str, str]], emit: Emit) -> None:
    for kind, text in pieces:
        emit(ReasoningDelta(text) if kind == "reasoning" else TextDelta(text))


def _first_token(reply: RawReply, emit: Emit) -> None:
    if reply.first_token_at is None:
        reply.first_token_at = time.monotonic()
        emit(FirstToken())


def _check_legacy_error(chunk: Any) -> None:
    """vLLM <= 0.10.0 sends `{"object": "error", ...}` inside a 200 stream; the SDK yields it as a chunk."""
    if _get(chunk, "object") == "error" or (
        isinstance(getattr(chunk, "model_extra", None), dict) and chunk.model_extra.get("object") == "error"
    ):
        message = _get(chunk, "message") or (getattr(chunk, "model_extra", None) or {}).get("message")
        raise ModelServerError(f"The server reported an error during the reply: {message}")


def reply_from_completion(completion: Any) -> RawReply:
    """A non-streamed chat.completion as the same RawReply a stream produces."""
    reply = RawReply(usage=usage_of(_get(completion, "usage")))
    choices = _get(completion, "choices") or []
    if not choices:
        return reply
    choice = choices[0]
    message = _get(choice, "message")
    reply.content = _get(message, "content") or ""
    reply.reasoning = reasoning_of(message) or ""
    reply.finish_reason = _get(choice, "finish_reason") or "stop"
    entries = []
    for index, call in enumerate(_get(message, "tool_calls") or []):
        function = _get(call, "function")
        entries.append(
            {
                "index": index,
                "id": _get(call, "id"),
                "function": {"name": _get(function, "name"), "arguments": _get(function, "arguments")},
            }
        )
    reply.assembler.feed(entries)
    return reply
