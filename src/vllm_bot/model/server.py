"""The one HTTP client to a vLLM server: the openai SDK's, through its public API only.

Chat completions are posted as the SDK's streamed chat completions (its `Stream` of
`ChatCompletionChunk`); every other endpoint (`/v1/models`, `/tokenize`, `/metrics`, `/health`,
`/version`) goes through the same client's `get` / `post`. So the
timeouts, retries, API key and TLS are set once, where the client is made, and the DEBUG trace sees
every request here: a chat request as the JSON body the server receives (`request`), any other as
the URL, what was sent, the status and the answer (`http`).
"""

from __future__ import annotations

import json
import ssl
import time
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from ..errors import ModelServerError
from .server_errors import chain_text, no_answer, rejected_key
from .trace import Trace


def server_root(base_url: str) -> str:
    """`http://host:8000/v1` -> `http://host:8000` (/tokenize, /metrics, ... have no /v1 prefix)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def request_body(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON body for chat parameters: `extra_body` (vLLM's own fields) merged into the top level."""
    body = {key: value for key, value in params.items() if key != "extra_body"}
    body.update(params.get("extra_body") or {})
    return body


@dataclass
class HttpAnswer:
    status: int | None  # None: no answer at all (see `error`)
    body: str = ""
    error: str = ""  # why there was no answer
    seconds: float = 0.0
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class Server:
    """One vLLM server. `timeout` bounds a chat request's reads (the streaming deadlines of
    watchdog.py are shorter); retries are retry.py's business, never the SDK's."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
    ) -> None:
        self.base_url = base_url
        self.root = server_root(base_url)
        self.trace: Trace | None = None
        options: dict[str, Any] = {
            "base_url": base_url,
            "api_key": api_key or "EMPTY",
            "timeout": openai.Timeout(timeout, connect=connect_timeout),
            "max_retries": 0,
        }
        try:
            self.sdk = openai.OpenAI(**options)  # TLS as the SDK's default: SSL_CERT_FILE, ..., the system's
        except OSError:  # SSL_CERT_FILE / SSL_CERT_DIR name nothing readable: trust no server (fail closed)
            http = openai.DefaultHttpxClient(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
            self.sdk = openai.OpenAI(**options, http_client=http)

    def chat(self, params: dict[str, Any]) -> Any:
        """POST /chat/completions: the SDK's Stream of chunks when `params` ask for a stream, else the
        ChatCompletion. Errors are the SDK's (server_errors.translate_errors maps them).

        Kept for speed (ARCHITECTURE.md): the body goes through the client's `post`, not
        `chat.completions.create`, whose type-directed transform of every message of the history
        cost ~0.1 ms a message, every turn: 39 ms a turn at 80 turns, 116 ms at 200."""
        body = request_body(params)
        if self.trace is not None:
            self.trace.record("request", body)
        return self.sdk.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            stream=bool(body.get("stream")),
            stream_cls=openai.Stream[ChatCompletionChunk],
        )

    def get(self, path: str, *, timeout: float = 10.0) -> HttpAnswer:
        """GET `path`: with a leading slash on the server root (`/health`), without one under the
        base URL (`models`). Never raises for HTTP problems."""
        return self._call(path, None, timeout)

    def post(self, path: str, payload: dict[str, Any], *, timeout: float = 10.0) -> HttpAnswer:
        """POST `payload` as JSON to `path` (as `get` places it). Never raises for HTTP problems."""
        return self._call(path, payload, timeout)

    def _call(self, path: str, payload: dict[str, Any] | None, timeout: float) -> HttpAnswer:
        url = self.root + path if path.startswith("/") else self.base_url.rstrip("/") + "/" + path
        options: openai.RequestOptions = {"timeout": timeout}
        started = time.monotonic()
        try:
            if payload is None:
                body = self.sdk.get(url, cast_to=str, options=options)
            else:
                body = self.sdk.post(url, cast_to=str, body=payload, options=options)
            answer = HttpAnswer(200, body)  # the SDK raises for any status but 2xx
        except openai.APIStatusError as e:
            answer = HttpAnswer(e.status_code, e.response.text)
        except openai.APITimeoutError:
            answer = HttpAnswer(None, error="timed out", timed_out=True)
        except openai.APIConnectionError as e:
            answer = HttpAnswer(None, error=chain_text(e))
        answer.seconds = time.monotonic() - started
        if self.trace is not None:
            self.trace.exchange(url, payload, answer.status, answer.body or answer.error)
        return answer


def model_cards(answer: HttpAnswer, base_url: str, answered_before: bool) -> list[dict[str, Any]]:
    """The `data` list of a /v1/models answer, or the user-facing error for a failed one."""
    if answer.status is None:
        raise no_answer(base_url, answered_before, answer.timed_out, answer.error)
    if answer.status == 401:
        raise rejected_key(base_url)
    body = answer.json()
    if not answer.ok or not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ModelServerError(
            f"The server at {base_url} did not list its models (GET /models answered {answer.status}: "
            f"{answer.body[:200]!r}). Is this a vLLM / OpenAI-compatible endpoint ending in /v1?"
        )
    return [card for card in body["data"] if isinstance(card, dict)]
