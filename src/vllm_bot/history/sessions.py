"""Saved sessions: the conversation as JSON lines under `.vllm-bot/sessions/<id>.jsonl`.

Records: "meta" (first line), "entry" (a conversation entry), "result" (one tool result as soon as
its call finished, before the turn's results are complete), "reset" (the history was cleared or
replaced; the entries that follow are the new history), "mode" (function calling switched) and
"task" (a task finished). Each record is one write of one line, so a crashed agent loses at most the
line being written (a torn last line is dropped on load). A background thread fsyncs what was
written: the agent never waits for the disk between two model requests (an fsync costs it 1-20 ms,
and a turn writes three or four records), and a crash of the whole machine loses only the records
of the last moments.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..calls import AssistantTurn, ToolResult, Usage
from ..cliargs import program_name
from ..conversation import Entry, ToolResults, UserMessage
from ..errors import EXIT_USAGE, UserFacingError
from .session_codec import entry_from_dict, repair, result_from_dict

SESSIONS_DIR = "sessions"  # inside .vllm-bot/
FORMAT_VERSION = 1


class SessionNotFound(UserFacingError):
    exit_code = EXIT_USAGE


def new_session_id() -> str:
    """Sortable by start time, unique enough for one workspace: 20250131-142233-9f3a."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def sessions_dir(state_dir: Path) -> Path:
    return state_dir / SESSIONS_DIR


class SessionLog:
    """Appends records to one session file, created on the first write (a session without a task
    leaves no file). A torn last line left by a crash is cut off before appending. Each record is
    one write() on an O_APPEND descriptor, so a concurrent appender (`undo` from another shell)
    never splits it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._syncer: _Syncer | None = None
        self.closed = False

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def write(self, record: dict[str, Any]) -> None:
        if self.closed:
            return
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _cut_torn_tail(self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._syncer = _Syncer(self._fd)
        record = {"type": record.pop("type"), "t": round(time.time(), 3), **record}
        data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        while data:
            data = data[os.write(self._fd, data) :]
        assert self._syncer is not None
        self._syncer.written()

    def close(self) -> None:
        """Close the file once everything written is on disk."""
        self.closed = True
        if self._syncer is not None:
            self._syncer.close()
            self._syncer = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _Syncer:
    """fsyncs one file descriptor in a background thread after writes, one fsync for all the writes
    made while the last one ran."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._wake = threading.Condition()
        self._dirty = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="vllm-bot-fsync", daemon=True)
        self._thread.start()

    def written(self) -> None:
        with self._wake:
            self._dirty = True
            self._wake.notify()

    def close(self) -> None:
        """Return after the last write is synced."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not (self._dirty or self._closing):
                    self._wake.wait()
                if not self._dirty:
                    return
                self._dirty = False
            try:
                os.fsync(self.fd)
            except OSError:
                return  # a file system that cannot sync; the writes themselves went through


def _cut_torn_tail(path: Path) -> None:
    if not path.is_file():
        return
    with path.open("rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


@dataclass
class LoadedSession:
    id: str
    path: Path
    meta: dict[str, Any]
    entries: list[Entry]
    function_calling: bool | None = None
    interrupted_calls: int = 0  # calls given an "interrupted" result by the repair
    warnings: list[str] = field(default_factory=list)
    tasks_finished: int = 0
    saved: list[Entry] = field(default_factory=list)  # the entries as in the file, before the repair

    @property
    def turns(self) -> int:
        """User turns: task messages from the user."""
        return sum(1 for e in self.entries if isinstance(e, UserMessage) and e.kind == "task")

    @property
    def first_task(self) -> str:
        for e in self.entries:
            if isinstance(e, UserMessage) and e.kind == "task":
                return e.content
        return str(self.meta.get("first_task", ""))

    @property
    def updated(self) -> float:
        return self.path.stat().st_mtime

    def usage(self) -> Usage:
        total = Usage()
        for e in self.entries:
            if isinstance(e, AssistantTurn) and e.usage is not None:
                total.add(e.usage)
        return total


def load_session(path: Path) -> LoadedSession:
    """Read a session file; the result is repaired so every tool call has exactly one result."""
    loaded = LoadedSession(path.stem, path, {}, [])
    entries: list[Entry] = []
    pending: list[ToolResult] = []
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            pending = _apply(record, loaded, entries, pending)
        except (ValueError, KeyError, TypeError) as e:
            torn = number == len(lines)  # the last line has no newline: cut off by a crash
            loaded.warnings.append(
                f"{path.name}: the last line was cut off (a crash while writing); it was dropped"
                if torn
                else f"{path.name} line {number} is damaged and was skipped ({e})"
            )
    loaded.saved = list(entries)
    loaded.entries, loaded.interrupted_calls = repair(entries, pending)
    return loaded


def _apply(
    record: dict[str, Any], loaded: LoadedSession, entries: list[Entry], pending: list[ToolResult]
) -> list[ToolResult]:
    """Apply one record; returns the results still waiting for their turn's results entry."""
    kind = record["type"]
    if kind == "meta":
        loaded.meta = record
        loaded.function_calling = record.get("function_calling")
    elif kind == "entry":
        entry = entry_from_dict(record["entry"])
        if (
            pending
            and not isinstance(entry, ToolResults)
            and entries
            and isinstance(entries[-1], AssistantTurn)
        ):
            # Results of a turn cut short by a crash, followed by something appended later (an undo
            # note): keep them; the repair adds the missing ones.
            entries.append(ToolResults(pending, entries[-1].via))
        entries.append(entry)
        return []
    elif kind == "result":
        return [*pending, result_from_dict(record["result"])]
    elif kind == "reset":
        entries.clear()
        return []
    elif kind == "mode":
        loaded.function_calling = bool(record["function_calling"])
    elif kind == "task":
        loaded.tasks_finished += 1
    return pending


