"""Snapshots of the workspace as git trees, built in a temporary index.

The index file and the git directory are ours (under `.vllm-bot/`), so the user's index, HEAD,
branches and stash are never touched. A session's index is seeded from the latest earlier session's,
so `git add -A` re-reads only the files whose stat data changed; the first snapshot of a workspace
hashes and stores every file (in the background while the model thinks), so undo never depends on the
user's `.git`. The user's index is never the seed: its entries are what the user's clean filters made
(Git LFS pointers), not the bytes on disk.
Refs point at the trees themselves, not at commits: git gc keeps them; the ledger holds what a
commit would.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..safety.sandbox.paths import nested_repositories
from .gitrepo import GitRepo
from .safegit import GitFailed

UNREADABLE_MARK = "unable to index file"
SCRATCH_PREFIXES = ("undo-", "commit-")  # short-lived index files of undo and auto-commit


@dataclass(frozen=True)
class Snapshot:
    tree: str
    skipped: tuple[str, ...] = ()  # files git could not read (left out of this snapshot)


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees. Modes are git's: "100644", "100755", "120000",
    "160000" (submodule) or "000000" (absent)."""

    path: str
    status: str  # A added, D deleted, M modified, T type changed
    old_mode: str
    new_mode: str

    @property
    def old_exists(self) -> bool:
        return self.old_mode != "000000"

    @property
    def new_exists(self) -> bool:
        return self.new_mode != "000000"


def write_tree(repo: GitRepo, index: Path) -> tuple[str, tuple[str, ...]]:
    """The tree of the workspace as it is now: tracked plus untracked files that are not ignored,
    except new files over the size limit. Also returns what was left out, and why."""
    if not index.exists():
        _seed(repo, index)
    untracked = _untracked(repo, index) if repo.max_file_bytes is not None or repo.junk else []
    big = large_new_files(repo, untracked)
    left_out = [path for path, _ in big] + new_junk(repo, index, untracked)
    pathspec = [*repo.add_scope(), *(f":(exclude,literal){path}" for path in left_out)]
    skipped = tuple(f"{path} ({size // 2**20} MB, over git.max_file_mb)" for path, size in big)
    pathspec += nested_exclusions(repo, repo.top, index)
    try:
        repo.run("add", "-A", "--ignore-errors", "--", *pathspec, index=index)
    except GitFailed as e:
        if UNREADABLE_MARK in e.stderr:
            names = [ln.split("'")[1] for ln in e.stderr.splitlines() if UNREADABLE_MARK in ln and "'" in ln]
            skipped += tuple(f"{name} (unreadable)" for name in names)
        else:
            # The index is only our cache: a copied index git cannot use (split index, newer format)
            # or a lock left by a killed run. Rebuild it from nothing once; a second failure is real.
            for stale in (index, index.with_name(index.name + ".lock")):
                stale.unlink(missing_ok=True)
            repo.run("add", "-A", "--ignore-errors", "--", *pathspec, index=index)
    return repo.run("write-tree", index=index).strip(), skipped


def nested_exclusions(repo: Any, top: Path, index: Path) -> list[str]:
    """Pathspecs that keep `git add -A` out of every nested repository below `top`: those in its
    folders (a model may have made one; found from their files) and the gitlinks `index` holds
    (submodules). git checks a gitlink for changes by running `git status` inside it, under that
    repository's own config, whose filters and hooks would run outside the sandbox. A nested
    repository is never part of a snapshot; a new one past the scan's limit is added as a gitlink,
    which runs nothing, and excluded from then on."""
    try:
        staged = repo.run("ls-files", "--stage", "-z", index=index) if index.exists() else ""
    except GitFailed:  # an index git cannot read: `add` fails too and rebuilds it, gitlinks gone
        staged = ""
    links = [entry.split("\t", 1)[1] for entry in staged.split("\0") if entry.startswith("160000 ")]
    found = [os.path.relpath(folder, top) for folder in nested_repositories(top)[0]]
    return [f":(exclude,literal){path}" for path in dict.fromkeys([*links, *found])]


