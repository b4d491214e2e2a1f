"""Where a running batch stands, for the progress display: done / running / failed, ETA, server speed.

`snapshot()` is plain data (the display in `ui/batch_view.py` knows nothing of the batch). Speed comes
from the server's /metrics when it has vLLM's counters, else from the tokens the agents' replies
report ("replies").
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from .report import outcome


class Running(Protocol):
    """A task in flight (batch.taskrun.TaskRun)."""

    started: float

    @property
    def tally(self) -> Any: ...


class Progress:
    def __init__(self, total: int, earlier: list[dict[str, Any]], server: Any = None) -> None:
        self.total = total  # tasks of this batch (this shard), finished earlier ones included
        self.already_done = len(earlier)  # finished by an earlier run of the same command
        self.earlier_failed = sum(1 for row in earlier if not row.get("passed"))
        self.server = server  # a ServerWatch, or None
        self.started = time.monotonic()
        self.finished: list[dict[str, Any]] = []  # rows finished in this run
        self.running: dict[str, Running] = {}
        self.completion_tokens = 0  # of finished tasks, for the speed fallback
        self.outage: Any = None  # an outage.Outage: is the queue paused?
        self._lock = threading.Lock()

    def begin(self, task_id: str, run: Running) -> None:
        with self._lock:
            self.running[task_id] = run

    def end(self, task_id: str, row: dict[str, Any] | None) -> None:
        with self._lock:
            run = self.running.pop(task_id, None)
            if row is not None:
                self.finished.append(row)
                self.completion_tokens += run.tally.completion_tokens if run is not None else 0

    def eta_seconds(self) -> float | None:
        """Tasks left over this run's rate so far (None before the first one finishes)."""
        done = len(self.finished)
        left = self.total - self.already_done - done
        elapsed = time.monotonic() - self.started
        if not done or left <= 0:
            return 0.0 if left <= 0 else None
        return left * elapsed / done

    def tokens_per_second(self) -> tuple[float | None, str]:
        if self.server is not None:
            speed = self.server.tokens_per_second()
            if speed is not None:
                return speed, "server"
        with self._lock:
            tokens = self.completion_tokens + sum(r.tally.completion_tokens for r in self.running.values())
        elapsed = time.monotonic() - self.started
        return (tokens / elapsed if elapsed > 0 and tokens else None), "replies"

    def snapshot(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            running = [
                {"id": task_id, "iteration": run.tally.iteration, "seconds": now - run.started}
                for task_id, run in sorted(self.running.items(), key=lambda kv: kv[1].started)
            ]
            failed = sum(1 for row in self.finished if not row["passed"])
            done = len(self.finished)
            finished = [{**row, "outcome": outcome(row)} for row in self.finished]
        speed, source = self.tokens_per_second()
        return {
            "total": self.total,
            "done": self.already_done + done,
            "failed": self.earlier_failed + failed,
            "running": running,
            "finished": finished,  # rows finished in this run, in order
            "eta_seconds": self.eta_seconds(),
            "elapsed_seconds": now - self.started,
            "tokens_per_second": speed,
            "speed_source": source,
            "cache_hit_rate": self.server.cache_hit_rate() if self.server is not None else None,
            "paused": self.outage.snapshot() if self.outage is not None else None,
        }
