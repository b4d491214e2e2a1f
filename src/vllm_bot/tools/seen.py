"""What the model last saw of each file, so `write` cannot replace a file that changed behind its back.

The read tool records a file's identity (device, inode, size, mtime); write and edit record it again
with a hash of the bytes they wrote. Before write replaces an existing file it asks `changed()`: a
file the model saw and that has changed since (the user's editor, a formatter the model ran, another
program) is refused, because a whole-file write would silently discard those changes. A changed
stat with the same bytes (a `touch`) is not a change when the hash was recorded. Files the model
never read are not judged: the write preview and the checkpoints cover them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

HASH_LIMIT = 4 << 20  # files up to this size are compared by content when their stat differs


@dataclass(frozen=True)
class Seen:
    identity: tuple[int, int, int, int]
    digest: str | None = None


def identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileMemory:
    def __init__(self) -> None:
        self._seen: dict[Path, Seen] = {}

    def record(self, path: Path, st: os.stat_result, data: bytes | None = None) -> None:
        """The model now knows `path` as it is (`data`: its whole bytes, when at hand)."""
        hashed = digest(data) if data is not None and len(data) <= HASH_LIMIT else None
        self._seen[path] = Seen(identity(st), hashed)

    def record_written(self, path: Path, data: bytes) -> None:
        try:
            self.record(path, os.stat(path, follow_symlinks=False), data)
        except OSError:
            self._seen.pop(path, None)

    def changed(self, path: Path, st: os.stat_result, data: bytes) -> bool:
        """True when the model saw `path` and its current bytes `data` (stat `st`) are not that."""
        seen = self._seen.get(path)
        if seen is None or seen.identity == identity(st):
            return False
        return seen.digest is None or seen.digest != digest(data)
