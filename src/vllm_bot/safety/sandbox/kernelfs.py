"""Kernel interfaces inside the sandbox: nothing host-global stays writable, root or not.

bubblewrap mounts a fresh /proc for the sandbox's PID namespace, and it is writable: as root (uid 0
maps to host uid 0) `/proc/sys/kernel/core_pattern`, `/proc/sysrq-trigger`, `/proc/sys/vm/*` and the
like would change the host (a core_pattern pipe runs a program as root outside every namespace).
bubblewrap covers `/proc/sys` only when the directory itself looks writable, which it never does, so
every top-level entry of /proc that is not a process (directories, and files with a write bit) is
bound read-only over itself. /sys and the cgroup file systems are read-only with the rest of `/`.
/dev is bubblewrap's own small tmpfs: remounted read-only (its device nodes still work), with a
size-limited /dev/shm.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

PROC = Path("/proc")
PER_PROCESS = frozenset({"self", "thread-self"})  # symlinks to the caller's own entries
RUN_SIZE = 16 << 20  # /run inside the sandbox is empty; enough for a few sockets and pid files


@functools.lru_cache(maxsize=1)
def proc_entries() -> tuple[str, ...]:
    """Top-level /proc entries to cover: not a process, not a symlink, a directory or writable."""
    found = []
    try:
        entries = list(os.scandir(PROC))
    except OSError:
        return ()
    for entry in entries:
        if entry.name.isdigit() or entry.name in PER_PROCESS:
            continue
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and mode & 0o222):
            found.append(entry.name)
    return tuple(sorted(found))


def proc_args() -> list[str]:
    """A fresh /proc with every host-global entry read-only."""
    args = ["--proc", "/proc"]
    for name in proc_entries():
        path = f"/proc/{name}"
        args += ["--ro-bind-try", path, path]
    return args


def dev_args(shm_size: int) -> list[str]:
    """bubblewrap's /dev, read-only, with a private /dev/shm of `shm_size` bytes (0: tmpfs default)."""
    size = ["--size", str(shm_size)] if shm_size else []
    return ["--dev", "/dev", "--remount-ro", "/dev", "--perms", "1777", *size, "--tmpfs", "/dev/shm"]


def run_args(var_run: bool) -> list[str]:
    """Empty, small /run (and /var/run when it is a real directory): service sockets stay outside."""
    args = ["--size", str(RUN_SIZE), "--tmpfs", "/run"]
    if var_run:
        args += ["--size", str(RUN_SIZE), "--tmpfs", "/var/run"]
    return args
