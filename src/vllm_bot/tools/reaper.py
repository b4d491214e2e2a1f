"""Finding and killing every process an exec started, including ones that daemonized.

A run is tagged with a unique marker in its environment. Its processes are: the shell's session and
process group, every process whose environment carries the marker (setsid, nohup and double-forked
children inherit it), and all their descendants. The agent makes itself a child subreaper (Linux
prctl) so orphans are re-parented to it rather than to init, and reaps the ones it kills. A child
started with `env -i` *and* `setsid` escapes all three tests; the sandbox's PID namespace covers it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36
MARKER_VAR = "VLLM_BOT_EXEC_ID"
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (best effort; once per process)."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                _subreaper = False
    return _subreaper


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgrp: int
    sid: int
    state: str


def scan() -> dict[int, ProcInfo]:
    """All processes visible in /proc (empty where there is no /proc)."""
    procs: dict[int, ProcInfo] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return procs
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) >= 4:
            pid = int(name)
            procs[pid] = ProcInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0])
    return procs


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read()
    except OSError:
        return False


def find_tree(leader: int, marker: str) -> tuple[set[int], set[int]]:
    """(live, zombie) pids belonging to the run whose shell was `leader` (its session and group id)."""
    procs = scan()
    me = os.getpid()
    tag = f"{MARKER_VAR}={marker}\0".encode()
    members = {p.pid for p in procs.values() if leader in (p.sid, p.pgrp)}
    members |= {pid for pid, p in procs.items() if p.state != "Z" and _has_marker(pid, tag)}
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    stack = [leader, *members]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in members:
                members.add(child)
                stack.append(child)
    members.discard(me)
    live = {pid for pid in members if pid in procs and procs[pid].state not in ("Z", "X")}
    return live, members - live


def exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the shell has exited, without reaping it (WNOWAIT keeps its pid reserved)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return proc.poll() is not None


def left_nothing(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the exited shell `proc` can have left no process behind, known without scanning /proc:
    we are the subreaper of its orphans (so every process it left re-parents to us or hangs below one
    that did) and we have no child but the shell. False when unsure: no subreaper, no children lists
    in /proc, or another child of ours (an MCP server, a concurrent command, a leftover)."""
    if not _subreaper:
        return False
    try:
        tasks = os.listdir("/proc/self/task")
        for tid in tasks:
            with open(f"/proc/self/task/{tid}/children", "rb") as f:
                if any(int(pid) != proc.pid for pid in f.read().split()):
                    return False
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN, or a thread that just ended
        return False
    return True


def kill_tree(proc: subprocess.Popen[bytes], marker: str, grace: float) -> set[int]:
    """SIGTERM everything of the run, SIGKILL what is left after `grace` seconds; reap what we can.
    The shell itself must not have been reaped yet (see `exited`); the caller reaps it afterwards.
    Returns the pids that were signalled (empty when nothing was left)."""
    sweep = _Sweep(proc, marker)
    live = sweep.signal(signal.SIGTERM)
    if live:
        sweep.signal(signal.SIGCONT)  # stopped processes must see the TERM
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        time.sleep(0.02)
        sweep.reap()
        live = sweep.scan()
    for _ in range(20):  # repeated: a fork loop may add processes between the scan and the kill
        if not live:
            break
        sweep.signal(signal.SIGKILL)
        time.sleep(0.01)
        sweep.reap()
        live = sweep.scan()
    sweep.scan()
    sweep.reap()
    return sweep.signalled


class _Sweep:
    """The processes of one run as seen across repeated scans."""

    def __init__(self, proc: subprocess.Popen[bytes], marker: str):
        self.proc, self.marker = proc, marker
        self.signalled: set[int] = set()
        self.seen: set[int] = set()  # live or zombie members; zombies re-parent to us when their parent dies

    def scan(self) -> set[int]:
        live, zombies = find_tree(self.proc.pid, self.marker)
        self.seen |= live | zombies
        return live

    def signal(self, sig: int) -> set[int]:
        live = self.scan()
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in live:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                continue
        self.signalled |= live
        return live

    def reap(self) -> None:
        """Collect exit statuses of members re-parented to us. Never the shell's: until the caller reaps
        it, its pid (the run's session and group id) cannot be reused by an unrelated process."""
        for pid in self.seen - {self.proc.pid}:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
