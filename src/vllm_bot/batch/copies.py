"""Each task works in its own copy of its workspace, under the batch's output directory.

A workspace inside a git repository gets a detached git worktree of the repository's HEAD (fast, shares
the objects; uncommitted changes are not in it), else a plain copy. Our git commands never run the
repository's hooks or fsmonitor. `Copy.changes()` is the agent's work as a diff; a copy is removed
(and its worktree registration with it) once its task is done, unless the user keeps them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from ..statedir import STATE_DIR_NAME

SAFE_GIT = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
_REPO_LOCKS: dict[Path, threading.Lock] = {}  # `git worktree add/remove` of one repository, one at a time
_LOCKS_LOCK = threading.Lock()


class CopyError(Exception):
    """The workspace could not be copied (the task fails with this message; the others go on)."""


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        [*SAFE_GIT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise CopyError(f"git {' '.join(args[:2])} failed in {cwd}: {proc.stderr.strip()[:500]}")
    return proc.stdout


def repo_top(path: Path) -> Path | None:
    """The top of the git work tree `path` is in, or None (no git, or git missing)."""
    try:
        proc = subprocess.run(
            [*SAFE_GIT, "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True
        )
    except OSError:
        return None
    return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 and proc.stdout.strip() else None


def _lock_for(top: Path) -> threading.Lock:
    with _LOCKS_LOCK:
        return _REPO_LOCKS.setdefault(top, threading.Lock())


@dataclass
class Copy:
    root: Path  # the copy (a worktree's top, or the copied directory)
    workspace: Path  # where the agent works: `root`, or the workspace's place inside the worktree
    source_top: Path | None  # the repository a worktree belongs to; None for a plain copy
    base_tree: str | None = None  # the tree the agent started from (after setup), for `changes()`

    def snapshot(self, index: Path) -> str | None:
        """The copy's files as a git tree (in a private index file: the copy's own index is untouched)."""
        if self.source_top is None:
            return None
        env = {"GIT_INDEX_FILE": str(index)}
        git(self.root, "read-tree", "HEAD", env=env)
        git(self.root, "add", "-A", env=env)
        return git(self.root, "write-tree", env=env).strip()

    def changes(self, index: Path) -> str:
        """The agent's work since `base_tree` (or HEAD) as a binary-safe diff; "" for a plain copy."""
        after = self.snapshot(index)
        if after is None:
            return ""
        return git(self.root, "diff", "--binary", self.base_tree or "HEAD", after)


def make_copy(source: Path, dest: Path, exclude: list[Path]) -> Copy:
    """A worktree (for a workspace inside a git repository with a commit) or a copy of `source`."""
    top = repo_top(source)
    if top is not None and git(top, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        with _lock_for(top):
            git(top, "worktree", "add", "--detach", "--quiet", str(dest), "HEAD")
        return Copy(dest, dest / source.relative_to(top), top)
    skip = {p.resolve() for p in exclude}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        return {n for n in names if n == STATE_DIR_NAME or (here / n).resolve() in skip}

    try:
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    except (OSError, shutil.Error) as e:
        raise CopyError(f"could not copy {source} to {dest}: {e}") from None
    return Copy(dest, dest, None)


def remove_copy(dest: Path, source_top: Path | None) -> None:
    """Remove a copy made by make_copy (its worktree registration too); a missing one is fine."""
    if source_top is not None:
        with _lock_for(source_top):
            git(source_top, "worktree", "remove", "--force", "--force", str(dest), check=False)
    if dest.exists() or dest.is_symlink():
        shutil.rmtree(dest, ignore_errors=True)
    if source_top is not None:
        prune({source_top})


def prune(tops: set[Path]) -> None:
    """Drop registrations of worktrees whose directories are gone (a batch killed hard leaves some)."""
    for top in tops:
        with _lock_for(top):
            git(top, "worktree", "prune", check=False)


def uncommitted(top: Path) -> bool:
    """Does the repository have changes a worktree of HEAD would not contain?"""
    return bool(git(top, "status", "--porcelain", "--untracked-files=normal", check=False).strip())
