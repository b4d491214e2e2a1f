"""Slash commands for checkpoints and sessions: /undo, /diff, /resume."""

from __future__ import annotations

import sys
from typing import Any

from ...history.ops import ask_yes_no, diff_text, session_rows, undo_last
from ...history.sessions import SessionNotFound, list_sessions
from ..recap import recap
from ..typeahead import read_line
from .registry import command


def _store(session: Any) -> Any:
    history = session.history
    if history.store is None:
        session.say(history.unavailable or "Checkpoints are off in this session.")
    return history.store


@command("undo", "Put back the files the agent changed in its last turn (repeat to go further back)")
def _undo(session: Any, arg: str) -> None:
    store = _store(session)
    if store is None:
        return
    outcome = undo_last(store, ask=lambda q: ask_yes_no(q, session.say, read_line))
    for line in outcome.lines:
        session.say(line)
    if outcome.note_for_model:
        session.history.conversation.add_user(outcome.note_for_model, kind="note")


@command("diff", "Show what the agent changed in its last turn (or the session)", "[session] [stat]")
def _diff(session: Any, arg: str) -> None:
    words = set(arg.split())
    unknown = words - {"session", "stat"}
    if unknown:
        session.say(f"Unknown option {sorted(unknown)[0]!r}. Usage: /diff [session] [stat]")
        return
    store = _store(session)
    if store is None:
        return
    color = sys.stderr.isatty()
    session.say(diff_text(store, whole_session="session" in words, stat="stat" in words, color=color))


@command("resume", "List saved sessions, or continue one by number or id", "[N|ID]")
def _resume(session: Any, arg: str) -> None:
    history = session.history
    saved = list_sessions(history.state_dir)
    choice = arg.strip()
    if not choice:
        for i, line in enumerate(session_rows(history.state_dir, history.session_id)):
            session.say(f"{'' if i == 0 else str(i) + '.':>4} {line}")
        if not saved:
            return
        try:
            choice = read_line("Resume which? (number or id, empty to cancel) ").strip()
        except EOFError:
            return
        if not choice:
            return
    wanted = saved[int(choice) - 1].id if choice.isdigit() and 0 < int(choice) <= len(saved) else choice
    try:
        session.resume(wanted)
    except SessionNotFound as e:
        session.say(str(e))
        return
    session.front.recap(recap(session.agent.conversation.entries))
