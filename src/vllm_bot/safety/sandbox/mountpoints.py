"""The empty mount points the sandbox makes in writable trees (the stand-in `.git` of a workspace
without a repository, a protected file that does not exist yet), and their removal.

Removing a mount point lifts its mount in every sandbox mounted on it, and several sessions may
share a workspace. So every mount point a session uses, whether it made it or found it made by
another session (borrowed), is noted in `.vllm-bot/mount-points/<pid>-<session>` with the file it is (device
and inode), under a lock (`.lock` there) held while a sandbox's mounts are computed and while mount
points are removed. One is removed only when no other live session notes it, and only if it is
still the empty file or directory that was noted, in the directory it was made in (opened, then
checked to be that directory: a parent swapped for a symlink since cannot redirect the removal
outside). The last session out removes it; the first session of a workspace removes what sessions
that were killed noted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from vllm_bot.config.statedir import is_stand_in, workspace_state_dir

MOUNT_NOTES = "mount-points"  # in the workspace's state dir: one file per session, `<pid>-<token>`
Identity = tuple[int, int]  # (device, inode)


class MountPoints:
    """The mount points one session made (`created`, removed after each command) or uses."""

    def __init__(self, workspace: Path):
        self.workspace = workspace
        self.created: list[Path] = []
        self._noted: dict[Path, Identity] = {}
        self._swept = False
        self._name = f"{os.getpid()}-{secrets.token_hex(4)}"  # sessions of one process are apart too

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the workspace's mount-point lock (the first time, remove what killed sessions left)."""
        notes = self._notes()
        notes.mkdir(parents=True, exist_ok=True)
        fd = os.open(notes / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not self._swept:
                self._sweep()
                self._swept = True
            yield
        finally:
            os.close(fd)  # releases the lock

    def make(self, path: Path, kind: str) -> None:
        """Create an empty mount point (under the lock); OSError when something is there already."""
        if kind == "dir":
            path.mkdir()
        else:
            path.touch(exist_ok=False)
        self.created.append(path)
        self._note(path)

    def borrow(self, path: Path) -> None:
        """Note `path`, which this session mounts on, if another live session made it (under the
        lock): that session then leaves it in place while this one uses it. A path nobody noted is
        the user's own, never removed."""
        if path not in self._noted and _empty(path) and path in self._others():
            self._note(path)

    def release(self) -> None:
        """Remove the mount points made for the last command, unless another session uses them."""
        if not self.created:
            return
        with self.locked():
            others = self._others()
            removed = [path for path in reversed(self.created) if path not in others]
            for path in removed:
                self._remove(path)
            self.created.clear()
            if removed:
                self._write()

    def close(self) -> None:
        """Remove every mount point this session used that no other session uses, and the note."""
        if not self._noted and not self.created:
            return
        with self.locked():
            others = self._others()
            for path in reversed(list(self._noted)):
                if path not in others:
                    self._remove(path)
            self.created.clear()
            with contextlib.suppress(OSError):
                self._note_file().unlink()

    # -- pieces ------------------------------------------------------------------------------
    def _note(self, path: Path) -> None:
        try:
            st = os.lstat(path)
        except OSError:
            return
        self._noted[path] = (st.st_dev, st.st_ino)
        self._write()

    def _remove(self, path: Path) -> None:
        identity = self._noted.pop(path, None)
        if identity is not None:
            remove_if_unchanged(path, identity)

    def _write(self) -> None:
        """Replace the note whole (no fsync: it must survive the agent being killed, which the page
        cache does; after a power cut a lost note leaves at most an empty `.git`, no repository)."""
        note = self._note_file()
        tmp = note.with_name(f".{note.name}.tmp")
        tmp.write_text("".join(f"{dev} {ino} {path}\n" for path, (dev, ino) in self._noted.items()))
        os.replace(tmp, note)

    def _others(self) -> set[Path]:
        """The mount points other live sessions note (read once per decision, under the lock)."""
        notes = read_notes(self._notes())
        return {path for name, noted in notes if name != self._name and _alive(name) for path in noted}

    def _sweep(self) -> None:
        notes = read_notes(self._notes())
        live = [noted for name, noted in notes if _alive(name)]
        for name, noted in notes:
            if _alive(name):
                continue
            for path, identity in noted.items():
                if not any(path in other for other in live):
                    remove_if_unchanged(path, identity)
            with contextlib.suppress(OSError):
                (self._notes() / name).unlink()

    def _notes(self) -> Path:
        return workspace_state_dir(self.workspace, create=False) / MOUNT_NOTES

    def _note_file(self) -> Path:
        return self._notes() / self._name


def read_notes(notes: Path) -> list[tuple[str, dict[Path, Identity]]]:
    """(name, {path: identity}) of every session's note in `notes` (named `<pid>-<token>`)."""
    found = []
    for note in notes.glob("*"):
        if not note.name.split("-", 1)[0].isdigit():
            continue
        noted: dict[Path, Identity] = {}
        with contextlib.suppress(OSError, ValueError):
            for line in note.read_text(encoding="utf-8").splitlines():
                dev, ino, path = line.split(" ", 2)
                noted[Path(path)] = (int(dev), int(ino))
        found.append((note.name, noted))
    return found


def remove_if_unchanged(path: Path, identity: Identity) -> None:
    """Remove `path` if it is still the empty directory or file `identity` names, in the directory
    it was made in; never through a symlink, never anything else."""
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        if os.readlink(f"/proc/self/fd/{parent}") != str(path.parent):
            return  # a directory on the way was swapped for a symlink (or moved)
        st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        if (st.st_dev, st.st_ino) != identity:
            return
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(path.name, dir_fd=parent)
        elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(path.name, dir_fd=parent)
    except OSError:
        pass  # gone, or not empty any more (the user filled it meanwhile): keep it
    finally:
        os.close(parent)


def _empty(path: Path) -> bool:
    """An empty directory or an empty regular file (what a mount point is made as)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return is_stand_in(path)  # the same test: an empty directory, not a symlink to one
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


def _alive(name: str) -> bool:
    """Whether the process that wrote the note `name` still runs."""
    return Path(f"/proc/{name.split('-', 1)[0]}").exists()
