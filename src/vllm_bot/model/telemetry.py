"""Server telemetry for a session: time to first token, generation speed, prefix-cache hit rate, and
for slow replies a look at vLLM's `/metrics` (queue length, KV-cache usage) to explain the wait.

`Telemetry` is an event consumer. It reads `TurnFinished` (timings, usage) and emits one
`TelemetryReported` per model request, so session files record it. `/metrics` is read only when the
first token takes longer than `telemetry.slow_first_token` seconds, never on a normal reply.
"""

from __future__ import annotations

import re
import statistics
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..config import TelemetryConfig
from ..events import Event, FirstToken, RequestStarted, TelemetryReported, TurnFinished

if TYPE_CHECKING:
    from .server import Server

_SAMPLE = re.compile(r"^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
RUNNING = ("vllm:num_requests_running",)
WAITING = ("vllm:num_requests_waiting",)
KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # a 0..1 fraction despite "perc"


@dataclass
class ServerLoad:
    running: float | None = None
    waiting: float | None = None
    kv_cache_usage: float | None = None  # 0..1

    def explain(self) -> str:
        """ "server busy: 3 requests waiting, KV cache 97% full" (or why the server looks idle)."""
        parts = []
        if self.waiting:
            parts.append(f"{_n(self.waiting)} request{'s' if self.waiting != 1 else ''} waiting")
        if self.kv_cache_usage is not None and self.kv_cache_usage >= 0.9:
            parts.append(f"KV cache {self.kv_cache_usage:.0%} full")
        if parts:
            return "server busy: " + ", ".join(parts)
        running = f"{_n(self.running)} running" if self.running is not None else "no queue"
        return f"server not queueing ({running}, 0 waiting): the wait was prompt processing"


def _n(value: float | None) -> str:
    return str(int(value)) if value is not None and value == int(value) else str(value)


def parse_metrics(text: str, model: str | None = None) -> ServerLoad | None:
    """Queue and KV-cache gauges from a Prometheus page (summed over engines; `model` filters by the
    `model_name` label when present). None when the page has none of them."""
    sums: dict[str, float] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line.strip())
        if not m or line.startswith("#"):
            continue
        name, labels, raw = m.groups()
        if name not in RUNNING + WAITING + KV_USAGE:
            continue
        label_map = dict(_LABEL.findall(labels or ""))
        if model and label_map.get("model_name", model) != model:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        key = "kv" if name in KV_USAGE else name
        sums[key] = max(sums.get(key, 0.0), value) if key == "kv" else sums.get(key, 0.0) + value
    if not sums:
        return None
    return ServerLoad(sums.get(RUNNING[0]), sums.get(WAITING[0]), sums.get("kv") if "kv" in sums else None)


def scrape(server: Server, model: str | None = None) -> ServerLoad | None:
    """GET /metrics of a server.Server (2 s timeout); None when the server has no such page or it says
    nothing useful."""
    answer = server.get("/metrics", timeout=2.0)
    return parse_metrics(answer.body, model) if answer.ok else None


