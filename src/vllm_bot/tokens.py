"""Count prompt tokens the way the server will: vLLM's own `POST /tokenize` when it is there (once
per new message, cached), otherwise a chars-per-token estimate calibrated from the `usage` the
server returns. The chat template's own tokens (role markers, tool schema framing) are learned as an
overhead from each reply's real `prompt_tokens`.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from typing import Any

DEFAULT_CHARS_PER_TOKEN = 3.0  # conservative: real code/English is ~3.5-4 on most tokenizers


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
        self._cache: dict[str, int] = {}

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        key = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        if key in self._cache:
            return self._cache[key]
        count = self._tokenize(text)
        if count is None:
            return int(len(text) / self.chars_per_token) + 1
        self._cache[key] = count
        return count

    def _tokenize(self, text: str) -> int | None:
        if self.available is False or self.url is None:
            return None
        body: dict[str, Any] = {"prompt": text, "add_special_tokens": False}
        if self.model:
            body["model"] = self.model
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                count = int(json.loads(response.read())["count"])
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
            self.available = False  # older servers / proxies without /tokenize: estimate instead
            return None
        self.available = True
        return count

    def count_messages(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> int:
        total = sum(self.count_text(message_text(m)) for m in messages)
        total += int(self.overhead_per_message * len(messages))
        if tools:
            total += self.count_text(json.dumps(tools, ensure_ascii=False))
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
                counted += self.count_text(json.dumps(tools, ensure_ascii=False))
            self.overhead_per_message = max(0.0, (actual - counted) / len(messages))
            return
        chars = sum(len(message_text(m)) for m in messages) + (len(json.dumps(tools)) if tools else 0)
        measured = chars / max(1, actual - int(4 * len(messages)))
        self.chars_per_token = max(1.0, 0.5 * self.chars_per_token + 0.5 * measured)
