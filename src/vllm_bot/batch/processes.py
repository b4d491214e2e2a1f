"""The processes a batch starts: each task's agent (`vllm-bot -p`), and its setup and check commands.

Every one is registered while it runs, so a timeout stops one and Ctrl-C stops them all: SIGINT first
(the agent then ends its task cleanly and kills its own commands), SIGKILL after a grace period.
Setup and check commands run in their own process group, so a stop reaches their children too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .tally import Tally

GRACE = 5.0  # seconds from SIGINT to SIGKILL


@dataclass
class Exit:
    returncode: int | None  # None: it was stopped before it ended on its own
    timed_out: bool = False


class Processes:
    """The running children; `stop_all()` ends every one and refuses new ones."""

    def __init__(self, grace: float = GRACE) -> None:
        self.grace = grace
        self.stopping = threading.Event()
        self._running: dict[subprocess.Popen[bytes], bool] = {}  # process -> started in its own group
        self._lock = threading.Lock()

    def start(self, argv: list[str], *, group: bool, **kw: object) -> subprocess.Popen[bytes]:
        with self._lock:
            if self.stopping.is_set():
                raise Stopped()
            proc = subprocess.Popen(argv, start_new_session=group, **kw)  # type: ignore[call-overload]
            self._running[proc] = group
            return proc  # type: ignore[no-any-return]

    def done(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.pop(proc, None)

    def stop(self, proc: subprocess.Popen[bytes], group: bool) -> None:
        """SIGINT, then SIGKILL after the grace period (the process group, for a shell command)."""
        for sig in (signal.SIGINT, signal.SIGKILL):
            if proc.poll() is not None:
                return
            try:
                os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(self.grace if sig == signal.SIGINT else 10)
            except subprocess.TimeoutExpired:
                continue

    def stop_all(self) -> None:
        self.stopping.set()
        with self._lock:
            running = list(self._running.items())
        threads = [threading.Thread(target=self.stop, args=item, daemon=True) for item in running]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


class Stopped(Exception):
    """The batch is stopping: this task does not start (or finish) its next step."""


def run_shell(
    procs: Processes,
    command: str,
    cwd: Path,
    log: Path,
    timeout: float,
    wrap: Callable[[list[str]], list[str]] | None = None,
    env: dict[str, str] | None = None,
) -> Exit:
    """`bash -c command` in `cwd` (wrapped by `wrap`: the sandbox), output to `log`; stopped (with its
    children) after `timeout` s."""
    argv = ["bash", "-c", command]
    with log.open("wb") as out:
        proc = procs.start(
            wrap(argv) if wrap is not None else argv,
            group=True,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            return Exit(proc.wait(timeout))
        except subprocess.TimeoutExpired:
            procs.stop(proc, group=True)
            out.write(f"\n[vllm-bot batch: stopped after {timeout:g} s]\n".encode())
            return Exit(None, timed_out=True)
        finally:
            procs.done(proc)


def run_agent(
    procs: Processes,
    argv: list[str],
    *,
    task: str,
    env: dict[str, str],
    cwd: Path,
    events: Path,
    log: Path,
    tally: Tally,
    timeout: float,
) -> Exit:
    """Run the agent on `task` (given on stdin), tallying and saving its events; stopped after `timeout`."""
    with events.open("wb") as saved, log.open("wb") as err:
        proc = procs.start(
            argv, group=False, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
        )
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            procs.stop(proc, group=False)

        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            _feed(proc.stdin, task)
            assert proc.stdout is not None
            for line in proc.stdout:
                saved.write(line)
                tally.feed(line)
            code = proc.wait()
        finally:
            timer.cancel()
            procs.done(proc)
    if expired.is_set():
        return Exit(None, timed_out=True)
    return Exit(None if procs.stopping.is_set() else code)


def _feed(stdin: IO[bytes] | None, text: str) -> None:
    if stdin is None:
        return
    try:
        stdin.write(text.encode())
        stdin.close()
    except BrokenPipeError:  # the child died at start; its exit code says why
        pass
