"""What the fake server answers for one scripted reply, the way a vLLM 0.32 server would.

A scripted `Reply` is what the model means to write (reasoning, text, calls). The server then decides
what the client sees (shared/reference/vllm-protocol.md, section 0):
- calls go out natively only with a tool parser, `tools` and a `tool_choice` other than "none";
  otherwise the model writes them into the text (`render_text_calls`);
- reasoning is split off only by a reasoning parser while thinking is on; without one, or with
  `chat_template_kwargs.enable_thinking: false`, it stays in the text as `<think>…</think>`;
- `max_tokens` (clamped to what the window leaves) cuts the output: a cut reply ends with
  `finish_reason: "length"`; reasoning cut before its end leaves `content` null; a native call cut
  mid-way has streamed its partial deltas already, while non-streamed `tool_calls` is null and the
  raw `<tool_call>` markup is in `content`. `required` cut inside the reasoning ends "tool_calls"
  with no calls at all, and so does one that ends at once;
- a named tool choice ends "stop", a native call otherwise "tool_calls"; a non-streamed reply ended
  by the tokenizer's own end token has `stop_reason` null, one ended by another stop token that the
  model's generation_config lists (`Reply.stop_token_id`) carries that token's id, an integer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .script import (
    TOKEN_RE,
    Call,
    ChunkWriter,
    Reply,
    count_tokens,
    fold_chunks,
    pieces,
    render_text_calls,
    tool_call_chunks,
)

STREAM_ONLY_QUIRKS = {"drop_fragment"}  # streaming bugs: the non-streamed reply stays intact


@dataclass
class Generated:
    """The reply as the server reports it, after the parsers and the token budget."""

    reasoning: str = ""
    content: str = ""
    calls: list[Call] = field(default_factory=list)  # native calls; after a cut the last may be partial
    raw_calls: str = ""  # the native calls' markup as the model wrote it (content of a cut, unstreamed reply)
    finish: str = "stop"
    cut: bool = False  # the token budget ran out
    stop_token_id: int | None = None  # a non-streamed stop_reason (Reply.stop_token_id)
    completion_tokens: int = 0
    reasoning_tokens: int = 0


class _Budget:
    def __init__(self, tokens: int | None) -> None:
        self.left = tokens
        self.cut = False
        self.used = 0

    def take(self, text: str) -> str:
        """The part of `text` the budget allows (all of it while there is room)."""
        if self.cut:
            return ""
        n = count_tokens(text)
        if self.left is not None and n > self.left:
            match = next(m for i, m in enumerate(TOKEN_RE.finditer(text)) if i == self.left)
            self.cut, self.used, self.left = True, self.used + self.left, 0
            return text[: match.start()]
        self.used += n
        self.left = None if self.left is None else self.left - n
        return text


def hermes_markup(call: Call) -> tuple[str, str]:
    """(head, tail) of a hermes call around its arguments: `<tool_call>\\n{"name": N, "arguments": ` …"""
    return f'<tool_call>\n{{"name": {json.dumps(call.name)}, "arguments": ', "}\n</tool_call>"


def generate(
    reply: Reply,
    body: dict[str, Any],
    *,
    native: bool,
    text_format: str,
    separate_reasoning: bool,
    budget: int | None,
) -> Generated:
    """Apply the server's parsers and `budget` (completion tokens; None: no limit) to `reply`."""
    content, reasoning = reply.content, reply.reasoning
    if reply.calls and not native:
        content = (content + "\n" if content else "") + render_text_calls(reply.calls, text_format)
    if reasoning and not separate_reasoning:
        content, reasoning = f"<think>\n{reasoning}\n</think>\n\n{content}", ""
    tokens = _Budget(budget)
    out = Generated(reasoning=tokens.take(reasoning), stop_token_id=reply.stop_token_id)
    out.reasoning_tokens = tokens.used if separate_reasoning else 0
    cut_in_reasoning = tokens.cut
    out.content = tokens.take(content)
    if native:
        _native_calls(out, reply.calls, tokens)
    out.cut = tokens.cut or reply.finish_reason == "length"
    out.completion_tokens = tokens.used
    choice = body.get("tool_choice", "auto")
    if out.cut:
        out.finish = "tool_calls" if cut_in_reasoning and native and choice == "required" else "length"
    elif reply.finish_reason:
        out.finish = reply.finish_reason
    elif out.calls:
        out.finish = "stop" if isinstance(choice, dict) else "tool_calls"
    elif native and choice == "required":
        out.finish = "tool_calls"  # vLLM ends a `required` reply "tool_calls" even when it made no call
    return out


def _native_calls(out: Generated, calls: list[Call], tokens: _Budget) -> None:
    for call in calls:
        head, tail = hermes_markup(call)
        wrote = tokens.take(head + call.arguments_json() + tail)
        out.raw_calls += ("\n" if out.raw_calls else "") + wrote
        if len(wrote) < len(head):
            return  # the parser had not seen the name yet: nothing of this call was sent
        if not tokens.cut:
            out.calls.append(call)
            continue
        out.calls.append(Call(call.name, wrote[len(head) :][: len(call.arguments_json())]))
        return


def stream_chunks(out: Generated, reply: Reply, writer: ChunkWriter, streamed: bool) -> list[dict[str, Any]]:
    """The chunks of the reply (before any usage chunk)."""
    quirks = reply.quirks if streamed else reply.quirks - STREAM_ONLY_QUIRKS
    chunks = [writer.chunk({"role": "assistant", "content": ""})]
    chunks += [writer.reasoning(p) for p in pieces(out.reasoning, reply.chunk_size)] if out.reasoning else []
    chunks += [writer.chunk({"content": p}) for p in pieces(out.content, reply.chunk_size)]
    if out.calls:
        chunks += list(tool_call_chunks(writer, out.calls, quirks, reply.chunk_size))
    final_delta: dict[str, Any] = {}
    if "dup_tail" in quirks and out.calls and not out.cut:
        last = len(out.calls) - 1
        final_delta = {
            "tool_calls": [{"index": last, "function": {"arguments": out.calls[-1].arguments_json()}}]
        }
    chunks.append(writer.chunk(final_delta, out.finish, stop_reason=None))
    return chunks


def completion(chunks: list[dict[str, Any]], out: Generated) -> dict[str, Any]:
    """The non-streamed chat.completion for the same reply."""
    whole = fold_chunks(chunks)
    choice = whole["choices"][0]
    message = choice["message"]
    if out.cut and out.raw_calls:  # the parser never saw a whole call: the raw text is the answer
        message["content"] = (out.content + ("\n" if out.content else "") + out.raw_calls) or None
        message["tool_calls"] = None
    elif not message["tool_calls"]:
        del message["tool_calls"]  # vLLM >= 0.24 drops the empty list
    choice["stop_reason"] = None if out.finish == "length" else out.stop_token_id
    return whole


def usage_details(usage_chunk: dict[str, Any], out: Generated) -> dict[str, Any]:
    """`completion_tokens_details.reasoning_tokens` when the reasoning parser split some off."""
    if out.reasoning_tokens:
        usage_chunk["usage"]["completion_tokens_details"] = {"reasoning_tokens": out.reasoning_tokens}
    return usage_chunk
