"""What the model is told when a command ran into a limit of the sandbox: which limit, and what to do.

Certain when the kernel says so (a cgroup's events, SIGXCPU, SIGXFSZ); otherwise read from the
messages programs print when a limit refuses them (fork failing with EAGAIN, ENOMEM, EFBIG, EMFILE,
a read-only `.git`), and then worded as "probably".
"""

from __future__ import annotations

import re
import signal
from typing import Protocol

CONFIG = "config.json"
FORK_REFUSED = re.compile(
    r"fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't start new thread|"
    r"BlockingIOError: \[Errno 11\]|pthread_create failed|Resource temporarily unavailable.*(fork|thread)",
    re.IGNORECASE,
)
OUT_OF_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|memory exhausted|out of memory|"
    r"failed to allocate|Allocation failed|\[Errno 12\]",
    re.IGNORECASE,
)
TOO_LARGE = re.compile(r"File too large|File size limit exceeded|\[Errno 27\]", re.IGNORECASE)
CPU = re.compile(r"CPU time limit exceeded", re.IGNORECASE)
TOO_MANY_FILES = re.compile(r"Too many open files|\[Errno 24\]", re.IGNORECASE)
GIT_READ_ONLY = re.compile(r"\.git\b.*Read-only file system|Read-only file system.*\.git\b", re.IGNORECASE)


class LimitValues(Protocol):
    @property
    def memory(self) -> int: ...
    @property
    def processes(self) -> int: ...
    @property
    def file_size(self) -> int: ...
    @property
    def cpu_seconds(self) -> int: ...
    @property
    def open_files(self) -> int: ...


def killed_by(returncode: int | None, sig: int) -> bool:
    """Whether the command (or bubblewrap's child, reported as 128+N) ended by signal `sig`."""
    return returncode in (-sig, 128 + sig)


def explain(
    limits: LimitValues, returncode: int | None, output: str, events: dict[str, int], *, git_writable: bool
) -> list[str]:
    """Notes for the model, one per limit the command ran into (empty when none)."""
    notes = []
    # The shell's own reports of a refused fork or a signal are specific; other words only count when
    # the command failed (a succeeding test may well print "MemoryError").
    failed = output if returncode != 0 else ""
    if events.get("pids") or (limits.processes and FORK_REFUSED.search(output)):
        sure = "" if events.get("pids") else "probably "
        notes.append(
            f"the command {sure}reached the limit of {limits.processes} processes and threads "
            "(sandbox.max_processes), so starting more failed. Run fewer things at once (e.g. `-j2`, "
            f"fewer workers), or ask the user to raise sandbox.max_processes in {CONFIG}"
        )
    if events.get("oom_kill") or (limits.memory and OUT_OF_MEMORY.search(failed)):
        what = "was killed by" if events.get("oom_kill") else "probably ran into"
        notes.append(
            f"the command {what} the memory limit of {_mb(limits.memory)} (sandbox.max_memory_mb). Use less "
            "memory (smaller inputs, fewer parallel jobs), or ask the user to raise sandbox.max_memory_mb"
        )
    if limits.cpu_seconds and (killed_by(returncode, signal.SIGXCPU) or CPU.search(output)):
        notes.append(
            f"a process used up its {limits.cpu_seconds} s of CPU time (sandbox.max_cpu_seconds) and was "
            "stopped. Make it do less, or ask the user to raise sandbox.max_cpu_seconds"
        )
    if limits.file_size and (killed_by(returncode, signal.SIGXFSZ) or TOO_LARGE.search(failed)):
        notes.append(
            f"a file reached the size limit of {_mb(limits.file_size)} (sandbox.max_file_size_mb), so "
            "writing more failed. Write less (or compress), or ask the user to raise sandbox.max_file_size_mb"
        )
    if limits.open_files and TOO_MANY_FILES.search(failed):
        notes.append(
            f"a process probably reached the limit of {limits.open_files} open files "
            "(sandbox.max_open_files). Close files you do not need, or ask the user to raise it"
        )
    if not git_writable and GIT_READ_ONLY.search(failed):
        notes.append(
            "the repository's .git is read-only inside the sandbox, so commands cannot commit, "
            "change branches or refs, or edit git config. Leave committing to the user (or "
            "git.auto_commit); the user can set sandbox.git_writable to let commands write .git"
        )
    return notes


def _mb(size: int) -> str:
    return f"{size // (1 << 20)} MB"
