"""Checkpoints of one session: a snapshot before the first change of each user turn, and one at its end.

Refs (to trees): `refs/vllm-bot/checkpoints/<session>/<n>` (turn start), `<n>-end` (turn end) and
`<n>-undo` (the workspace just before turn n was undone, so an undo can itself be recovered). The ledger
`.vllm-bot/checkpoints/<session>.json` records the order, the task and which turns were undone.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config.statedir import atomic_write
from .gitrepo import REF_ROOT, GitRepo
from .safegit import GIT_ERRORS
from .sessions import first_line, newest_first
from .snapshot import Snapshot, delete_refs, set_ref, take_snapshot, write_tree

CHECKPOINT_DIR = "checkpoints"  # inside .vllm-bot/
SESSION_ID_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}")


@dataclass
class Turn:
    n: int
    task: str
    start: str  # tree of the workspace before the agent's first change in this turn
    started: float
    end: str | None = None  # tree at the end of the turn (None: it never finished)
    ended: float | None = None
    undone: bool = False
    undo_snapshot: str | None = None  # the tree just before the undo
    commits: list[str] = field(default_factory=list)  # git.auto_commit commits, oldest first
    head_before: str | None = None  # HEAD before those commits
    skipped: list[str] = field(default_factory=list)  # files left out of the start snapshot, and why


@dataclass
class Ledger:
    session: str
    private: bool
    turns: list[Turn] = field(default_factory=list)
    # "own": snapshots in .vllm-bot/git; "repository": an earlier version kept them in the user's
    # repository (refs/vllm-bot/checkpoints), where our store cannot read them.
    store: str = "own"

    @classmethod
    def load(cls, path: Path, session: str, private: bool) -> Ledger:
        if not path.is_file():
            return cls(session, private)
        data = json.loads(path.read_text(encoding="utf-8"))
        store = data.get("store", "own" if data["private"] else "repository")
        return cls(data["session"], data["private"], [Turn(**t) for t in data["turns"]], store)

    def earlier_hint(self) -> str:
        """How to get files back from a session whose snapshots an earlier version kept in the
        user's repository ("" for our own store)."""
        if self.store == "own":
            return ""
        return (
            f"Session {self.session}'s checkpoints were kept in your repository by an earlier vLLM Bot; "
            f"restore a file by hand: `git restore --source={REF_ROOT}/{self.session}/N -- PATH` "
            "(N: the turn, `undo --list` shows them)."
        )

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n")


class CheckpointStore:
    """Snapshots for one session in one workspace; cheap to create (nothing runs until needed)."""

    def __init__(self, repo: GitRepo, state_dir: Path, session_id: str) -> None:
        if not SESSION_ID_RE.fullmatch(session_id):
            raise ValueError(f"bad session id {session_id!r} (letters, digits, '.', '_' and '-' only)")
        self.repo = repo
        self.session_id = session_id
        self.dir = state_dir / CHECKPOINT_DIR
        self.index = self.dir / f"{session_id}.index"
        self.ledger_path = self.dir / f"{session_id}.json"
        self.ledger = Ledger.load(self.ledger_path, session_id, repo.private)
        self._task: str | None = None  # the current user turn, until its first change
        self._current: Turn | None = None  # the turn with a checkpoint that is still running
        self._warm: threading.Thread | None = None

    # -- one user turn ------------------------------------------------------------------------

    def begin_turn(self, task: str) -> None:
        """A new user turn starts; its checkpoint is taken by `ensure_checkpoint` when needed."""
        self.end_turn()
        self._task = task
        self.warm_up()

    def warm_up(self) -> None:
        """Fill the temporary index in the background while the model thinks: the first snapshot of
        a large workspace must hash (and, without git, store) every file (seconds for 200 MB); later
        sessions start from the previous session's index and only hash what changed."""
        if self._warm is None and not self.index.exists():
            self._warm = threading.Thread(target=self._fill_index, name="checkpoint-warm-up", daemon=True)
            self._warm.start()

    def _fill_index(self) -> None:
        with contextlib.suppress(*GIT_ERRORS, OSError):  # the real snapshot will report it
            write_tree(self.repo, self.index)

    def _ready(self) -> None:
        if self._warm is not None:
            self._warm.join()
            self._warm = None

    def ensure_checkpoint(self) -> Turn:
        """Snapshot the workspace unless this turn already has a checkpoint (call before a change)."""
        if self._current is not None:
            return self._current
        self._ready()
        n = len(self.ledger.turns) + 1
        snap = take_snapshot(self.repo, self.index)
        set_ref(self.repo, self.ref(n), snap.tree)
        turn = Turn(n, self._task or "(no task)", snap.tree, time.time(), skipped=list(snap.skipped))
        self.ledger.turns.append(turn)
        self.ledger.save(self.ledger_path)
        self._current = turn
        return turn

    def end_turn(self) -> Turn | None:
        """Record the tree at the end of the running turn (if it took a checkpoint)."""
        turn, self._current, self._task = self._current, None, None
        if turn is None:
            return None
        self._ready()
        snap = take_snapshot(self.repo, self.index)
        set_ref(self.repo, self.ref(turn.n, "end"), snap.tree)
        turn.end, turn.ended = snap.tree, time.time()
        self.ledger.save(self.ledger_path)
        return turn

    @property
    def running(self) -> Turn | None:
        return self._current

    # -- queries ------------------------------------------------------------------------------

    def ref(self, n: int, suffix: str = "") -> str:
        return f"{REF_ROOT}/{self.session_id}/{n}" + (f"-{suffix}" if suffix else "")

    def active_turns(self) -> list[Turn]:
        """Turns with checkpoints that were not undone, oldest first."""
        return [t for t in self.ledger.turns if not t.undone]

    def snapshot_now(self) -> Snapshot:
        self._ready()
        return take_snapshot(self.repo, self.index)

    def tree_now(self) -> str:
        self._ready()
        return write_tree(self.repo, self.index)[0]

    def save(self) -> None:
        self.ledger.save(self.ledger_path)

    def patch(self, base: str, target: str, *, stat: bool = False, color: bool = False) -> str:
        """A patch (or with `stat`, a per-file summary) from tree `base` to tree `target`."""
        args = ["diff", "--no-ext-diff", "--no-textconv", f"--color={'always' if color else 'never'}"]
        if stat:
            args.append("--stat")
        return self.repo.run(*args, base, target, "--", *self.repo.scope())


def list_ledgers(state_dir: Path) -> list[Path]:
    """Ledger files of every session in this workspace, newest first."""
    folder = state_dir / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    return newest_first(folder.glob("*.json"))


def prune_sessions(repo: GitRepo, state_dir: Path, keep: int, current: str) -> list[str]:
    """Delete checkpoint refs, ledgers and index files of all but the `keep` newest sessions."""
    pruned = []
    for ledger in list_ledgers(state_dir)[max(keep, 1) :]:
        session = ledger.stem
        if session == current:
            continue
        delete_refs(repo, f"{REF_ROOT}/{session}/")
        for path in (ledger, ledger.with_suffix(".index")):
            path.unlink(missing_ok=True)
        pruned.append(session)
    return pruned


def describe(turn: Turn) -> dict[str, Any]:
    """A row for listings: number, task, time, state."""
    state = "undone" if turn.undone else ("finished" if turn.end else "unfinished")
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(turn.started))
    return {"n": turn.n, "task": first_line(turn.task), "time": stamp, "state": state}