@dataclass
class TurnStats:
    seconds: float
    first_token_seconds: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    load: ServerLoad | None = None

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed: completion tokens over the time after the first token."""
        if not self.completion_tokens or self.completion_tokens < 2:
            return None
        decode = self.seconds - (self.first_token_seconds or 0.0)
        return self.completion_tokens / decode if decode > 0 else None

    @property
    def cache_hit_rate(self) -> float | None:
        if self.cached_tokens is None or not self.prompt_tokens:
            return None
        return self.cached_tokens / self.prompt_tokens


Scraper = Callable[[], "ServerLoad | None"]


class Telemetry:
    """Per-session aggregation: a `TelemetryReported` per request (the footer shows it), `summary()`
    for /tokens."""

    def __init__(
        self,
        config: TelemetryConfig,
        *,
        scraper: Scraper | None = None,
        emit: Callable[[Event], None] | None = None,
    ) -> None:
        self.config = config
        self.scraper = scraper if config.metrics else None
        self.emit = emit
        self.turns: list[TurnStats] = []
        self.waiting = False  # a request is out and no token has arrived yet
        self._timer: threading.Timer | None = None
        self._load: ServerLoad | None = None
        self._scraped = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestStarted) and event.mode in ("native", "text"):
            self._arm()
        elif isinstance(event, FirstToken) and self.waiting:
            self._disarm()
        elif isinstance(event, TurnFinished):
            self._finish(event)

    # -- the slow-reply probe -------------------------------------------------------------------

    def _arm(self) -> None:
        self._disarm()
        self.waiting, self._load, self._scraped = True, None, False
        if self.scraper is not None:
            self._timer = threading.Timer(self.config.slow_first_token, self._scrape)
            self._timer.daemon = True
            self._timer.start()

    def _disarm(self) -> None:
        self.waiting = False
        if self._timer is not None:
            self._timer.cancel()

    def _scrape(self) -> None:
        if self.scraper is not None and not self._scraped:
            self._scraped = True
            self._load = self.scraper()

    # -- one finished request -------------------------------------------------------------------

    def _finish(self, event: TurnFinished) -> None:
        self._disarm()
        if self._timer is not None:
            self._timer.join(timeout=3.0)  # a scrape in flight finishes (2 s timeout) before we read it
            self._timer = None
        usage = event.turn.usage
        stats = TurnStats(
            event.seconds,
            event.first_token_seconds,
            usage.prompt_tokens if usage else None,
            usage.completion_tokens if usage else None,
            usage.cached_tokens if usage else None,
        )
        wait = stats.first_token_seconds if stats.first_token_seconds is not None else stats.seconds
        if wait >= self.config.slow_first_token:
            self._scrape()  # no-op when the timer already read the page
            stats.load = self._load
        self.turns.append(stats)
        if self.emit is not None:
            self.emit(report(stats))

    # -- views ----------------------------------------------------------------------------------

    @property
    def cache_hit_rate(self) -> float | None:
        """Cached prompt tokens over prompt tokens, for the requests that reported cached tokens."""
        known = [t for t in self.turns if t.cached_tokens is not None and t.prompt_tokens]
        prompt = sum(t.prompt_tokens or 0 for t in known)
        return sum(t.cached_tokens or 0 for t in known) / prompt if prompt else None

    @property
    def tokens_per_second(self) -> float | None:
        timed = [t for t in self.turns if t.tokens_per_second is not None]
        decode = sum(t.seconds - (t.first_token_seconds or 0.0) for t in timed)
        return sum(t.completion_tokens or 0 for t in timed) / decode if decode > 0 else None

    def summary(self) -> str:
        """Several lines for /tokens: requests, tokens, speed, cache hits, slow replies explained."""
        if not self.turns:
            return "No model requests yet."
        prompt = sum(t.prompt_tokens or 0 for t in self.turns)
        completion = sum(t.completion_tokens or 0 for t in self.turns)
        rate = self.cache_hit_rate
        cache = (
            f"prefix-cache hits {rate:.0%}"
            if rate is not None
            else "prefix-cache hits not reported (vllm serve --enable-prompt-tokens-details)"
        )
        lines = [f"requests: {len(self.turns)} · prompt {prompt:,} tokens ({cache})"]
        lines[0] += f" · completion {completion:,} tokens"
        firsts = [t.first_token_seconds for t in self.turns if t.first_token_seconds is not None]
        speed = self.tokens_per_second
        timing = [f"{speed:.1f} tokens/s generation"] if speed is not None else []
        if firsts:
            timing.append(f"first token {statistics.median(firsts):.1f} s median, {max(firsts):.1f} s max")
        if timing:
            lines.append("speed: " + " · ".join(timing))
        slow = [t for t in self.turns if t.load is not None]
        if slow:
            lines.append(f"slow replies: {len(slow)} (last: {slow[-1].load.explain()})")  # type: ignore[union-attr]
        return "\n".join(lines)


def report(stats: TurnStats) -> TelemetryReported:
    return TelemetryReported(
        seconds=round(stats.seconds, 3),
        first_token_seconds=round(stats.first_token_seconds, 3) if stats.first_token_seconds else None,
        prompt_tokens=stats.prompt_tokens,
        completion_tokens=stats.completion_tokens,
        cached_tokens=stats.cached_tokens,
        tokens_per_second=round(stats.tokens_per_second, 2) if stats.tokens_per_second else None,
        cache_hit_rate=round(stats.cache_hit_rate, 4) if stats.cache_hit_rate is not None else None,
        server=asdict(stats.load) if stats.load is not None else None,
        note=stats.load.explain() if stats.load is not None else "",
    )


def for_session(config: TelemetryConfig, client: Any, emit: Callable[[Event], None]) -> Telemetry:
    """A Telemetry reading `client`'s server /metrics when a reply is slow."""
    return Telemetry(config, scraper=lambda: scrape(client.server, client.model), emit=emit)
