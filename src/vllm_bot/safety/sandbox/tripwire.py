"""Protected files the sandbox cannot mask, checked after every command.

`.git/commondir` tells git where the repository's config and hooks live. A missing one cannot be
masked with an empty read-only file (git refuses to run with an empty commondir), so instead its
state is recorded when the session starts and, after each command, any change is undone and
reported: a command must not point the user's git (or ours) at a config and hooks it wrote itself.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from vllm_bot.safety.sandbox.paths import git_dirs

WATCHED = ("commondir",)

State = tuple[str, bytes] | None  # ("file", content) | ("link", target) | ("dir", b"") | absent


def _state(path: Path) -> State:
    try:
        if path.is_symlink():
            return ("link", os.readlink(path).encode())
        if path.is_dir():
            return ("dir", b"")
        if path.is_file():
            return ("file", path.read_bytes())
    except OSError:
        return None
    return None


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class Tripwire:
    def __init__(self, paths: list[Path]) -> None:
        self.saved = {path: _state(path) for path in paths}

    @classmethod
    def for_workspace(cls, workspace: Path) -> Tripwire:
        return cls([git_dir / name for git_dir in git_dirs(workspace.resolve()) for name in WATCHED])

    def check(self) -> list[str]:
        """Undo changes to the watched paths; one note per path that had changed."""
        notes = []
        for path, before in self.saved.items():
            if _state(path) == before:
                continue
            _remove(path)
            if before is not None and before[0] == "file":
                path.write_bytes(before[1])
            elif before is not None and before[0] == "link":
                os.symlink(before[1].decode(), path)
            elif before is not None:
                path.mkdir()
            notes.append(f"the command changed the protected {path.name} in {path.parent}; it was put back")
        return notes
