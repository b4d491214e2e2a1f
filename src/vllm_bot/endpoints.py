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
