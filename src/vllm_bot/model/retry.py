"""Retries for a server that has answered before and then faltered: exponential backoff with jitter,
honouring Retry-After, all within a window that opens at the request's first failure (a hung server
must not cost five full stall timeouts). The clock, sleep and random source are injectable so tests
never sleep.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import ModelServerError
from ..events import Emit, Notice
from .watchdog import DeadlineReached

T = TypeVar("T")
MIN_ATTEMPT = 0.05  # seconds a retry needs at least; one that would get less is not started


class TransientServerError(ModelServerError):
    """A failure worth retrying: connection lost, 5xx, 429, an error inside a 200 stream, a stream
    that ended early or stalled. Nothing from the failed attempt has been executed."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class RetryPolicy:
    attempts: int = 5  # total tries, the first included
    base: float = 1.0  # seconds before the first retry; doubles each time
    cap: float = 20.0  # longest single wait
    jitter: float = 0.25  # +/- fraction of the wait, so restarted clients do not stampede
    max_retry_after: float = 120.0
    window: float = 90.0  # seconds after the first failure by which the retries must have succeeded


class Retrier:
    def __init__(
        self,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy
        self.sleep = sleep
        self.rand = rand
        self.clock = clock

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.policy.max_retry_after)
        wait = min(self.policy.cap, self.policy.base * (2 ** (retry - 1)))
        return max(0.0, wait * (1 + self.policy.jitter * (2 * self.rand() - 1)))

    def run(self, action: Callable[[int, float], T], emit: Emit, *, until: float | None = None) -> T:
        """Call action(attempt, seconds_left) until it succeeds, retrying TransientServerError with
        backoff. seconds_left is how long the attempt may stay silent: inf for the first one, then
        what is left of the window (a retry must not wait out another full stall timeout).
        `until` (on this retrier's clock) is the task's deadline: a retry that could not start before
        it is not waited for, DeadlineReached instead."""
        attempt, window_end = 1, math.inf
        while True:
            try:
                return action(attempt, window_end - self.clock())
            except TransientServerError as e:
                tries = f"{attempt} attempt" + ("s" if attempt > 1 else "")
                if attempt >= self.policy.attempts:
                    raise ModelServerError(f"{e} Gave up after {tries}.") from None
                window_end = min(window_end, self.clock() + self.policy.window)
                wait = self.delay(attempt, e.retry_after)
                if until is not None and self.clock() + wait + MIN_ATTEMPT > until:
                    emit(Notice("warning", f"{e} No retry: the time budget runs out first."))
                    raise DeadlineReached() from None
                if self.clock() + wait + MIN_ATTEMPT > window_end:
                    raise ModelServerError(
                        f"{e} Gave up after {tries}: another one (in {wait:.0f} s) would not fit in "
                        f"the {self.policy.window:g} s after the first failure (vllm.retry_window)."
                    ) from None
                emit(
                    Notice("warning", f"{e} Retrying in {wait:.0f} s ({attempt + 1}/{self.policy.attempts}).")
                )
                self.sleep(wait)
                attempt += 1
