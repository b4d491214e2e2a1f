"""File access for the tools: open only regular files, create directories and write atomically.

Everything after the path check works relative to an opened, re-checked directory descriptor with
O_NOFOLLOW, so a component swapped for a symlink between the check and the use cannot redirect the
operation. A write goes to a temp file in the target's directory (named `.NAME.vllm-bot-tmp.PID.RAND`
so leftovers from a crash are recognisable), is fsynced, renamed over the target and the directory
is fsynced: a crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from .errors import ToolError
from .seen import identity

TEMP_MARK = ".vllm-bot-tmp."
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

CheckFd = Callable[[int], None]


class StaleFileError(Exception):
    """The target changed on disk between reading it and replacing it."""


def open_regular(path: Path, shown: str, check_fd: CheckFd) -> tuple[int, os.stat_result]:
    """An fd for reading the regular file at `path` (a real path); refuses FIFOs, devices, sockets."""
    # O_NONBLOCK: opening a FIFO must not hang waiting for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        check_fd(fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ToolError(
                f"{shown} is not a regular file ({_kind(st.st_mode)}); the file tools only handle files."
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_all(path: Path, shown: str, check_fd: CheckFd) -> tuple[bytes, os.stat_result]:
    fd, st = open_regular(path, shown, check_fd)
    with os.fdopen(fd, "rb") as f:
        return f.read(), st


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def make_dirs(directory: Path, check_fd: CheckFd) -> list[Path]:
    """Create the missing components of `directory` (a real path) one by one without following links.
    Returns the directories created."""
    missing: list[str] = []
    base = directory
    while not base.exists():
        missing.append(base.name)
        base = base.parent
    created: list[Path] = []
    fd = os.open(base, _DIR_FLAGS)
    try:
        check_fd(fd)
        for name in reversed(missing):
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
            except FileExistsError:
                pass  # made concurrently; the O_NOFOLLOW open below still decides
            else:
                created.append(base / name)
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            base = base / name
            check_fd(fd)
    finally:
        os.close(fd)
    return created


def atomic_write(
    path: Path, data: bytes, check_fd: CheckFd, *, expect: os.stat_result | None = None
) -> os.stat_result | None:
    """Replace (or create) the file at real path `path` with `data`, keeping the old file's mode bits.
    With `expect`, raise StaleFileError if the file is no longer the one stat'ed then.
    Returns the stat of the file that was replaced (None when it was created)."""
    dfd = os.open(path.parent, _DIR_FLAGS)
    try:
        check_fd(dfd)
        old = _lstat_at(dfd, path.name)
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        _check_unchanged(old, expect)
        remove_stale_temps(dfd, path.name)
        tmp = _write_temp(dfd, path.name, data, old)
        try:
            _check_unchanged(_lstat_at(dfd, path.name), expect)
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            _unlink_quietly(tmp, dfd)
            raise
        os.fsync(dfd)
        return old
    finally:
        os.close(dfd)


def _write_temp(dfd: int, name: str, data: bytes, old: os.stat_result | None) -> str:
    tmp = f".{name[:180]}{TEMP_MARK}{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
        if old is not None and stat.S_ISREG(old.st_mode):
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
            if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fd, old.st_uid, old.st_gid)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp, dfd)
        raise
    os.close(fd)
    return tmp


def _lstat_at(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _check_unchanged(now: os.stat_result | None, expect: os.stat_result | None) -> None:
    if expect is None:
        return
    if now is None or identity(now) != identity(expect):
        raise StaleFileError


def _unlink_quietly(name: str, dfd: int) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass


def remove_stale_temps(directory: int | Path, name: str = "") -> list[str]:
    """Delete temp files left by writers that died (their pid is gone); `name` limits it to one target.
    Returns the names removed."""
    prefix = f".{name[:180]}" if name else "."
    dfd = directory if isinstance(directory, int) else os.open(directory, _DIR_FLAGS)
    removed: list[str] = []
    try:
        with os.scandir(dfd) as entries:
            names = [e.name for e in entries if e.name.startswith(prefix) and TEMP_MARK in e.name]
        for entry in names:
            if _writer_gone(entry):
                _unlink_quietly(entry, dfd)
                removed.append(entry)
    finally:
        if not isinstance(directory, int):
            os.close(dfd)
    return removed


def _writer_gone(temp_name: str) -> bool:
    pid_text = temp_name.rsplit(TEMP_MARK, 1)[1].split(".", 1)[0]
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False  # a write of ours in another thread may be in flight
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
