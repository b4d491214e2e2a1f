"""Count prompt tokens the way the server will.

Each reply's `usage.prompt_tokens` is the exact count of the request it answered, and the next
request is that one plus the messages the turn added (history is append-only between compactions).
So a request is measured from that anchor: the server's count plus the new messages, whose work is
proportional to what the turn added, not to the history. The new messages are estimated two ways:
cheaply (characters over a calibrated chars-per-token ratio) with an upper bound (one token per
UTF-8 byte, which no tokenizer exceeds, plus the template's framing), and, only when that bound
comes near a decision (context.py: compaction, the window), exactly with vLLM's own `POST
/tokenize` (once per text, cached). The chat template's own tokens per message are learned from
the anchors.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import Server

DEFAULT_CHARS_PER_TOKEN = 3.0  # conservative: real code/English is ~3.5-4 on most tokenizers
CACHE_SIZE = 1024  # counts remembered (least recently used dropped first); an entry is ~200 B
FRAMING_BOUND = 16  # template tokens one message may add (role markers, call framing), for the bound


def message_text(message: dict[str, Any]) -> str:
    """The text of one wire message that the chat template will tokenize."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(parts)


@dataclass
class Anchor:
    """A request the server has counted: its messages (the same objects), tools and prompt_tokens."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tokens: int
    chars: int  # characters of its message texts (and tools), for the chars-per-token ratio


@dataclass
class Estimate:
    """A request's size: `cheap` (calibrated estimate) <= roughly the truth <= `bound`."""

    cheap: int
    bound: int


class TokenCounter:
    def __init__(self, server: Server | None, model: str | None = None, timeout: float = 5.0) -> None:
        self.server = server
        self.model = model
        self.timeout = timeout
        self.available: bool | None = None if server else False  # None: not tried yet
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
        self.anchor: Anchor | None = None  # the last request the server counted

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
        if self.available is False or self.server is None:
            return None
        body: dict[str, Any] = {"prompt": text, "add_special_tokens": False}
        if self.model:
            body["model"] = self.model
        answer = self.server.post("/tokenize", body, timeout=self.timeout)
        data = answer.json() if answer.ok else None
        if not isinstance(data, dict) or not isinstance(data.get("count"), int):
            self.available = False  # older servers / proxies without /tokenize: estimate instead
            return None
        self.available = True
        return data["count"]

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
        """Learn from a reply's real prompt_tokens: it becomes the anchor of the next estimates; the
        template overhead per message (from texts already counted exactly) or the chars-per-token
        ratio is learned from what the request added to the last anchor."""
        if actual <= 0 or not messages:
            return
        known = self._shared(messages, tools)
        base = self.anchor if known else None
        new = messages[known:]
        chars = sum(len(message_text(m)) for m in new) + (
            len(self.tools_text(tools)) if tools and not known else 0
        )
        chars += base.chars if base else 0
        added = actual - (base.tokens if base else 0)
        if self.available:
            counted = self._cached_counts(new, None if known else tools)
            if counted is not None and new:
                self.overhead_per_message = max(0.0, (added - counted) / len(new))
        else:
            measured = chars / max(1, actual - int(4 * len(messages)))
            self.chars_per_token = max(1.0, 0.5 * self.chars_per_token + 0.5 * measured)
        self.anchor = Anchor(list(messages), tools, actual, chars)

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Estimate:
        """The request's size from the anchor, without asking the server."""
        known = self._shared(messages, tools)
        base = self.anchor.tokens if known and self.anchor else 0
        cheap = bound = base
        for message in messages[known:]:
            text = message_text(message)
            cheap += int(len(text) / self.chars_per_token + self.overhead_per_message) + 1
            bound += len(text.encode("utf-8", "replace")) + FRAMING_BOUND
        if tools and not known:
            text = self.tools_text(tools)
            cheap += int(len(text) / self.chars_per_token) + 1
            bound += len(text.encode("utf-8", "replace"))
        return Estimate(cheap, max(cheap, bound))

    def precise(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
        """The request's size from the anchor, the new messages counted by the server (/tokenize,
        cached per text) when it can; the estimate otherwise."""
        known = self._shared(messages, tools)
        if not known:
            return self.count_messages(messages, tools)
        assert self.anchor is not None
        new = messages[known:]
        total = self.anchor.tokens + sum(self.count_text(message_text(m)) for m in new)
        return total + int(self.overhead_per_message * len(new))

    def _shared(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """How many leading messages (with the same tools) the anchor has counted; 0 if it is not a
        prefix (compaction or a clipped result changed one)."""
        anchor = self.anchor
        if anchor is None or tools != anchor.tools:
            return 0
        known = len(anchor.messages)
        return known if len(messages) >= known and messages[:known] == anchor.messages else 0

    def _cached_counts(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> int | None:
        """The exact token total of these texts if every one is already counted, else None."""
        texts = [message_text(m) for m in messages] + ([self.tools_text(tools)] if tools else [])
        total = 0
        for text in texts:
            count = self._cache.get((hash(text), len(text))) if text else 0
            if count is None:
                return None
            total += count
        return total
