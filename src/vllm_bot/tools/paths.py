"""Workspace confinement for the file tools: every path is decided on its resolved real path.

Containment is tested by path components (`Path.is_relative_to`), never by string prefix, so
`/ws-evil` is not inside `/ws`. Symlinks are resolved before the test (a link inside the workspace
pointing inside is followed to its target; a link pointing outside, even a dangling one, is refused).
The check is repeated on the opened file descriptor (`/proc/self/fd`) at the time of the operation,
so a path swapped for a symlink between the check and the use is caught.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..statedir import PROTECTED_NAMES
from .errors import ToolError


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, roots: Iterable[Path]) -> Path | None:
    for root in roots:
        if path == root or path.is_relative_to(root):
            return root
    return None


class Confinement:
    """The roots the file tools may touch (workspace + `tools.allowed_paths`) and what stays read-only."""

    def __init__(self, workspace: Path, allowed: Sequence[str] = (), protected: Sequence[Path] = ()):
        self.root = _real(workspace)
        self.allowed = [_real(self.root / os.path.expanduser(a)) for a in allowed]
        names = [self.root / n for n in PROTECTED_NAMES]
        self.protected = [_real(p) for p in [*names, *protected]]

    @property
    def roots(self) -> list[Path]:
        return [self.root, *self.allowed]

    def resolve(self, raw: str, *, write: bool = False) -> Path:
        """The real path `raw` names, or ToolError when it is outside the roots (or protected, for write)."""
        text = raw.strip()
        if not text:
            raise ToolError("path is empty. Give a file path relative to the workspace, e.g. 'src/main.py'.")
        if "\0" in text:
            raise ToolError("path contains a NUL byte. Give a plain file path relative to the workspace.")
        if text.startswith("~"):
            text = os.path.expanduser(text)
            if text.startswith("~"):
                raise ToolError(f"cannot expand '{raw}'. Give a path relative to the workspace.")
        candidate = self.root / text  # realpath, not normpath: `link/..` must go where the kernel goes
        real = _real(candidate)
        self.check(real, raw, write=write, via_link=real != Path(os.path.normpath(candidate)))
        return real

    def check(self, real: Path, raw: str, *, write: bool, via_link: bool = False) -> None:
        """Raise ToolError unless `real` (already resolved) may be read, or written when `write`."""
        if _within(real, self.roots) is None:
            raise ToolError(self._outside_message(raw, real, via_link))
        if write:
            blocked = _within(real, self.protected)
            if blocked is not None:
                raise ToolError(self._protected_message(raw, blocked))

    def check_fd(self, fd: int, raw: str, *, write: bool) -> None:
        """Re-check an open file or directory by the path the kernel reports for it (Linux /proc)."""
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return  # no /proc: the path check before opening stands alone
        target = target.removesuffix(" (deleted)")
        if target.startswith("/"):
            self.check(Path(target), raw, write=write, via_link=True)

    def display(self, path: str | os.PathLike[str]) -> str:
        """`path` relative to the workspace when inside it (what the model should type), else absolute."""
        p = Path(path)
        if p.is_absolute() and (p == self.root or p.is_relative_to(self.root)):
            return str(p.relative_to(self.root)) or "."
        return str(p)

    def _outside_message(self, raw: str, real: Path, via_link: bool) -> str:
        how = " through a symlink" if via_link else ""
        extra = ""
        if self.allowed:
            extra = (
                " or the extra roots allowed in tools.allowed_paths ("
                + ", ".join(map(str, self.allowed))
                + ")"
            )
        return (
            f"Refused: '{raw}' resolves{how} to {real}, which is outside the workspace {self.root}{extra}. "
            "The file tools only work inside the workspace: use a path relative to it, e.g. 'src/main.py'."
        )

    def _protected_message(self, raw: str, blocked: Path) -> str:
        name = self.display(blocked)
        if name.startswith(".git"):
            return (
                f"Refused: '{raw}' is inside {name}, which the file tools do not change. "
                "Use git commands through exec."
            )
        return f"Refused: '{raw}' is inside {name}/, the agent's own state, which the tools cannot change."
