"""vLLM's side endpoints outside `/v1` (`/health`, `/version`, `/tokenize`, `/metrics`) over urllib.

These are cheap, never use GPU time, and are not worth the SDK: one small HTTP call each.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from ..errors import ModelServerError, ServerUnreachable, unreachable_message, untrusted_message
from .tokens import server_root


@dataclass
class HttpAnswer:
    status: int | None  # None: no answer at all (see `error`)
    body: str = ""
    error: str = ""  # why there was no answer
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def call(
    base_url: str,
    path: str,
    *,
    payload: dict[str, Any] | None = None,
    api_key: str | None = None,
    timeout: float = 10.0,
) -> HttpAnswer:
    """GET (or POST `payload` as JSON) `path` on the server root; never raises for HTTP problems."""
    return fetch(server_root(base_url) + path, payload=payload, api_key=api_key, timeout=timeout)


def fetch(
    url: str, *, payload: dict[str, Any] | None = None, api_key: str | None = None, timeout: float = 10.0
) -> HttpAnswer:
    """GET (or POST `payload` as JSON) one URL; never raises for HTTP problems."""
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if api_key and api_key != "EMPTY":
        request.add_header("Authorization", f"Bearer {api_key}")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read().decode("utf-8", "replace")
            return HttpAnswer(response.status, body, seconds=time.monotonic() - started)
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace")
        return HttpAnswer(e.code, body, seconds=time.monotonic() - started)
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        return HttpAnswer(None, error=str(reason), seconds=time.monotonic() - started)


def model_cards(answer: Any, base_url: str, answered_before: bool) -> list[dict[str, Any]]:
    """The `data` list of a /v1/models answer, or the user-facing error for a failed one."""
    from .retry import TransientServerError

    if answer.status is None:
        if answered_before:
            raise TransientServerError(f"Lost the connection to the server at {base_url}.")
        detail = "timed out" if "timed out" in answer.error else "connection failed"
        raise ServerUnreachable(
            untrusted_message(base_url, answer.error) or unreachable_message(base_url, detail)
        )
    if answer.status == 401:
        raise ModelServerError(
            f"The server at {base_url} rejected the API key (401). Set vllm.api_key, VLLM_API_KEY or "
            "--api-key to the key vLLM was started with (--api-key)."
        )
    body = answer.json()
    if not answer.ok or not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ModelServerError(
            f"The server at {base_url} did not list its models (GET /models answered {answer.status}: "
            f"{answer.body[:200]!r}). Is this a vLLM / OpenAI-compatible endpoint ending in /v1?"
        )
    return [card for card in body["data"] if isinstance(card, dict)]
