"""The server's side of a batch, from vLLM's `/metrics`: generation speed and prefix-cache hits.

vLLM exports counters (`vllm:generation_tokens_total`, `vllm:prefix_cache_queries_total`,
`vllm:prefix_cache_hits_total`); a watcher samples them every few seconds while the batch runs. Speed
is measured over the last samples, the hit rate over the whole batch. A server (or router) without
the page or the counters gives None, and the batch falls back to what the agents' replies report.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass

from ..model.server import Server

GENERATED = "vllm:generation_tokens"
QUERIES = "vllm:prefix_cache_queries"
HITS = "vllm:prefix_cache_hits"
_SAMPLE = re.compile(r"^(vllm:[\w:]+?)(?:_total)?(?:\{[^}]*\})?\s+(\S+)\s*$")


def counters(page: str) -> dict[str, float]:
    """vLLM's counters on a /metrics page, summed over engines and models (only the three we read)."""
    sums: dict[str, float] = {}
    for line in page.splitlines():
        match = _SAMPLE.match(line)
        if match and match.group(1) in (GENERATED, QUERIES, HITS):
            try:
                sums[match.group(1)] = sums.get(match.group(1), 0.0) + float(match.group(2))
            except ValueError:
                continue
    return sums


@dataclass
class Sample:
    at: float
    values: dict[str, float]


class ServerWatch:
    """Samples /metrics in a background thread; `tokens_per_second` and `cache_hit_rate` read them."""

    WINDOW = 5  # samples the speed is measured over

    def __init__(self, base_url: str, api_key: str | None, interval: float = 2.0) -> None:
        self.server = Server(base_url, api_key)
        self.interval = interval
        self.first: Sample | None = None
        self.recent: deque[Sample] = deque(maxlen=self.WINDOW)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> ServerWatch:
        if self.sample() is not None:  # no page, no thread
            self._thread = threading.Thread(target=self._loop, name="vllm-bot-metrics", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self.sample()  # the closing figures

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> Sample | None:
        answer = self.server.get("/metrics", timeout=2.0)
        values = counters(answer.body) if answer.ok else {}
        if GENERATED not in values:
            return None
        sample = Sample(time.monotonic(), values)
        if self.first is None:
            self.first = sample
        self.recent.append(sample)
        return sample

    def tokens_per_second(self, overall: bool = False) -> float | None:
        """Generated tokens per second, over the last samples (or the whole batch)."""
        if not self.recent:
            return None
        old, new = (self.first if overall else self.recent[0]), self.recent[-1]
        if old is None or new.at - old.at <= 0:
            return None
        return (new.values[GENERATED] - old.values[GENERATED]) / (new.at - old.at)

    def cache_hit_rate(self) -> float | None:
        """Prefix-cache hits over queries (tokens) since the batch started."""
        if self.first is None or not self.recent or HITS not in self.first.values:
            return None
        new = self.recent[-1].values
        queries = new.get(QUERIES, 0.0) - self.first.values.get(QUERIES, 0.0)
        return (new.get(HITS, 0.0) - self.first.values[HITS]) / queries if queries > 0 else None
