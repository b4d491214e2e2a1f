"""Undo, diff and session listings as text, shared by the slash commands and the shell sub-commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..cliargs import program_name
from ..config.statedir import STATE_DIR_NAME
from .checkpoints import CheckpointStore, Turn, describe, first_line, list_ledgers
from .gitrepo import GitRepo, open_repo
from .sessions import describe_session, list_sessions, matching, no_single_match
from .snapshot import changes
from .undo import UndoRefused, apply_undo, hand_edit_message, plan_undo


@dataclass
class UndoOutcome:
    done: bool
    lines: list[str] = field(default_factory=list)
    note_for_model: str | None = None  # tells the model which of its changes are gone


Ask = Callable[[str], bool]  # a yes/no question to the user


def undo_last(store: CheckpointStore, *, ask: Ask | None, force: bool = False) -> UndoOutcome:
    """Undo the most recent turn that changed files. Hand edits since that turn: `ask` decides
    (None: refuse, unless `force`)."""
    plan = plan_undo(store)
    if plan is None:
        return UndoOutcome(False, ["Nothing to undo: no agent turn in this session changed files."])
    if plan.hand_edited and not force:
        question = hand_edit_message(plan) + "\nOverwrite them? (their current versions stay recoverable)"
        if ask is None:
            refused = (
                "Refused: undo never overwrites your own edits silently. Keep them and undo by hand, or run "
                f"`{program_name()} undo --force` (your versions stay recoverable)."
            )
            return UndoOutcome(False, [hand_edit_message(plan), refused])
        if not ask(question):
            return UndoOutcome(False, ["Undo cancelled; nothing changed."])
        force = True
    try:
        report = apply_undo(store, plan, force=force)
    except UndoRefused as e:
        return UndoOutcome(False, [str(e)])
    task = first_line(report.turn.task, 60)
    lines = [
        f"Undid turn {report.turn.n} ({task!r}): {_files(len(report.restored))} restored, "
        f"{_files(len(report.removed))} the agent created removed."
    ]
    lines += [f"  restored  {p}" for p in report.restored] + [f"  removed   {p}" for p in report.removed]
    lines += [f"  kept      {p}  (ignored by the restored .gitignore: it may be yours)" for p in report.kept]
    if report.note:
        lines.append(f"Note: {report.note}.")
    if plan.hand_edited:
        lines.append(f"The overwritten versions are kept: {recover_hint(store.repo, report.recovery_ref)}")
    changed = report.restored + report.removed
    note = (
        f"[The user undid your file changes from the task {task!r}: these files are back as they were "
        f"before it: {', '.join(changed[:30])}{' ...' if len(changed) > 30 else ''}. Re-read before editing.]"
    )
    return UndoOutcome(True, lines, note)


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def recover_hint(repo: GitRepo, ref: str) -> str:
    """The command that brings a file back from a ref without touching any index (snapshots live in
    the agent's own git directory, whatever the workspace)."""
    git = f"git --git-dir={STATE_DIR_NAME}/git --work-tree=."
    return f"`{git} restore --source={ref} -- PATH` (run in the workspace)"


@dataclass
class DiffReport:
    text: str  # the patch (or per-file summary), or a sentence when there is none
    notes: list[str] = field(default_factory=list)  # what the patch leaves out, or may include

    def full(self) -> str:
        return "\n".join([self.text, *self.notes])


def diff_report(store: CheckpointStore, *, whole_session: bool, stat: bool, color: bool) -> DiffReport:
    """What the agent changed in its last turn (or the session): from the start snapshot to the last
    turn's end snapshot, so edits made since are listed apart, not mixed in. Without an end snapshot
    (the turn never finished) it compares with the files as they are now, and says so."""
    if not store.ledger.turns:
        return DiffReport("No checkpoints yet: the agent has not changed files in this session.")
    active = store.active_turns()
    if not active and not whole_session:
        return DiffReport(
            "Every agent turn of this session was undone; `/diff session` shows the net change."
        )
    last = active[-1] if active else None
    base = store.ledger.turns[0].start if whole_session or last is None else last.start
    now = store.tree_now()
    if last is not None and last.end is not None:
        target, notes = last.end, _changed_since(store, last.n, last.end, now)
    else:
        target, notes = now, [_compared_with_now(last)]
    patch = store.patch(base, target, stat=stat, color=color)
    if not patch.strip():
        where = "since the session started" if whole_session or last is None else f"in turn {last.n}"
        return DiffReport(f"No changes {where}.", notes)
    return DiffReport(patch.rstrip("\n"), notes)


def diff_text(store: CheckpointStore, *, whole_session: bool, stat: bool, color: bool) -> str:
    return diff_report(store, whole_session=whole_session, stat=stat, color=color).full()


def _changed_since(store: CheckpointStore, n: int, end: str, now: str) -> list[str]:
    paths = [c.path for c in changes(store.repo, end, now)]
    if not paths:
        return []
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return [f"Not shown above: changed since turn {n} ended (by you or another program): {shown}"]


def _compared_with_now(last: Turn | None) -> str:
    if last is None:
        what = "Every turn of this session was undone"
    else:
        what = f"Turn {last.n} has not finished (still running, or the session stopped mid-turn)"
    return f"{what}: this compares with the files as they are now, so it may include your own edits."


def session_rows(state_dir: Path, current: str | None = None) -> list[str]:
    rows = [describe_session(s) for s in list_sessions(state_dir)]
    for r in rows:
        if r["id"] == current:
            r["task"] += "  (this session)"
    if not rows:
        return ["No saved sessions in this workspace."]
    width = max(len(r["id"]) for r in rows)
    lines = [f"{'ID':<{width}}  {'LAST USED':<16}  {'TURNS':>5}  FIRST TASK"]
    lines += [f"{r['id']:<{width}}  {r['time']:<16}  {r['turns']:>5}  {r['task']}" for r in rows]
    return lines


def turn_rows(store: CheckpointStore) -> list[str]:
    turns = [describe(t) for t in store.ledger.turns]
    if not turns:
        return [f"Session {store.session_id} has no checkpoints."]
    lines = [f"Checkpoints of session {store.session_id}:"]
    lines += [f"  {t['n']:>3}  {t['time']}  {t['state']:<10}  {t['task']}" for t in turns]
    return lines


def store_from_disk(workspace: Path, session_id: str | None) -> CheckpointStore | None:
    """The checkpoint store of a session (None: the one used last) for commands run from the shell;
    None when the workspace has no checkpoints. Creates nothing in a workspace without them."""
    state_dir = workspace / STATE_DIR_NAME
    ledgers = list_ledgers(state_dir)
    if session_id is None:
        if not ledgers:
            return None
        session_id = ledgers[0].stem
    else:
        matches = matching(ledgers, session_id)
        if not matches:
            return None
        if len(matches) > 1:
            raise no_single_match(session_id, matches)
        session_id = matches[0].stem
    repo = open_repo(workspace, state_dir, None)
    return CheckpointStore(repo, state_dir, session_id)


def ask_yes_no(question: str, say: Callable[[str], None], read_line: Callable[[str], str]) -> bool:
    """`question`, then a [y/N] prompt: True only for y/yes; end of input is a no."""
    say(question)
    try:
        return read_line("[y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False