def large_new_files(repo: GitRepo, untracked: list[str]) -> list[tuple[str, int]]:
    """Files not in the snapshot index yet (and not ignored) that are bigger than the limit: a model
    checkpoint or a dataset would otherwise be copied into git's object store on every session."""
    if repo.max_file_bytes is None:
        return []
    big = []
    for path in untracked:
        try:
            info = os.lstat(repo.top / path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > repo.max_file_bytes:
            big.append((path, info.st_size))
    tracked = _tracked_by_user(repo, [path for path, _ in big])
    return [(path, size) for path, size in big if path not in tracked]


def _untracked(repo: GitRepo, index: Path) -> list[str]:
    """Files not in the snapshot index yet and not ignored: what `git add -A` would add."""
    listed = repo.run(
        "ls-files", "--others", "--exclude-standard", "-z", "--", *repo.add_scope(), index=index
    )
    return list(filter(None, listed.split("\0")))


def new_junk(repo: GitRepo, index: Path, untracked: list[str]) -> list[str]:
    """Untracked files matching `repo.junk` (read by git as .gitignore patterns) that the user's
    repository does not track: build output such as `__pycache__/` in a repository with no .gitignore."""
    if not repo.junk:
        return []
    matching = repo.run(
        "ls-files", "--others", "--ignored", *(f"--exclude={p}" for p in repo.junk), "-z", "--",
        *repo.add_scope(), index=index,
    )  # fmt: skip
    # Only files `git add -A` would take: one a .gitignore already leaves out needs no exclusion (and
    # git refuses a pathspec naming an ignored file, even an exclusion).
    visible = set(untracked)
    junk = [path for path in filter(None, matching.split("\0")) if path in visible]
    tracked = _tracked_by_user(repo, junk)
    return [path for path in junk if path not in tracked]


def _tracked_by_user(repo: GitRepo, paths: list[str]) -> set[str]:
    """Which of `paths` the user's repository tracks: those are the user's files, snapshotted
    whatever their size (only new big files, datasets and checkpoints, are left out)."""
    if repo.user is None or not paths:
        return set()
    top, prefix = repo.user.place.work_tree, repo.workspace
    rel = {os.path.relpath(prefix / p, top): p for p in paths}
    try:
        listed = repo.user.run("ls-files", "-z", "--", *(f":(literal){r}" for r in rel))
    except GitFailed:
        return set()
    return {rel[r] for r in filter(None, listed.split("\0")) if r in rel}


def _seed(repo: GitRepo, index: Path) -> None:
    """Start a session's index from the latest earlier session's, whose stat data is fresh, so only
    changed files are hashed."""
    index.parent.mkdir(parents=True, exist_ok=True)
    source = _latest_sibling(index)
    if source is not None and source.is_file():
        # copy2 keeps the mtime, which git's racy-entry check compares entry stat data against.
        shutil.copy2(source, index)


def _latest_sibling(index: Path) -> Path | None:
    others = [
        p for p in index.parent.glob("*.index") if p != index and not p.name.startswith(SCRATCH_PREFIXES)
    ]
    return max(others, key=lambda p: p.stat().st_mtime, default=None)


def take_snapshot(repo: GitRepo, index: Path) -> Snapshot:
    """The workspace as a tree object (no ref yet, no branch moves)."""
    tree, skipped = write_tree(repo, index)
    return Snapshot(tree, skipped)


def set_ref(repo: GitRepo, ref: str, tree: str) -> None:
    repo.run("update-ref", ref, tree)


def delete_refs(repo: GitRepo, prefix: str) -> int:
    """Delete every ref under `prefix` (objects become unreachable; git gc removes them later)."""
    refs = repo.run("for-each-ref", "--format=%(refname)", prefix).split()
    for ref in refs:
        repo.run("update-ref", "-d", ref)
    return len(refs)


def changes(repo: GitRepo, old: str, new: str) -> list[Change]:
    """Paths in the workspace that differ between two tree-ish objects (renames as delete + add)."""
    out = repo.run("diff-tree", "-r", "-z", "--no-renames", old, new, "--", *repo.scope())
    fields = out.split("\0")
    result = []
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, _old_sha, _new_sha, status = meta[1:].split(" ")
        result.append(Change(path, status[0], old_mode, new_mode))
    return result
