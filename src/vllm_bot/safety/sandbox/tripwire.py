"""Protected files the sandbox cannot mask, checked around every command.

A file that configures the agent (`.mcp.json`, the boundary's `agent_files`) is mounted read-only
when it exists, but one that does not exist yet cannot be masked without leaving an empty file in
the user's folder: so its state is taken before each command, and a command that creates or changes
it has that undone, and the model is told to ask the user instead.

`.git/commondir` tells git where the repository's config and hooks live. A missing one cannot be
masked with an empty read-only file (git refuses to run with an empty commondir), so instead its
state is recorded when the session starts and, after each command, any change is undone and
reported: a command must not point the user's git (or ours) at a config and hooks it wrote itself.

A workspace without a repository of its own cannot be masked against being laid out as a *bare*
repository itself (`HEAD`, `objects/`, `refs/` and a `config` naming `core.worktree` and
`core.fsmonitor`): git in that folder would take it and run the config's programs. The agent's own
git and git in commands refuse it (`safe.bareRepository=explicit`), the user's may not. So when a
command has laid the workspace out so, its `HEAD` is renamed to `HEAD.vllm-bot-disabled` (git takes
no directory without a `HEAD` for a repository) and the model is told.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from vllm_bot.safety.boundary import Boundary
from vllm_bot.safety.sandbox.paths import git_dirs

WATCHED = ("commondir",)
DISABLED_HEAD = "HEAD.vllm-bot-disabled"

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


def _restore(path: Path, before: State) -> bool:
    """Put `path` back as it was `before`; whether it had changed."""
    if _state(path) == before:
        return False
    _remove(path)
    if before is not None and before[0] == "file":
        path.write_bytes(before[1])
    elif before is not None and before[0] == "link":
        os.symlink(before[1].decode(), path)
    elif before is not None:
        path.mkdir()
    return True


def laid_out_as_repository(folder: Path) -> bool:
    """Whether `folder` itself looks like a git dir to git: a `HEAD`, `objects/` and `refs/`."""
    return os.path.lexists(folder / "HEAD") and (folder / "objects").is_dir() and (folder / "refs").is_dir()


class Tripwire:
    def __init__(
        self, paths: list[Path], bare_root: Path | None = None, agent_files: Sequence[Path] = ()
    ) -> None:
        self.saved = {path: _state(path) for path in paths}
        self.agent_files = {path: _state(path) for path in agent_files}
        # a folder without a repository, not laid out as one when the session starts: keep it so
        fresh = bare_root is not None and not laid_out_as_repository(bare_root)
        self.bare_root = bare_root if fresh else None

    @classmethod
    def for_workspace(cls, workspace: Path, boundary: Boundary | None = None) -> Tripwire:
        workspace = workspace.resolve()
        dirs = git_dirs(workspace)
        watched = [git_dir / name for git_dir in dirs for name in WATCHED]
        agent_files = boundary.agent_files() if boundary is not None else []
        return cls(watched, None if dirs else workspace, agent_files)

    def arm(self) -> None:
        """Before a command: the agent files as they are now (the user may have let the file tools
        change them since the last command)."""
        self.agent_files = {path: _state(path) for path in self.agent_files}

    def check(self) -> list[str]:
        """Undo changes to the watched paths; one note per path that had changed."""
        notes = []
        for path, before in self.saved.items():
            if _restore(path, before):
                notes.append(
                    f"the command changed the protected {path.name} in {path.parent}; it was put back"
                )
        for path, before in self.agent_files.items():
            if _restore(path, before):
                notes.append(
                    f"the command changed {path.name}, which configures the agent (rule agent-config), "
                    "so it was put back. Only the user can change it: ask them, or use write and they "
                    "will be asked"
                )
        if self.bare_root is not None and laid_out_as_repository(self.bare_root):
            head = self.bare_root / "HEAD"
            os.replace(head, self.bare_root / DISABLED_HEAD)  # renames a symlink itself, not its target
            notes.append(
                "the command laid out the workspace itself as a git repository (HEAD, objects/, refs/), "
                f"which git run in this folder would obey; its HEAD was renamed to {DISABLED_HEAD}. "
                "Do not create git internals in the workspace"
            )
        return notes
