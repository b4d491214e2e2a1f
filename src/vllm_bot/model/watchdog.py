"""Read a blocking stream with two deadlines: a long one for the first chunk (prefill of a long prompt
on a busy GPU is slow) and a shorter idle one between chunks (a stalled stream). An optional third,
absolute one (the task's time budget) ends the read at the next chunk boundary, or while waiting.

A reader thread pulls from the SDK iterator and hands chunks over a queue; the caller waits with a
timeout. On a stall the caller closes the stream and gives up on the reader (a daemon thread that
ends when the socket does).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

_END = object()


class StreamStalled(Exception):
    def __init__(self, seconds: float, first: bool) -> None:
        what = "the first token" if first else "the next chunk"
        super().__init__(f"No data from the server for {seconds:.0f} s while waiting for {what}.")
        self.first = first


class DeadlineReached(Exception):
    """The task's time budget ran out before or while the reply streamed (not a server fault)."""


def with_deadlines(
    stream: Any,
    first_timeout: float,
    idle_timeout: float,
    until: float | None = None,
    abort: threading.Event | None = None,
) -> Iterator[Any]:
    """Yield the stream's items; raise StreamStalled when a deadline passes, DeadlineReached when the
    clock passes `until` (time.monotonic), KeyboardInterrupt as soon as `abort` is set (a sub-agent's
    Ctrl-C: its thread gets no signal), and re-raise reader errors."""
    handoff: queue.Queue[Any] = queue.Queue()  # unbounded: the reader never blocks on an abandoned consumer

    def reader() -> None:
        try:
            for item in stream:
                handoff.put(item)
        except BaseException as e:  # handed to the caller's thread, which re-raises it
            handoff.put(_Failure(e))
            return
        handoff.put(_END)

    threading.Thread(target=reader, name="vllm-bot-stream", daemon=True).start()
    first = True
    while True:
        timeout = first_timeout if first else idle_timeout
        left = None if until is None else until - time.monotonic()
        wait = timeout if left is None else max(0.0, min(timeout, left))
        try:
            item = _next(handoff, wait, abort)
        except queue.Empty:
            _close(stream)
            if left is not None and left < timeout:
                raise DeadlineReached() from None
            raise StreamStalled(timeout, first) from None
        except KeyboardInterrupt:
            _close(stream)
            raise
        if item is _END:
            return
        if isinstance(item, _Failure):
            raise item.error
        if until is not None and time.monotonic() >= until:
            _close(stream)
            raise DeadlineReached()
        first = False
        yield item


ABORT_POLL = 0.2  # seconds between looks at `abort` while waiting for the next chunk


def _next(handoff: queue.Queue[Any], wait: float, abort: threading.Event | None) -> Any:
    """The next item within `wait` seconds (queue.Empty after), or KeyboardInterrupt once `abort` is set."""
    if abort is None:
        return handoff.get(timeout=wait)
    end = time.monotonic() + wait
    while True:
        if abort.is_set():  # a stream that never pauses is stopped between its chunks too
            raise KeyboardInterrupt
        try:
            return handoff.get(timeout=max(0.0, min(ABORT_POLL, end - time.monotonic())))
        except queue.Empty:
            if time.monotonic() >= end:
                raise


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a half-read response from another thread may fail; it is abandoned
            pass
