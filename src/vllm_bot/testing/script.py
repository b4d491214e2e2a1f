"""Scripted replies for the fake vLLM server, rendered as vLLM's SSE chunk shapes.

Shapes follow the protocol reference (section 2): a first chunk with role and empty content, content /
reasoning deltas, tool-call deltas (id, type and name in the first delta for an index with no
`arguments` key, then argument fragments), a final chunk with `finish_reason` and `stop_reason`, a
usage chunk when asked for, then `[DONE]`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """The fake tokenizer rule: one token per word or punctuation character."""
    return len(TOKEN_RE.findall(text))


class PrefixCache:
    """vLLM's automatic prefix caching, roughly: a prompt's leading 16-token blocks are cached when an
    earlier request (any conversation) computed the same block after the same prefix: vLLM hashes each
    block together with everything before it. The least recently used blocks go past `capacity`."""

    BLOCK = 16

    def __init__(self, capacity: int = 100_000) -> None:
        self.capacity = capacity
        self._blocks: OrderedDict[int, None] = OrderedDict()

    def hit(self, body: dict[str, Any]) -> int:
        """Cached tokens for this request's prompt; its blocks are cached for the next ones."""
        # Tools first: chat templates render them into the system prompt, ahead of the conversation.
        tokens = TOKEN_RE.findall(
            json.dumps(body.get("tools") or []) + json.dumps(body.get("messages") or [])
        )
        chain, cached, missed = 0, 0, False
        for start in range(0, len(tokens) - self.BLOCK + 1, self.BLOCK):
            chain = hash((chain, *tokens[start : start + self.BLOCK]))
            if not missed and chain in self._blocks:
                cached += self.BLOCK
                self._blocks.move_to_end(chain)
                continue
            missed = True
            self._blocks[chain] = None
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)
        return cached


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)  # a str is sent verbatim

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted model reply (or an HTTP error instead of one)."""

    content: str = ""
    calls: list[Call] = field(default_factory=list)
    reasoning: str = ""
    finish_reason: str | None = None  # default: "tool_calls" for native calls, else "stop"
    text_format: str | None = None  # how calls are written when they go into content
    quirks: set[str] = field(default_factory=set)  # see _tool_call_chunks
    chunk_size: int = 12
    expect: Callable[[dict[str, Any]], None] | None = None  # assertion on the request body
    status: int | None = None  # answer with this HTTP error instead
    error: dict[str, Any] | None = None  # body for `status`
    stream_error: dict[str, Any] | None = None  # error object sent inside the 200 stream
    headers: dict[str, str] = field(default_factory=dict)
    cut_at_byte: int | None = None  # close the connection after this many body bytes
    stall_after_bytes: int | None = None  # stop sending (but keep the connection) after N bytes
    latency: float = 0.0  # seconds between deltas (the demo looks alive)
    # A stop token other than the tokenizer's own end token (Qwen's <|endoftext|>, 151643, which its
    # generation_config lists too): a non-streamed reply ended by it reports the id as `stop_reason`.
    stop_token_id: int | None = None


def render_text_calls(calls: list[Call], fmt: str) -> str:
    """Write calls the way a model does when they end up in `content`."""
    blocks = []
    for c in calls:
        args = c.arguments if isinstance(c.arguments, dict) else json.loads(c.arguments)
        if fmt == "tool_call":
            blocks.append("TOOL_CALL: " + json.dumps({"name": c.name, "args": args}, ensure_ascii=False))
        elif fmt == "hermes":
            body = json.dumps({"name": c.name, "arguments": args}, ensure_ascii=False)
            blocks.append(f"<tool_call>\n{body}\n</tool_call>")
        elif fmt == "qwen3_xml":
            params = "".join(
                f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                for k, v in args.items()
            )
            blocks.append(f"<tool_call>\n<function={c.name}>\n{params}</function>\n</tool_call>")
        elif fmt == "mistral":  # pre-v11 tokenizers; the server keeps [TOOL_CALLS] without a parser
            body = json.dumps([{"name": c.name, "arguments": args}], ensure_ascii=False)
            blocks.append(f"[TOOL_CALLS]{body}")
        else:
            raise ValueError(f"unknown text format {fmt!r}")
    return "\n".join(blocks)


class ChunkWriter:
    """Builds the chunk dicts of one streamed completion."""

    def __init__(self, model: str, reasoning_field: str = "reasoning") -> None:
        self.id = "chatcmpl-" + uuid.uuid4().hex
        self.model = model
        self.reasoning_field = reasoning_field

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        choice.update(extra)
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1730000000,
            "model": self.model,
            "choices": [choice],
        }

    def reasoning(self, text: str) -> dict[str, Any]:
        if self.reasoning_field == "both":
            return self.chunk({"reasoning": text, "reasoning_content": text})
        return self.chunk({self.reasoning_field: text})

    def usage(self, prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "total_tokens": prompt + completion,
            "completion_tokens": completion,
        }
        if cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1730000000,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }


def pieces(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), max(1, size)):
        yield text[i : i + size]


def tool_call_chunks(
    w: ChunkWriter, calls: list[Call], quirks: set[str], size: int
) -> Iterator[dict[str, Any]]:
    """Native tool-call deltas. Quirks: "one_chunk" (name and all arguments as several entries for one
    index in one chunk), "no_id", "null_fields" (explicit nulls in continuations), "no_args" (never
    send arguments), "interleave" (fragments of two calls alternate), "dup_tail" (the final chunk re-sends
    the whole arguments, as classic vLLM did), "drop_fragment" (the second argument fragment of each call
    is lost: a streaming parser bug; the fake applies it to streamed replies only)."""
    ids = [None if "no_id" in quirks else "chatcmpl-tool-" + uuid.uuid4().hex[:16] for _ in calls]
    heads = [
        {"index": i, "id": ids[i], "type": "function", "function": {"name": c.name}}
        for i, c in enumerate(calls)
    ]
    frags = [[] if "no_args" in quirks else list(pieces(c.arguments_json(), size)) for c in calls]
    if "drop_fragment" in quirks:
        frags = [f[:1] + f[2:] if len(f) > 2 else f for f in frags]

    def cont(i: int, frag: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"index": i, "function": {"arguments": frag}}
        if "null_fields" in quirks:
            entry.update({"id": None, "type": None})
            entry["function"]["name"] = None
        return entry

    if "one_chunk" in quirks:
        for i in range(len(calls)):
            yield w.chunk({"tool_calls": [heads[i], *[cont(i, f) for f in frags[i]]]})
        return
    if "interleave" in quirks:
        for head in heads:
            yield w.chunk({"tool_calls": [head]})
        longest = max((len(f) for f in frags), default=0)
        for k in range(longest):
            for i, f in enumerate(frags):
                if k < len(f):
                    yield w.chunk({"tool_calls": [cont(i, f[k])]})
        return
    for i in range(len(calls)):
        yield w.chunk({"tool_calls": [heads[i]]})
        for frag in frags[i]:
            yield w.chunk({"tool_calls": [cont(i, frag)]})


METRIC_HELP = {
    "vllm:num_requests_running": "Number of requests in model execution batches.",
    "vllm:num_requests_waiting": "Number of requests waiting to be processed.",
    "vllm:kv_cache_usage_perc": "KV-cache usage. 1 means 100 percent usage.",
    "vllm:gpu_cache_usage_perc": "GPU KV-cache usage. 1 means 100 percent usage.",
}


COUNTER_HELP = {
    "vllm:prompt_tokens": "Number of prefill tokens processed.",
    "vllm:generation_tokens": "Number of generation tokens processed.",
    "vllm:prefix_cache_queries": "Prefix cache queries, in terms of number of queried tokens.",
    "vllm:prefix_cache_hits": "Prefix cache hits, in terms of number of cached tokens.",
}
COUNTERS = tuple(COUNTER_HELP)  # the order the fake server adds to them in


def metrics_page(gauges: dict[str, float], model: str, counters: dict[str, float] | None = None) -> str:
    """A Prometheus text page shaped like vLLM's /metrics: the given gauges, counters (exposed with
    the `_total` suffix, as prometheus_client does) and unrelated series."""
    lines = [
        "# HELP python_gc_objects_collected_total Objects collected during gc",
        "# TYPE python_gc_objects_collected_total counter",
        'python_gc_objects_collected_total{generation="0"} 1234.0',
    ]
    labels = f'engine="0",model_name="{model}"'
    for name, value in gauges.items():
        lines += [f"# HELP {name} {METRIC_HELP.get(name, name)}", f"# TYPE {name} gauge"]
        lines.append(f"{name}{{{labels}}} {float(value)}")
    for name, value in (counters or {}).items():
        lines += [f"# HELP {name} {COUNTER_HELP.get(name, name)}", f"# TYPE {name} counter"]
        lines.append(f"{name}_total{{{labels}}} {float(value)}")
    lines += [
        "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.",
        "# TYPE vllm:time_to_first_token_seconds histogram",
        f'vllm:time_to_first_token_seconds_bucket{{{labels},le="0.001"}} 0.0',
        f"vllm:time_to_first_token_seconds_count{{{labels}}} 7.0",
    ]
    return "\n".join(lines) + "\n"


def fold_chunks(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Fold streamed chunks into one chat.completion response."""
    message: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [], "reasoning": None}
    finish, usage = "stop", None
    calls: dict[int, dict[str, Any]] = {}
    for c in chunks:
        usage = c.get("usage", usage)
        for choice in c["choices"]:
            d = choice["delta"]
            message["content"] += d.get("content") or ""
            for key in ("reasoning", "reasoning_content"):
                if d.get(key):
                    message[key] = (message.get(key) or "") + d[key]
            for tc in d.get("tool_calls") or []:
                entry = calls.setdefault(
                    tc["index"],
                    {"id": tc.get("id"), "type": "function", "function": {"name": None, "arguments": ""}},
                )
                entry["id"] = entry["id"] or tc.get("id")
                entry["function"]["name"] = entry["function"]["name"] or (tc.get("function") or {}).get(
                    "name"
                )
                entry["function"]["arguments"] += (tc.get("function") or {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    message["tool_calls"] = [calls[i] for i in sorted(calls)]
    message["content"] = message["content"] or None
    return {
        "id": chunks[0]["id"],
        "object": "chat.completion",
        "created": 1730000000,
        "model": chunks[0]["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "stop_reason": None}],
        "usage": usage,
    }


def check_history(messages: list[dict[str, Any]]) -> list[str]:
    """Each assistant tool call id has exactly one tool result; results answer known calls; arguments
    in history are valid JSON objects (vLLM re-parses them for the chat template)."""
    problems: list[str] = []
    open_ids: dict[str, int] = {}
    for i, m in enumerate(messages):
        for tc in m.get("tool_calls") or []:
            open_ids[tc["id"]] = 0
            try:
                ok = isinstance(json.loads(tc["function"]["arguments"]), dict)
            except (ValueError, TypeError, KeyError):
                ok = False
            if not ok:
                problems.append(
                    f"message {i}: tool call {tc.get('id')} has arguments that are not a JSON object"
                )
        if m.get("role") == "tool":
            tid = m.get("tool_call_id")
            if tid not in open_ids:
                problems.append(f"message {i}: tool result for unknown call id {tid!r}")
            else:
                open_ids[tid] += 1
    for tid, n in open_ids.items():
        if n != 1:
            problems.append(f"tool call {tid} has {n} results (expected exactly one)")
    return problems
