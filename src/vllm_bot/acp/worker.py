"""The main thread's side of `vllm-bot acp`: the agent's work runs here, one job at a time.

The protocol (asyncio, the SDK) runs in a thread of its own and hands the main thread jobs: building a
session, a prompt, a model switch. Sessions run on the main thread because that is where Ctrl-C
reaches them: `session/cancel` sends this thread SIGINT, and the running task takes exactly the path a
Ctrl-C in the terminal takes (`agent.interrupts.Cancel.on_sigint`): a running command is stopped, a
streaming reply is cut and kept, an open permission question is withdrawn.
"""

from __future__ import annotations

import concurrent.futures
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import UserFacingError

T = TypeVar("T")


class Worker:
    """Runs submitted jobs on the thread that calls `serve()` (the main thread), in order."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None] = (
            queue.Queue()
        )
        self._lock = threading.Lock()
        self._cancel: Any = None  # the running task's agent.interrupts.Cancel, while one runs
        self._owner: object = None  # whose task it is (an ACP session)
        self._sent = False  # a SIGINT of ours not handled yet
        self._thread_id = threading.get_ident()

    def submit(self, job: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Run `job` on the worker thread (from any thread); its future has the result or exception."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((job, future))
        return future

    def stop(self) -> None:
        """`serve()` returns once the jobs before this one are done (from any thread)."""
        self._jobs.put(None)

    def serve(self) -> None:
        """Run jobs until `stop()`; SIGINT goes to the running task (a real Ctrl-C between tasks
        raises KeyboardInterrupt: the agent stops)."""
        self._thread_id = threading.get_ident()
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            while (item := self._jobs.get()) is not None:
                job, future = item
                if future.set_running_or_notify_cancel():
                    self._run(job, future)
        finally:
            signal.signal(signal.SIGINT, previous)

    def _run(self, job: Callable[[], Any], future: concurrent.futures.Future[Any]) -> None:
        try:
            result = job()
        except Exception as e:  # the protocol thread turns it into an error reply
            future.set_exception(e)
        except KeyboardInterrupt:  # a real Ctrl-C outside a task: the reply says so, and we stop
            future.set_exception(UserFacingError("interrupted"))
            raise
        else:
            future.set_result(result)

    @contextmanager
    def task(self, owner: object, cancel: Any) -> Iterator[None]:
        """While the block runs, `interrupt(owner)` and SIGINT reach `cancel` (an agent's Cancel)."""
        with self._lock:
            self._cancel, self._owner = cancel, owner
        try:
            yield
        finally:
            self._cancel = self._owner = None  # plain stores: a late signal must not find a lock held

    def interrupt(self, owner: object) -> bool:
        """Ctrl-C for `owner`'s running task (from any thread); False when it has none running."""
        with self._lock:
            if self._owner is not owner or self._owner is None:
                return False
            self._sent = True
            signal.pthread_kill(self._thread_id, signal.SIGINT)
            return True

    def _on_sigint(self, signum: int, frame: Any) -> None:
        ours, self._sent = self._sent, False
        cancel = self._cancel
        if cancel is not None:
            cancel.on_sigint(signum, frame)  # the terminal's Ctrl-C path: stop the command, or raise
        elif not ours:
            raise KeyboardInterrupt  # Ctrl-C while idle: stop serving
        # else: our signal for a task that had just ended: nothing left to stop
