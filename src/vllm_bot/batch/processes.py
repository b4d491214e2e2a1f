"""The processes a batch starts: each task's agent (`vllm-bot -p`), and its setup and check commands.

Every one is registered while it runs, so a timeout stops one and Ctrl-C stops them all: SIGINT first
(the agent then ends its task cleanly and kills its own commands), SIGKILL after a grace period.
Setup and check commands run in their own process group, so a stop reaches their children too. Every
child dies with the batch (Linux's parent-death signal): a batch killed hard (`kill -9`, the OOM
killer) leaves no agent running on, nor one that would redo a task the resumed batch runs too.
"""

from __future__ import annotations

import ctypes
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
PR_SET_PDEATHSIG = 1


def die_with_us() -> Callable[[], None] | None:
    """A `preexec_fn` that has the child killed when this process dies (None where Linux's prctl is
    missing). The signal follows the thread that started the child: a worker thread outlives its
    children, since it waits for each one."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork, not in the child
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the batch died between fork and prctl: nobody would kill us
            os._exit(137)

    return preexec


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
            proc = subprocess.Popen(  # type: ignore[call-overload]
                argv, start_new_session=group, preexec_fn=die_with_us(), **kw
            )
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
