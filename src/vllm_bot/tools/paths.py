"""Workspace confinement for the file tools: every path is decided on its resolved real path.

Containment is tested by path components (`Path.is_relative_to`), never by string prefix, so
`/ws-evil` is not inside `/ws`. Symlinks are resolved before the test (a link inside the workspace
pointing inside is followed to its target; a link pointing outside, even a dangling one, is refused).
The check is repeated on the opened file descriptor (`/proc/self/fd`) at the time of the operation,
so a path swapped for a symlink between the check and the use is caught.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.trust import record_agent_write
from ..safety.boundary import Boundary, Rule
from .errors import ToolError


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


class Confinement:
    """The file tools' side of the session's boundary: which paths they may read and write."""

    def __init__(self, boundary: Boundary):
        self.boundary = boundary
        self.root = boundary.workspace

    @property
    def roots(self) -> list[Path]:
        return list(self.boundary.roots)

    def resolve(self, raw: str, *, write: bool = False) -> Path:
        """The real path `raw` names, or ToolError when the boundary refuses it (a file that configures
        the agent passes here: the approval gate asked the user about it)."""
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

    def rule(self, raw: str, *, write: bool) -> Rule | None:
        """The boundary's rule for `raw` as the tools would resolve it (for the approval gate)."""
        text = os.path.expanduser(raw.strip())
        if not text or "\0" in text:
            return None
        return self.boundary.judge(_real(self.root / text), write=write)

    def check(self, real: Path, raw: str, *, write: bool, via_link: bool = False) -> None:
        """Raise ToolError unless `real` (already resolved) may be read, or written when `write`."""
        rule = self.boundary.judge(real, write=write)
        if rule is None or rule.effect != "deny":
            return
        if rule.name == "outside-workspace":
            raise ToolError(self._outside_message(raw, real, via_link))
        raise ToolError(f"Refused: {rule.describe(repr(raw), self.display(rule.path))}.")

    def written(self, real: Path, data: bytes) -> None:
        """After a write: one of a file that configures the agent (which the user allowed) is noted,
        so the trust question can say the agent wrote it."""
        rule = self.boundary.judge(real, write=True)
        if rule is not None and rule.name == "agent-config":
            record_agent_write(self.boundary.workspace, real, data)

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
        if len(self.roots) > 1:
            extra = " or the extra writable roots (" + ", ".join(map(str, self.roots[1:])) + ")"
        return (
            f"Refused: '{raw}' resolves{how} to {real}, which is outside the workspace {self.root}{extra}. "
            "The file tools only work inside the workspace: use a path relative to it, e.g. 'src/main.py'."
        )
