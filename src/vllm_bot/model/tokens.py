"""Count prompt tokens the way the server will: vLLM's own `POST /tokenize` when it is there (once
per new message, cached), otherwise a chars-per-token estimate calibrated from the `usage` the
server returns. The chat template's own tokens (role markers, tool schema framing) are learned as an
overhead from each reply's real `prompt_tokens`.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections import OrderedDict
from typing import Any, Protocol

DEFAULT_CHARS_PER_TOKEN = 3.0  # conservative: real code/English is ~3.5-4 on most tokenizers
CACHE_SIZE = 1024  # counts remembered (least recently used dropped first); an entry is ~200 B


class Recorder(Protocol):  # trace.Trace
    def exchange(self, url: str, sent: Any, status: int | None, answer: str) -> None: ...


def message_text(message: dict[str, Any]) -> str:
    """The text of one wire message that the chat template will tokenize."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(parts)


def server_root(base_url: str) -> str:
    """`http://host:8000/v1` -> `http://host:8000` (/tokenize has no /v1 prefix)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class TokenCounter:
    def __init__(self, base_url: str | None, model: str | None = None, timeout: float = 5.0) -> None:
        self.url = server_root(base_url) + "/tokenize" if base_url else None
        self.model = model
        self.timeout = timeout
        self.available: bool | None = None if base_url else False  # None: not tried yet
        self.chars_per_token = DEFAULT_CHARS_PER_TOKEN
        self.overhead_per_message = 4.0
        # Keyed by (hash, length), never by the text: holding the texts kept every tool result the
        # session ever counted alive, long after compaction had cut it from the history. Message
        # contents are the same str objects turn after turn and a str caches its hash, so a hit costs
        # no pass over the text; a 64-bit hash collision would only skew one estimate.
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()
        self.cache_size = CACHE_SIZE
        self._tools_key: tuple[int, int] | None = None
        self._tools_json = ""
        self._connection: http.client.HTTPConnection | None = None
        self.trace: Recorder | None = None  # DEBUG: every /tokenize request and its answer

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        key = (hash(text), len(text))
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        count = self._tokenize(text)
        if count is None:
            return int(len(text) / self.chars_per_token) + 1
        self._cache[key] = count
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return count

    def tools_text(self, tools: list[dict[str, Any]]) -> str:
        """The tools as JSON, serialized once per tool list (the list changes only when MCP tools come)."""
        key = (id(tools), len(tools))
        if key != self._tools_key:
            self._tools_key, self._tools_json = key, json.dumps(tools, ensure_ascii=False)
        return self._tools_json

    def _tokenize(self, text: str) -> int | None:
        if self.available is False or self.url is None:
            return None
        body: dict[str, Any] = {"prompt": text, "add_special_tokens": False}
        if self.model:
            body["model"] = self.model
        for attempt in range(2):  # a kept-alive connection the server closed meanwhile: reconnect once
            try:
                count = self._post(json.dumps(body).encode())
            except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
                self._close()
                if attempt == 0:
                    continue
                self.available = False  # older servers / proxies without /tokenize: estimate instead
                return None
            self.available = True
            return count
        return None

    def _post(self, payload: bytes) -> int:
        """POST /tokenize on one kept-alive connection (a new one per call costs more than the call)."""
        assert self.url is not None
        parts = urllib.parse.urlsplit(self.url)
        if self._connection is None:
            factory = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            self._connection = factory(parts.netloc, timeout=self.timeout)
        self._connection.request("POST", parts.path, payload, {"Content-Type": "application/json"})
        response = self._connection.getresponse()
        data = response.read()
        if self.trace is not None:
            self.trace.exchange(
                self.url, json.loads(payload), response.status, data.decode("utf-8", "replace")
            )
        if response.status != 200:
            raise ValueError(f"/tokenize answered {response.status}")
        return int(json.loads(data)["count"])

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def count_messages(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> int:
        total = sum(self.count_text(message_text(m)) for m in messages)
        total += int(self.overhead_per_message * len(messages))
        if tools:
            total += self.count_text(self.tools_text(tools))
        return total

    def calibrate(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, actual: int
    ) -> None:
        """Learn from a reply's real prompt_tokens: the template overhead, or the chars-per-token ratio."""
        if actual <= 0 or not messages:
            return
        if self.available:
            counted = sum(self.count_text(message_text(m)) for m in messages)
            if tools:
                counted += self.count_text(self.tools_text(tools))
            self.overhead_per_message = max(0.0, (actual - counted) / len(messages))
            return
        chars = sum(len(message_text(m)) for m in messages) + (len(self.tools_text(tools)) if tools else 0)
        measured = chars / max(1, actual - int(4 * len(messages)))
        self.chars_per_token = max(1.0, 0.5 * self.chars_per_token + 0.5 * measured)
