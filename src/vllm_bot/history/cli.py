"""Shell sub-commands `undo`, `diff` and `sessions` (names and flags are a contract, like app.py's).

Each factory returns (add_arguments, run) for app.SUBCOMMANDS; run(args) returns the exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..cliargs import resolve_workspace, workspace_flag
from ..config.statedir import STATE_DIR_NAME
from ..conversation import UserMessage
from ..errors import EXIT_OK, EXIT_RUNTIME, UserFacingError
from .ops import ask_yes_no, diff_report, session_rows, store_from_disk, turn_rows, undo_last
from .safegit import GitFailed
from .session_codec import entry_to_dict
from .sessions import SessionLog, describe_session, list_sessions, sessions_dir

Factory = tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]


def _workspace_flags(parser: argparse.ArgumentParser) -> None:
    workspace_flag(parser)
    parser.add_argument("--id", metavar="SESSION", help="a session id or prefix (default: the latest)")


def _store(args: argparse.Namespace) -> Any:
    return store_from_disk(resolve_workspace(args.workspace), args.id)


def _no_checkpoints(args: argparse.Namespace) -> str:
    which = f"session {args.id!r}" if args.id else "this workspace"
    return f"No checkpoints for {which}: the agent has not changed files here (or --id matches none)."


def undo_command() -> Factory:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Put back the files the agent changed in its last turn (repeat to step further back). "
            "When you may have edited one of them since (also: the turn never finished), it asks; "
            "without a terminal it refuses unless --force. Exit 1 when nothing was undone."
        )
        _workspace_flags(parser)
        parser.add_argument("--force", action="store_true", help="overwrite files you edited since")
        parser.add_argument("--list", action="store_true", help="list the session's checkpoints and stop")

    def run(args: argparse.Namespace) -> int:
        store = _store(args)
        if store is None:
            print(_no_checkpoints(args), file=sys.stderr)
            return EXIT_RUNTIME
        if args.list:
            print("\n".join(turn_rows(store)))
            return EXIT_OK
        ask = _ask_in_terminal if sys.stdin.isatty() else None
        with _git_failure(store):
            outcome = undo_last(store, ask=ask, force=args.force)
        if not outcome.done and outcome.lines[0].startswith("Nothing to undo"):
            outcome.lines.append(f"(session {store.session_id}; `sessions` lists others, --id picks one)")
        print("\n".join(outcome.lines), file=sys.stdout if outcome.done else sys.stderr)
        if outcome.note_for_model:
            _tell_model(store, outcome.note_for_model)
        return EXIT_OK if outcome.done else EXIT_RUNTIME

    return add_arguments, run


@contextmanager
def _git_failure(store: Any) -> Iterator[None]:
    """A failed git command becomes one clear sentence (and, for a session of an earlier version,
    how to restore by hand) instead of a traceback."""
    try:
        yield
    except GitFailed as e:
        hint = store.ledger.earlier_hint()
        raise UserFacingError(
            f"git failed: {str(e).splitlines()[0]}" + (f"\n{hint}" if hint else "")
        ) from None


def _ask_in_terminal(question: str) -> bool:
    return ask_yes_no(question, lambda text: print(text, file=sys.stderr), _read_line)


def _read_line(prompt: str) -> str:
    """A line from stdin, the prompt on stderr (stdout carries only the result)."""
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _tell_model(store: Any, note: str) -> None:
    """Append the undo note to the saved conversation, so a resumed session knows."""
    path = sessions_dir(store.dir.parent) / f"{store.session_id}.jsonl"
    if path.is_file():
        log = SessionLog(path)
        log.write({"type": "entry", "entry": entry_to_dict(UserMessage(note, "note"))})
        log.close()


def diff_command() -> Factory:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Show what the agent changed in its last turn (--session: in the whole session), from the "
            "turn's start to its end snapshot, ignored files excluded. Files changed since the turn "
            "ended are listed on stderr; a turn that never finished is compared with the files now. "
            "Exit 1 when the workspace has no checkpoints (as undo)."
        )
        _workspace_flags(parser)
        parser.add_argument("--session", action="store_true", help="since the session started")
        parser.add_argument("--stat", action="store_true", help="a summary per file instead of the patch")

    def run(args: argparse.Namespace) -> int:
        store = _store(args)
        if store is None:  # like undo: nothing to work on is a failure a script can see
            print(_no_checkpoints(args), file=sys.stderr)
            return EXIT_RUNTIME
        color = sys.stdout.isatty()
        with _git_failure(store):
            report = diff_report(store, whole_session=args.session, stat=args.stat, color=color)
        print(report.text)
        for note in report.notes:  # stderr: `diff > x.patch` stays a patch
            print(note, file=sys.stderr)
        return EXIT_OK

    return add_arguments, run


def sessions_command() -> Factory:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.description = "List the saved sessions of a workspace (resume one with --resume ID)."
        workspace_flag(parser)
        parser.add_argument("--json", action="store_true", help="one JSON object per line")

    def run(args: argparse.Namespace) -> int:
        state_dir = resolve_workspace(args.workspace) / STATE_DIR_NAME
        if args.json:
            for s in list_sessions(state_dir):
                print(json.dumps(describe_session(s), ensure_ascii=False))
            return EXIT_OK
        print("\n".join(session_rows(state_dir)))
        return EXIT_OK

    return add_arguments, run
