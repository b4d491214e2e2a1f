"""Undo: put the files one agent turn changed back as they were at that turn's checkpoint.

Only the files the agent changed in that turn are restored. Files the user edited by hand since the
turn ended (every changed file, when the turn never ended) are reported, never overwritten unless the
caller forces it; ignored files, the user's index and HEAD are never touched. The tree just before the
undo is kept under `<n>-undo`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .autocommit import unwind
from .checkpoints import CheckpointStore, Turn
from .safegit import GitFailed
from .snapshot import Change, Snapshot, changes, set_ref

CHUNK = 200  # paths per checkout-index call (stays far below the argument-length limit)


@dataclass
class UndoPlan:
    turn: Turn
    now: Snapshot  # the workspace just before the undo
    paths: list[str]  # what the agent changed in that turn
    hand_edited: list[str]  # of those, changed since the turn ended (all: the turn never ended)
    blocked: list[str]  # paths that cannot be restored without deleting files outside snapshots
    todo: list[Change]  # how each of `paths` differs now from the checkpoint
    skipped_empty: list[Turn] = field(default_factory=list)  # later turns that changed nothing

    @property
    def unfinished(self) -> bool:
        return self.turn.end is None


@dataclass
class UndoReport:
    turn: Turn
    restored: list[str]
    removed: list[str]
    recovery_ref: str  # ref holding the tree from just before the undo
    note: str | None = None  # e.g. why an auto-commit of that turn stays in history
    kept: list[str] = field(default_factory=list)  # not removed: ignored again once .gitignore is back


class UndoRefused(Exception):
    """The undo would overwrite the user's work or delete files that are not in any snapshot."""


def plan_undo(store: CheckpointStore) -> UndoPlan | None:
    """What undoing the most recent turn that changed files would do (None: nothing to undo)."""
    candidates = [t for t in store.active_turns() if t is not store.running]
    if not candidates:
        return None
    now = store.snapshot_now()
    empty: list[Turn] = []
    for turn in reversed(candidates):
        end = turn.end or now.tree
        agent = changes(store.repo, turn.start, end)
        if not agent:
            empty.append(turn)
            continue
        paths = [c.path for c in agent]
        if turn.end is None:
            # No end snapshot (the session stopped mid-turn): nothing tells the agent's changes from
            # edits the user made since, so every changed file may hold the user's work.
            hand, to_apply = list(paths), agent
        else:
            since = {c.path for c in changes(store.repo, end, now.tree)}
            hand = [p for p in paths if p in since]
            # Without hand edits the agent's paths are now as the turn left them: its diff is the todo.
            to_apply = agent if not hand else _todo(store, turn.start, now.tree, set(paths))
        blocked = blocked_paths(store.repo.top, to_apply)
        return UndoPlan(turn, now, paths, hand, blocked, to_apply, empty)
    for turn in empty:
        turn.undone = True
    store.save()
    return None


def _todo(store: CheckpointStore, start: str, now: str, wanted: set[str]) -> list[Change]:
    return [c for c in changes(store.repo, start, now) if c.path in wanted]


def apply_undo(store: CheckpointStore, plan: UndoPlan, *, force: bool = False) -> UndoReport:
    """Restore the plan's files to the turn's checkpoint. Raises UndoRefused on hand edits (unless
    `force`) and on blocked paths (always)."""
    if plan.blocked:
        raise UndoRefused(
            "cannot undo: restoring these would delete files that no checkpoint holds (ignored or "
            "never snapshotted): " + ", ".join(plan.blocked)
        )
    if plan.hand_edited and not force:
        raise UndoRefused(hand_edit_message(plan))
    turn = plan.turn
    recovery = store.ref(turn.n, "undo")
    set_ref(store.repo, recovery, plan.now.tree)
    removed, restored, kept = restore(store, turn.start, plan.todo)
    for t in [*plan.skipped_empty, turn]:
        t.undone = True
    turn.undo_snapshot = plan.now.tree
    store.save()
    note = unwind(store, turn, plan.paths)
    return UndoReport(turn, restored, removed, recovery, note, kept)


def hand_edit_message(plan: UndoPlan) -> str:
    files = "\n".join(f"  {p}" for p in plan.hand_edited)
    if plan.unfinished:
        return (
            f"Turn {plan.turn.n} never finished (the session stopped mid-turn), so there is no snapshot "
            "of how the agent left its files: any of these may hold edits you made since, and undo "
            f"would overwrite them:\n{files}"
        )
    return (
        f"You changed these files after turn {plan.turn.n} ended; undo would overwrite your edits:\n{files}"
    )


