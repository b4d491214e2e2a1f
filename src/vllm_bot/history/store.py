"""Never lose the user's work: checkpoints before the agent changes files, and the saved conversation.

`attach_history(session, resume=...)` hooks both into a Session without touching the loop: the
approval gate is wrapped (an allowed call that may change files first triggers this turn's
checkpoint) and the agent's events are teed into the session recorder and the turn tracker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..calls import ToolCall, ToolResult
from ..config import Config
from ..conversation import Conversation, UserMessage
from ..events import Emit, Event, IterationStarted, Notice, TaskFinished
from .checkpoints import CheckpointStore, prune_sessions
from .gitrepo import GitUnavailable, open_repo
from .safegit import GIT_ERRORS
from .session_recorder import SessionRecorder
from .sessions import LoadedSession, SessionLog, find_session, first_line, new_session_id, sessions_dir

Gate = Callable[[ToolCall], ToolResult | None]


class History:
    """Checkpoints (None when off or unavailable) and the session log for one agent session."""

    def __init__(
        self, config: Config, workspace: Path, state_dir: Path, conversation: Conversation, emit: Emit
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.state_dir = state_dir
        self.conversation = conversation
        self.emit = emit  # the session's emit (notices)
        self.function_calling: Callable[[], bool] = lambda: config.vllm.enable_function_calling
        self.model: Callable[[], str] = lambda: config.vllm.model
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
            "model": self.model(),
            "function_calling": self.function_calling(),
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
            from .autocommit import commit_turn

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


def checkpoint_gate(inner: Gate, history: History) -> Gate:
    """The approval gate, plus a checkpoint before the first allowed call of a turn that may change
    files. A refused call changes nothing, so it takes no checkpoint."""

    def gate(call: ToolCall) -> ToolResult | None:
        refused = inner(call)
        if refused is None and may_change_files(call):
            history.before_change()
        return refused

    return gate


def may_change_files(call: ToolCall) -> bool:
    """Whether a call that is about to run needs the turn's checkpoint first: not for reads and not for
    commands the approval policy knows to be read-only (`ls`, `git status`); yes for everything else
    (writes, edits, other commands, MCP tools, anything unknown)."""
    # the policy's shell analysis is imported with the first call run, not at start-up
    from ..safety.policy import tool_kind
    from ..safety.readonly import is_read_only_command

    if tool_kind(call.name) == "read":
        return False
    if call.name == "exec":
        return not is_read_only_command(str(call.arguments.get("command", "")))
    return True


def attach_history(session: Any, resume: str | None = None, *, latest: bool = False) -> History:
    """Wire checkpoints and session saving into `session` (a Session); resume a saved one if asked
    (`latest` for --continue, `resume` for --resume ID)."""
    agent = session.agent
    history = History(session.config, session.workspace, session.state_dir, agent.conversation, session.emit)
    history.function_calling = lambda: bool(session.client.function_calling)
    history.model = lambda: str(session.client.model)
    if latest or resume:
        loaded = history.resume(None if latest else resume)
        restore_mode(session, loaded)
        session.say(resumed_message(loaded))
    if history.store is None and session.config.git.checkpoints:
        history.emit(Notice("warning", f"{history.unavailable}; /undo will not work in this session"))
    agent.gate = checkpoint_gate(agent.gate, history)
    session.add_consumer(history.on_event)  # records the session's events in its file
    return history


def restore_mode(session: Any, loaded: LoadedSession) -> None:
    """Function calling as the session left it (config can only turn it off) and the token total."""
    if loaded.function_calling is False:
        session.client.function_calling = False
        session.resumed_in_text_mode = True  # Session.start keeps it after configuring the profile
    session.agent.usage = loaded.usage()


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
