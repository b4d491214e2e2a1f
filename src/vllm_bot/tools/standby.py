"""The next exec command's launcher, started while the model thinks.

Moving a new process into a cgroup waits for an RCU grace period in the kernel, 8-15 ms whenever
no migration happened just before; in a real session commands are seconds apart, so every command
paid it. So after a command ends, a thread removes its cgroup (which can wait for its last
processes to leave), makes the next command's cgroup (CommandLimits.prepare) and starts its
launcher (limits.standby_launcher), which joins the cgroup and then waits on stdin. When the next
command comes, `take` sends it the rest of the argv that the command would have been
started with and hands that process over as the command's shell: the same cwd, environment (the
run's marker is exported by the launcher), session, pipes and limits as a fresh start.

Anything that does not match (the environment changed, the sandbox was switched, the launcher died)
kills the standby and the command starts fresh; at most one standby exists, and `close` kills it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from ..safety.sandbox.limits import CommandLimits, launcher_head, standby_launcher

__all__ = ["Standby"]

Spawn = Callable[[list[str], Mapping[str, str], bool], subprocess.Popen[bytes]]


class Standby:
    """At most one launcher waiting for the next command; `spawn(argv, env, standby)` starts one."""

    def __init__(self, limits: CommandLimits, spawn: Spawn):
        self.limits = limits
        self.spawn = spawn
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._head: list[str] = []
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
        self._thread = threading.Thread(
            target=self._start, args=(dict(env),), name="exec-standby", daemon=True
        )
        self._thread.start()

    def _start(self, env: dict[str, str]) -> None:
        self.limits.sweep()  # the last command's cgroup, left by finish(later=True)
        join = self.limits.prepare()
        if not join:
            return  # no cgroup to join: nothing slow to do ahead
        with contextlib.suppress(OSError, ValueError):
            self._proc = self.spawn(standby_launcher(join), env, True)
            self._head, self._env = launcher_head(join), env

    def take(
        self, argv: Sequence[str], env: Mapping[str, str], exports: Sequence[str]
    ) -> subprocess.Popen[bytes] | None:
        """The waiting launcher, now running `argv` with `env` (+ `exports`, NAME=VALUE); None
        when there is none or it does not fit (then it is killed)."""
        self.settle()
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        head = self._head
        tail = list(argv[len(head) :])
        fits = list(argv[: len(head)]) == head and env == self._env and not any("\0" in a for a in tail)
        if fits and proc.poll() is None and proc.stdin is not None:
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

    def settle(self) -> None:
        """Wait for a start still in progress (before the next command's cgroup is chosen)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
