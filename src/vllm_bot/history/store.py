"""Never lose the user's work: checkpoints before the agent changes files, and the saved conversation.

The session wires a History in (session.py) without touching the loop: the approval gate calls
`before_change` before an allowed call that may change files (this turn's checkpoint), and the
agent's events go to `on_event` (the session recorder and the turn tracker).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..config import Config
from ..conversation import Conversation, UserMessage
from ..events import Emit, Event, IterationStarted, Notice, TaskFinished
from .autocommit import commit_turn
from .checkpoints import CheckpointStore, prune_sessions
from .gitrepo import GitUnavailable, open_repo
from .safegit import GIT_ERRORS
from .session_recorder import SessionRecorder
from .sessions import LoadedSession, SessionLog, find_session, first_line, new_session_id, sessions_dir


class Client(Protocol):
    """The model client: which model and tool-call mode the session log records."""

    model: str
    function_calling: bool


class History:
    """Checkpoints (None when off or unavailable) and the session log for one agent session."""

    def __init__(
        self,
        config: Config,
        workspace: Path,
        state_dir: Path,
        conversation: Conversation,
        emit: Emit,
        client: Client,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.state_dir = state_dir
        self.conversation = conversation
        self.emit = emit  # the session's emit (notices)
        self.client = client
        self.store: CheckpointStore | None = None
        self.unavailable: str | None = None  # why checkpoints are off
        self.recorder: SessionRecorder | None = None
        self.session_id = ""
        self.open(new_session_id())

    # -- which session ----------------------------------------------------------------------------

    def open(self, session_id: str, loaded: LoadedSession | None = None) -> None:
        """Point the log and the checkpoints at `session_id` (continuing a loaded one, or new)."""
        self.session_id = session_id
        log = SessionLog(sessions_dir(self.state_dir) / f"{session_id}.jsonl")
        saved = list(loaded.saved) if loaded else []
        self.recorder = SessionRecorder(log, self.conversation, self._meta, saved=saved)
        self.store = self._checkpoints(session_id)

    def resume(self, wanted: str | None) -> LoadedSession:
        """Load a saved session (None: the latest) into the conversation; later steps append to it."""
        loaded = find_session(self.state_dir, wanted)
        self.close()  # the current session's file is complete before its history is replaced
        self.conversation.entries[:] = loaded.entries
        self.open(loaded.id, loaded)
        assert self.recorder is not None
        self.recorder.sync()  # appends the "interrupted" results the repair added
        return loaded

    def _checkpoints(self, session_id: str) -> CheckpointStore | None:
        if not self.config.git.checkpoints:
            self.unavailable = "checkpoints are off (git.checkpoints is false)"
            return None
        try:
            repo = open_repo(self.workspace, self.state_dir, self.config.git.private_excludes)
            limit = self.config.git.max_file_mb
            repo.max_file_bytes = limit * 2**20 if limit > 0 else None
            prune_sessions(repo, self.state_dir, self.config.git.keep_sessions, session_id)
        except GitUnavailable as e:
            self.unavailable = str(e)
            return None
        except (*GIT_ERRORS, OSError) as e:
            self.unavailable = f"checkpoints are off: git failed ({first_line(str(e), 200)})"
            return None
        return CheckpointStore(repo, self.state_dir, session_id)

    def _meta(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "created": round(time.time(), 3),
            "workspace": str(self.workspace),
            "model": self.client.model,
            "function_calling": self.client.function_calling,
            "approval": self.config.agent.approval,
        }

    # -- events and the gate ------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        if self.recorder is not None:
            self.recorder(event)
        if isinstance(event, IterationStarted) and event.iteration == 1:
            self._guard(lambda s: s.begin_turn(self._current_task()))
        elif isinstance(event, TaskFinished):
            self.finish_turn()

    def before_change(self) -> None:
        """Called for an approved call that may change files: this turn's checkpoint, if not yet."""
        if self.store is not None and self.store.running is None:
            turn = self._guard(lambda s: s.ensure_checkpoint(), "undo will not cover this turn")
            if turn is not None and turn.skipped:
                left_out = ", ".join(turn.skipped[:5]) + (" ..." if len(turn.skipped) > 5 else "")
                self.emit(
                    Notice("warning", f"not in the checkpoint, so undo cannot restore them: {left_out}")
                )

    def finish_turn(self) -> None:
        if self.store is None or self.store.running is None:
            return
        turn = self._guard(lambda s: s.end_turn())
        if turn is not None and self.config.git.auto_commit:
            report = self._guard(lambda s: commit_turn(s, turn), "the agent's changes were not committed")
            if report is not None and report.commits:
                who = " (your earlier changes first, separately)" if report.user_commit else ""
                self.emit(Notice("info", f"Committed the agent's changes as {report.commits[-1][:10]}{who}."))

    def _guard(self, action: Callable[[CheckpointStore], Any], consequence: str = "") -> Any:
        """Run a checkpoint action; a git failure becomes a warning, never a stopped task."""
        if self.store is None:
            return None
        try:
            return action(self.store)
        except (*GIT_ERRORS, OSError) as e:
            tail = f"; {consequence}" if consequence else ""
            self.emit(Notice("warning", f"checkpoint failed: {first_line(str(e), 200)}{tail}"))
            return None

    def _current_task(self) -> str:
        for entry in reversed(self.conversation.entries):
            if isinstance(entry, UserMessage) and entry.kind == "task":
                return entry.content
        return ""

    def close(self) -> None:
        """End the running turn (Ctrl-C, a crash of the model server) and flush the log."""
        self.finish_turn()
        if self.recorder is not None:
            self.recorder.close()


def resumed_message(loaded: LoadedSession) -> str:
    task = first_line(loaded.first_task, 200)
    turns = f"{loaded.turns} turn{'' if loaded.turns == 1 else 's'}"
    lines = [f"Resumed session {loaded.id}: {turns}; first task: {task}"]
    if loaded.interrupted_calls:
        lines.append(
            f"{loaded.interrupted_calls} tool call{' had' if loaded.interrupted_calls == 1 else 's had'} not "
            "finished when it stopped; the model is told it was interrupted."
        )
    lines += loaded.warnings
    return "\n".join(lines)
