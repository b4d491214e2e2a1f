"""The next exec command's launcher, started while the model thinks.

Moving a new process into a cgroup waits for an RCU grace period in the kernel, 8-15 ms whenever
no migration happened just before; in a real session commands are seconds apart, so every command
paid it. So after a command ends, a thread removes its cgroup (which can wait for its last
processes to leave), makes the next command's cgroup (CommandLimits.prepare) and starts its
launcher (limits.standby_launcher), which joins the cgroup and then waits on stdin. Sandboxed, it
starts the whole sandbox ahead where it can (Sandbox.wrap_ahead): bubblewrap's own start, its
namespaces and mounts, is most of what is left of a command that exits at once. When the next
command comes, `take` sends it the rest of the argv that the command would have been
started with and hands that process over as the command's shell: the same cwd, environment (the
run's marker is exported by the launcher), session, pipes, limits and sandbox as a fresh start.

Anything that does not match (the environment changed, the sandbox's mounts or a file it mounts
changed, the sandbox was switched, the launcher died) kills the standby and the command starts
fresh; at most one standby exists, and `close` kills it. One thread starts every standby of a
session and lives until `close`: bubblewrap's --die-with-parent holds the thread that started it
as its parent, and a thread that ended would take the sandbox with it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from ..safety.sandbox.limits import Ahead, CommandLimits, Launch, standby_launcher

__all__ = ["Standby"]

Spawn = Callable[[list[str], Mapping[str, str], bool], subprocess.Popen[bytes]]
Confine = Callable[[Launch], Ahead | None]


class Standby:
    """At most one launcher waiting for the next command; `spawn(argv, env, standby)` starts one,
    `confine(launch)` (when given) the sandbox to start it in."""

    def __init__(self, limits: CommandLimits, spawn: Spawn, confine: Confine | None = None):
        self.limits = limits
        self.spawn = spawn
        self.confine = confine
        self._worker: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[dict[str, str] | None] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ahead = Ahead([])
        self._env: dict[str, str] = {}

    @property
    def pid(self) -> int | None:
        """The waiting launcher's pid (None: none is waiting, or it is still starting)."""
        return self._proc.pid if self._proc is not None else None

    def start(self, env: Mapping[str, str]) -> None:
        """Start the next command's launcher in the background (`env`: the command environment
        without the run's marker)."""
        self.settle()
        if self._proc is not None:
            return
        if self._worker is None:
            self._worker = threading.Thread(target=self._serve, name="exec-standby", daemon=True)
            self._worker.start()
        self._idle.clear()
        self._jobs.put(dict(env))

    def _serve(self) -> None:
        while (env := self._jobs.get()) is not None:
            try:
                self._start(env)
            except Exception:  # the worker must live on: the command starts fresh and meets it there
                pass
            finally:
                self._idle.set()

    def _start(self, env: dict[str, str]) -> None:
        self.limits.sweep()  # the last command's cgroup, left by finish(later=True)
        launch = self.limits.prepare()
        if launch is None:
            return  # no cgroup to join: nothing slow to do ahead
        ahead = (self.confine(launch) if self.confine else None) or Ahead(standby_launcher(launch.join))
        with contextlib.suppress(OSError, ValueError):
            self._proc = self.spawn(ahead.argv, env, True)
            self._ahead, self._env = ahead, env

    def take(
        self, argv: Sequence[str], env: Mapping[str, str], exports: Sequence[str]
    ) -> subprocess.Popen[bytes] | None:
        """The waiting launcher, now running `argv` with `env` (+ `exports`, NAME=VALUE); None
        when there is none or it does not fit (then it is killed)."""
        self.settle()
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        head = self._ahead.head
        tail = list(argv[len(head) :])
        fits = list(argv[: len(head)]) == head and env == self._env and not any("\0" in a for a in tail)
        if fits and self._ahead.intact() and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(b"".join(os.fsencode(a) + b"\0" for a in [*exports, "--", *tail]))
                proc.stdin.close()
                return proc
            except OSError:
                pass
        _kill(proc)
        return None

    def close(self) -> None:
        self.settle()
        if self._proc is not None:
            _kill(self._proc)
            self._proc = None
        if self._worker is not None:
            self._jobs.put(None)
            self._worker.join()
            self._worker = None

    def settle(self) -> None:
        """Wait for a start still in progress (before the next command's cgroup is chosen)."""
        self._idle.wait()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
