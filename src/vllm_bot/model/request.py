"""Sending one chat completion: the one place a chat request leaves the client.

The request parameters become the JSON body the server receives (`extra_body` merged into the top
level, as the SDK would do), the DEBUG trace records that body, and the same body goes to the SDK's
plain `post` as JSON bytes, which it sends as they are and whose reply it parses (a chunk stream or
one completion). So the trace shows exactly what vLLM got, not the arguments of an SDK call.

The bytes are built by a `BodyEncoder`: the messages of a conversation are the same dict objects
request after request (wire.WireMessages), so each is encoded once and the next request only joins
the encoded messages with the new ones. Encoding the whole history every turn was the largest cost
that grew with the conversation (a 200-turn body is ~220 kB of JSON).
"""

from __future__ import annotations

import json
from typing import Any

from .trace import Trace


def request_body(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON body for chat parameters: `extra_body` (vLLM's own fields) merged into the top level."""
    body = {key: value for key, value in params.items() if key != "extra_body"}
    body.update(params.get("extra_body") or {})
    return body


def to_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as the SDK itself would send it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class BodyEncoder:
    """A chat body as JSON bytes, reusing the encoding of messages sent before (by identity: callers
    never change a message dict once sent). Only the last body's messages are remembered."""

    def __init__(self) -> None:
        self._encoded: dict[int, tuple[dict[str, Any], bytes]] = {}

    def encode(self, body: dict[str, Any]) -> bytes:
        if not isinstance(body.get("messages"), list):
            return to_json(body)
        encoded: dict[int, tuple[dict[str, Any], bytes]] = {}
        parts = []
        for message in body["messages"]:
            entry = self._encoded.get(id(message))
            if entry is None or entry[0] is not message:
                entry = (message, to_json(message))
            encoded[id(message)] = entry
            parts.append(entry[1])
        self._encoded = encoded
        rest = to_json({key: value for key, value in body.items() if key != "messages"})
        return b'{"messages":[' + b",".join(parts) + b"]" + (b"," + rest[1:] if rest != b"{}" else b"}")


def post_chat(
    sdk: Any, params: dict[str, Any], trace: Trace | None, encoder: BodyEncoder | None = None
) -> Any:
    """POST /chat/completions; the SDK's Stream of chunks when `params` ask for a stream, else the
    ChatCompletion. Errors are the SDK's (server_errors.translate_errors maps them).

    The stream is the SDK's own (its SSE decoding, its in-stream error events) typed `object`, which
    the SDK honours by yielding each chunk as the dict it parsed: building a ChatCompletionChunk model
    for every chunk cost 0.1-0.2 ms each, for fields streaming.py reads from dicts just as well. It
    reads the response to its end, so the connection is kept for the next request (sdk.chunk_stream)."""
    from .sdk import load

    chat = load()
    body = request_body(params)
    if trace is not None:
        trace.record("request", body)
    stream = bool(body.get("stream"))
    return sdk.post(
        "/chat/completions",
        cast_to=chat.ChatCompletion,
        content=(encoder or BodyEncoder()).encode(body),
        options={"security": {"bearer_auth": True}},
        stream=stream,
        stream_cls=chat.ChunkStream if stream else None,  # chunk dicts; the connection kept
    )