def list_sessions(state_dir: Path) -> list[LoadedSession]:
    """Every saved session in the workspace, most recently used first."""
    folder = sessions_dir(state_dir)
    paths = newest_first(folder.glob("*.jsonl"))
    return [load_session(p) for p in paths]


def find_session(state_dir: Path, wanted: str | None) -> LoadedSession:
    """`wanted`: a session id or a unique prefix of one; None: the most recent session."""
    folder = sessions_dir(state_dir)
    paths = newest_first(folder.glob("*.jsonl"))
    if not paths:
        raise SessionNotFound(
            f"no saved session in {state_dir.parent}; start one with `{program_name()}` in that directory"
        )
    if wanted is None:
        return load_session(paths[0])
    matches = matching(paths, wanted)
    if len(matches) != 1:
        raise no_single_match(wanted, matches)
    return load_session(matches[0])


def matching(paths: list[Path], wanted: str) -> list[Path]:
    """The files (named by session id) that `wanted` names: the exact id, else those it prefixes."""
    return [p for p in paths if p.stem == wanted] or [p for p in paths if p.stem.startswith(wanted)]


def no_single_match(wanted: str, matches: list[Path]) -> SessionNotFound:
    found = "several sessions match" if matches else "no session matches"
    return SessionNotFound(f"{found} {wanted!r}; `{program_name()} sessions` lists them")


def first_line(text: str, limit: int = 72) -> str:
    """The first line of `text`, cut to `limit` characters with "…"; "" for blank text."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe_session(s: LoadedSession) -> dict[str, Any]:
    """One row for the `sessions` command and /resume."""
    task = first_line(s.first_task, 70) or "(no task yet)"
    return {
        "id": s.id,
        "time": time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
        "turns": s.turns,
        "task": task,
    }


def newest_first(paths: Iterable[Path]) -> list[Path]:
    """Most recently written first; ids start with their creation time, so they break mtime ties
    (file times are only as fine as the kernel's clock tick)."""
    return sorted(paths, key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
