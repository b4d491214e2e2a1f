"""A server outage is not a task's result: the queue pauses, and resumes when the server answers.

A task whose agent stopped on an error while the server does not answer (`ServerDown`), or whose
run overlapped a pause (the server back before the task could tell), goes back to the queue
unrecorded. The first one pauses the queue: no task starts, and a watcher asks the server again
with growing waits (2 s doubling to a minute). When it answers, the queue resumes; when it has not
answered for `max_wait` seconds (`--outage-wait`), the batch gives up: it stops with exit 1 and the
tasks not run stay unrun, so the same command runs them once the server is back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..model.endpoints import fetch

FIRST_WAIT = 2.0  # seconds before the first new try; doubles up to LONGEST_WAIT
LONGEST_WAIT = 60.0
DEFAULT_OUTAGE_WAIT = 900.0  # a vLLM restart with a large model takes minutes


class ServerDown(Exception):
    """The task's agent failed and the server does not answer: an outage, not the task's result."""


def server_answers(base_url: str, api_key: str | None, timeout: float = 5.0) -> bool:
    """Does the server answer at all (GET /models: any status below 500; 503 while it loads)?"""
    answer = fetch(base_url.rstrip("/") + "/models", api_key=api_key, timeout=timeout)
    return answer.status is not None and answer.status < 500


class Outage:
    """The queue's pause. `report()` starts it; workers `wait()` before taking a task."""

    def __init__(self, probe: Callable[[], bool], max_wait: float, note: Callable[[str], None]) -> None:
        self.probe = probe
        self.max_wait = max_wait
        self.note = note
        self.gave_up = threading.Event()
        self.outages = 0  # pauses so far
        self._clear = threading.Event()
        self._clear.set()
        self._since: float | None = None
        self._ended = -1.0  # when the last pause ended
        self._next_try = 0.0
        self._lock = threading.Lock()

    def report(self, stop: threading.Event) -> None:
        """A task found the server down: pause the queue (once) and watch for the server's return."""
        with self._lock:
            if self._since is not None or self.gave_up.is_set():
                return
            self._since = time.monotonic()
            self._next_try = self._since + FIRST_WAIT
            self._clear.clear()
            self.outages += 1
        self.note(
            "the server is not answering: the queue is paused (running tasks go on; a task that "
            "fails for it runs again), asking again with growing waits, for up to "
            f"{self.max_wait:g} s (--outage-wait)"
        )
        threading.Thread(target=self._watch, args=(stop,), name="batch-outage", daemon=True).start()

    def _watch(self, stop: threading.Event) -> None:
        wait = FIRST_WAIT
        while not stop.wait(max(0.0, self._next_try - time.monotonic())):
            since = self._since or 0.0
            if self.probe():
                with self._lock:
                    self._since, self._ended = None, time.monotonic()
                    self._clear.set()
                self.note(f"the server answers again after {time.monotonic() - since:.0f} s: resuming")
                return
            left = since + self.max_wait - time.monotonic()
            if left <= 0:
                self.gave_up.set()
                self._clear.set()
                return
            wait = min(LONGEST_WAIT, wait * 2)
            with self._lock:
                self._next_try = time.monotonic() + min(wait, left)

    def overlapped(self, started: float) -> bool:
        """Was the queue paused at some time since `started` (a task's start, on the monotonic clock)?"""
        with self._lock:
            return self._since is not None or self._ended >= started

    def wait(self, stop: threading.Event) -> bool:
        """Block while the queue is paused; False when no more tasks may start (stopping, gave up)."""
        while not self._clear.wait(0.25):
            if stop.is_set():
                return False
        return not (stop.is_set() or self.gave_up.is_set())

    def snapshot(self) -> dict[str, Any] | None:
        """For the progress line: how long the server has been away, the next try, the give-up."""
        with self._lock:
            if self._since is None:
                return None
            now = time.monotonic()
            return {
                "seconds": now - self._since,
                "retry_in": max(0.0, self._next_try - now),
                "gives_up_in": max(0.0, self._since + self.max_wait - now),
            }
