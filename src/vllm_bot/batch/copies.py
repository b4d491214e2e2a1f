"""Each task works in its own copy of its workspace, under the batch's output directory.

A workspace inside a git repository gets a detached git worktree of the repository's HEAD (fast, shares
the objects; uncommitted changes are not in it), else a plain copy. Every git command goes through the
agent's own safe runner (history/safegit.py): pinned to the repository found once, with no hooks and
nothing run that a repository's config names, so neither a planted repository nor an agent that
edited its copy's git config can run code through us. `Copy.changes()` is the agent's work as a diff;
a copy is removed (and its worktree registration with it) once its task is done, unless the user
keeps them.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from ..config.statedir import STATE_DIR_NAME
from ..history.safegit import GIT_ERRORS, GitMissing, GitPlace, GitRunner, base_env, find_user_repo, run_git
from ..history.snapshot import nested_exclusions

_REPO_LOCKS: dict[Path, threading.Lock] = {}  # `git worktree add/remove` of one repository, one at a time
_LOCKS_LOCK = threading.Lock()


class CopyError(Exception):
    """The workspace could not be copied (the task fails with this message; the others go on)."""


def git(place: GitPlace, *args: str, index: Path | None = None, check: bool = True) -> str:
    """One git command in the pinned repository; CopyError (or "" when not `check`) when it fails."""
    try:
        return GitRunner(place).run(*args, index=index)
    except GIT_ERRORS as e:
        if not check:
            return ""
        raise CopyError(f"git {' '.join(args[:2])} failed in {place.work_tree}: {e}") from None


def repo_of(path: Path) -> GitPlace | None:
    """The git repository `path` is in (found safely, never a planted bare one), or None."""
    try:
        return find_user_repo(path)
    except GitMissing:  # git is not installed: every workspace is copied
        return None


def _lock_for(top: Path) -> threading.Lock:
    with _LOCKS_LOCK:
        return _REPO_LOCKS.setdefault(top, threading.Lock())


@dataclass
class Copy:
    root: Path  # the copy (a worktree's top, or the copied directory)
    workspace: Path  # where the agent works: `root`, or the workspace's place inside the worktree
    source: GitPlace | None  # the repository a worktree belongs to; None for a plain copy
    place: GitPlace | None = None  # the worktree itself
    base_tree: str | None = None  # the tree the agent started from (after setup), for `changes()`

    def snapshot(self, index: Path) -> str | None:
        """The copy's files as a git tree (in a private index file: the copy's own index is untouched)."""
        if self.place is None:
            return None
        git(self.place, "read-tree", "HEAD", index=index)
        # never into a nested repository or submodule: git would run `git status` in it, under a
        # config the agent may have written
        outside = nested_exclusions(GitRunner(self.place), self.place.work_tree, index)
        git(self.place, "add", "-A", "--", *outside, index=index)
        return git(self.place, "write-tree", index=index).strip()

    def changes(self, index: Path) -> str:
        """The agent's work since `base_tree` (or HEAD) as a binary-safe diff; "" for a plain copy."""
        after = self.snapshot(index)
        if after is None or self.place is None:
            return ""
        return git(
            self.place, "diff", "--binary", "--no-ext-diff", "--no-textconv", self.base_tree or "HEAD", after
        )


def make_copy(source: Path, dest: Path, exclude: list[Path]) -> Copy:
    """A worktree (for a workspace inside a git repository with a commit) or a copy of `source`."""
    repo = repo_of(source)
    if repo is not None and git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        with _lock_for(repo.work_tree):
            git(repo, "worktree", "add", "--detach", "--quiet", str(dest), "HEAD")
        place = repo_of(dest)
        if place is None:
            raise CopyError(f"git made a worktree at {dest} that git then cannot find")
        return Copy(dest, dest / source.resolve().relative_to(repo.work_tree), repo, place)
    skip = {p.resolve() for p in exclude}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory)
        if here == source / STATE_DIR_NAME:  # the project's config goes along; sessions, store do not
            return {n for n in names if n != "config.json"}
        return {n for n in names if (here / n).resolve() in skip}

    try:
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    except (OSError, shutil.Error) as e:
        raise CopyError(f"could not copy {source} to {dest}: {e}") from None
    return Copy(dest, dest, None)


def remove_copy(dest: Path, source: GitPlace | None) -> None:
    """Remove a copy made by make_copy (its worktree registration too); a missing one is fine."""
    if source is not None:
        with _lock_for(source.work_tree):
            git(source, "worktree", "remove", "--force", "--force", str(dest), check=False)
    if dest.exists() or dest.is_symlink():
        shutil.rmtree(dest, ignore_errors=True)
    if source is not None:
        prune([source])


def prune(repos: list[GitPlace]) -> None:
    """Drop registrations of worktrees whose directories are gone (a batch killed hard leaves some)."""
    for repo in repos:
        with _lock_for(repo.work_tree):
            git(repo, "worktree", "prune", check=False)


def uncommitted(repo: GitPlace) -> bool:
    """Does the repository have changes a worktree of HEAD would not contain?"""
    return bool(git(repo, "status", "--porcelain", "--untracked-files=normal", check=False).strip())


def repositories(workspaces: set[Path]) -> list[GitPlace]:
    """The distinct repositories these workspaces are in, by their top."""
    found = {place.work_tree: place for place in map(repo_of, workspaces) if place is not None}
    return [found[top] for top in sorted(found)]


def make_repository(root: Path, message: str, identity: dict[str, str]) -> None:
    """A new repository at `root` with everything in it committed (author, dates: `identity`); run
    with no user or system config, so nothing of the user's git setup (signing, hooks) gets in."""
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", message]):
        run_git(root, *args, env=base_env(identity))
