"""One request to a server (a tool call, a resource read, a prompt), run on the manager's loop while
the session's thread waits for it: cancelled at the user's Ctrl-C, cut at the timeout unless the server
keeps reporting progress, with its progress handed back to the session's thread as lines to show.

Cancelling the request's scope makes the SDK send `notifications/cancelled`, so the server stops too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

POLL = 0.05  # seconds between looks at the cancel event and the progress queue
CANCEL_GRACE = 0.8  # at most this long for a cancellation to go out: the prompt is back within a second
LOOP_GRACE = 5.0  # seconds past the hard cap before we stop waiting for the loop thread itself

Work = Callable[[Callable[[float, float | None, str | None], Awaitable[None]]], Awaitable[Any]]


class Cancelled(Exception):
    """The user cancelled the request (Ctrl-C)."""


class TimedOut(Exception):
    """No answer within the timeout. `progressed`: it reported progress before going quiet;
    `capped`: it kept reporting progress until the hard cap."""

    def __init__(self, capped: bool, progressed: bool = False) -> None:
        super().__init__("timed out")
        self.capped = capped
        self.progressed = progressed or capped


@dataclass
class Request:
    """Shared by the session's thread (which waits) and the loop thread (which runs the work)."""

    timeout: float
    cap: float  # the longest it may run, however often it reports progress
    scope: Any = None
    cancelled: bool = False
    progressed: bool = False  # it reported progress at least once
    progress: queue.SimpleQueue[str] = field(default_factory=queue.SimpleQueue)

    def cancel(self) -> None:
        """Loop thread: cancel the work (at once, or as soon as it starts)."""
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()

    async def run(self, work: Work) -> Any:
        """`work(on_progress)` under a deadline each progress report moves `timeout` further, never
        past `cap`; raises Cancelled or TimedOut."""
        import anyio

        start = anyio.current_time()
        hard = start + max(self.cap, self.timeout)
        with anyio.CancelScope(deadline=start + self.timeout) as scope:
            self.scope = scope
            if self.cancelled:
                scope.cancel()

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                self.progressed = True
                scope.deadline = min(anyio.current_time() + self.timeout, hard)
                self.progress.put(progress_line(progress, total, message))

            return await work(on_progress)
        if self.cancelled:
            raise Cancelled()
        # Without progress the deadline may be the cap too (a timeout above max_call_time): not capped.
        raise TimedOut(capped=self.progressed and scope.deadline >= hard, progressed=self.progressed)


def wait_for(
    loop: asyncio.AbstractEventLoop,
    request: Request,
    work: Work,
    *,
    cancel: threading.Event | None = None,
    on_output: Callable[[str], None] | None = None,
) -> Any:
    """Run `work` on `loop` and wait on this thread; progress lines go to `on_output` from here.

    Raises Cancelled, TimedOut, or what the work raised. A KeyboardInterrupt cancels the request
    and propagates.
    """
    future = asyncio.run_coroutine_threadsafe(request.run(work), loop)
    deadline = time.monotonic() + max(request.cap, request.timeout) + LOOP_GRACE
    asked = False
    try:
        while True:
            try:
                return future.result(POLL)
            except concurrent.futures.TimeoutError:
                pass
            finally:
                _drain(request, on_output)
            if cancel is not None and cancel.is_set() and not asked:
                loop.call_soon_threadsafe(request.cancel)
                asked, deadline = True, min(deadline, time.monotonic() + CANCEL_GRACE)
            if time.monotonic() > deadline:
                loop.call_soon_threadsafe(request.cancel)
                raise Cancelled() if asked else TimedOut(request.progressed, request.progressed)
    except KeyboardInterrupt:
        loop.call_soon_threadsafe(request.cancel)
        raise


def _drain(request: Request, on_output: Callable[[str], None] | None) -> None:
    while True:
        try:
            line = request.progress.get_nowait()
        except queue.Empty:
            return
        if on_output is not None:
            on_output(line + "\n")


def progress_line(progress: float, total: float | None, message: str | None) -> str:
    """`progress 3/5 (60%): indexing` from one progress notification."""
    done = f"{progress:g}/{total:g} ({progress / total:.0%})" if total else f"{progress:g}"
    return f"progress {done}" + (f": {message.strip()}" if message and message.strip() else "")
