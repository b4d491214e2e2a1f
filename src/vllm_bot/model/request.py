"""Sending one chat completion: the one place a chat request leaves the client.

The request parameters become the JSON body the server receives (`extra_body` merged into the top
level, as the SDK would do), the DEBUG trace records that body, and the same dict goes to the SDK's
plain `post`, which sends it as it is and parses the reply (a chunk stream or one completion). So
the trace shows exactly what vLLM got, not the arguments of an SDK call.
"""

from __future__ import annotations

from typing import Any

from .trace import Trace


def request_body(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON body for chat parameters: `extra_body` (vLLM's own fields) merged into the top level."""
    body = {key: value for key, value in params.items() if key != "extra_body"}
    body.update(params.get("extra_body") or {})
    return body


def post_chat(sdk: Any, params: dict[str, Any], trace: Trace | None) -> Any:
    """POST /chat/completions; the SDK's Stream of chunks when `params` ask for a stream, else the
    ChatCompletion. Errors are the SDK's (server_errors.translate_errors maps them)."""
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    body = request_body(params)
    if trace is not None:
        trace.record("request", body)
    stream = bool(body.get("stream"))
    return sdk.post(
        "/chat/completions",
        cast_to=ChatCompletion,
        body=body,
        options={"security": {"bearer_auth": True}},
        stream=stream,
        stream_cls=openai.Stream[ChatCompletionChunk] if stream else None,
    )