def restore(
    store: CheckpointStore, target: str, todo: list[Change]
) -> tuple[list[str], list[str], list[str]]:
    """Make each path in `todo` what it is in `target`. Returns (removed, restored, kept); a file the
    target lacks is kept when the target's ignore rules ignore it (it may be the user's, hidden from
    the checkpoint by those rules)."""
    top = store.repo.top
    leaving = [c.path for c in todo if c.new_exists and (not c.old_exists or c.status == "T")]
    checkout = [c.path for c in todo if c.old_exists and c.old_mode != "160000"]
    rules = [p for p in checkout if p.rsplit("/", 1)[-1] == ".gitignore"]
    scratch = store.dir / f"undo-{os.getpid()}.index"
    try:
        if checkout:
            store.repo.run("read-tree", target, index=scratch)
        _checkout(store, scratch, rules)  # first, so the ignore rules below are the target's
        created = {c.path for c in todo if not c.old_exists}
        kept = set(ignored(store, [p for p in leaving if p in created]))
        removed = [p for p in leaving if p not in kept]
        for path in removed:
            _remove(top / path)
        for path in removed:
            _prune_empty_dirs((top / path).parent, store.repo.workspace)
        _checkout(store, scratch, [p for p in checkout if p not in set(rules)])
    finally:
        scratch.unlink(missing_ok=True)
    return [p for p in removed if p not in set(checkout)], checkout, sorted(kept)


def _checkout(store: CheckpointStore, index: Path, paths: list[str]) -> None:
    top = store.repo.top
    for path in paths:
        _clear_empty_dir(top / path, top)
    for i in range(0, len(paths), CHUNK):
        store.repo.run("checkout-index", "-f", "-q", "--", *paths[i : i + CHUNK], index=index)


def ignored(store: CheckpointStore, paths: list[str]) -> list[str]:
    """Which of `paths` the ignore rules on disk now ignore."""
    if not paths:
        return []
    feed = "".join(p + "\0" for p in paths).encode("utf-8", "surrogateescape")  # names git gave us
    try:
        text = store.repo.run("check-ignore", "--no-index", "-z", "--stdin", stdin=feed)
    except GitFailed as e:
        if e.status == 1:  # none of them is ignored
            return []
        raise
    return [p for p in text.split("\0") if p]


def blocked_paths(top: Path, todo: list[Change]) -> list[str]:
    """Paths to check out where a directory with other files, or a file no snapshot holds, stands in
    the way (git would delete it to make room)."""
    leaving = {c.path for c in todo if c.new_exists}
    blocked = []
    for c in todo:
        if not c.old_exists:
            continue
        if _dir_holds_other_files(top, c.path, leaving):
            blocked.append(c.path)
            continue
        parts = c.path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            parent = "/".join(parts[:i])
            try:
                mode = os.lstat(top / parent).st_mode
            except FileNotFoundError:
                break
            if not stat.S_ISDIR(mode) and parent not in leaving:
                blocked.append(c.path)
                break
    return blocked


def _dir_holds_other_files(top: Path, path: str, leaving: set[str]) -> bool:
    full = top / path
    if full.is_symlink() or not full.is_dir():
        return False
    for root, dirs, files in os.walk(full):
        # os.walk lists a symlink to a directory among `dirs`; for us it is a file like any other.
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            rel = os.path.relpath(os.path.join(root, name), top).replace(os.sep, "/")
            if rel not in leaving:
                return True
    return False


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_symlink() or not path.is_dir():
            path.unlink()


def _prune_empty_dirs(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _clear_empty_dir(path: Path, top: Path) -> None:
    """An empty directory left where a file comes back (only empty ones: see blocked_paths). Never
    through a folder on the way that is now a symlink (it could lead out of the workspace; git's
    checkout replaces it)."""
    if path.is_symlink() or not path.is_dir():
        return
    if any((top / folder).is_symlink() for folder in path.relative_to(top).parents if folder != Path(".")):
        return
    try:
        for root, dirs, _files in os.walk(path, topdown=False):
            for d in dirs:
                os.rmdir(os.path.join(root, d))
        path.rmdir()
    except OSError:
        raise UndoRefused(
            f"cannot restore {path}: a directory with files no checkpoint holds is in its place; "
            "move them away and undo again"
        ) from None
