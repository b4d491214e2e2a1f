"""The results file of a batch: one JSON line per finished task, the record that makes a batch resumable.

A line is written with a single `write` of the whole line and then fsync'ed, so Ctrl-C or a crash
leaves whole lines only; after a power cut the last line may be cut short: it is ignored (and cut
off the file) and its task runs again. Finished ids are skipped when the same command runs again.
`merge` joins the results of several shards or machines.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

RESULTS_NAME = "results.jsonl"


class ResultsError(Exception):
    """A results file cannot be read (a line in the middle is not a result); exit 2."""


def results_name(shard: tuple[int, int] | None) -> str:
    """`results.jsonl`, or `results-shard-2-of-4.jsonl`: shards may share an output directory."""
    return RESULTS_NAME if shard is None else f"results-shard-{shard[0]}-of-{shard[1]}.jsonl"


def encode(row: dict[str, Any]) -> bytes:
    """One result as one line of ASCII JSON."""
    return (json.dumps(row, ensure_ascii=True, separators=(",", ":")) + "\n").encode()


def parse(data: bytes, source: str) -> tuple[list[dict[str, Any]], int]:
    """(rows, bytes of whole lines): an unfinished or unreadable last line is left out of both."""
    rows: list[dict[str, Any]] = []
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            if number == len(lines) and end == len(data):  # a torn last line that got its newline
                return rows, end - len(line) - 1
            raise ResultsError(f"{source} line {number}: not a task result; fix or remove that line")
        rows.append(row)
    return rows, end


class ResultsFile:
    """Appends results; `load()` first returns what earlier runs finished."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None

    def load(self) -> tuple[dict[str, dict[str, Any]], str | None]:
        """(finished rows by id, a note when a cut-off last line was dropped)."""
        if not self.path.exists():
            return {}, None
        data = self.path.read_bytes()
        rows, whole = parse(data, str(self.path))
        note = None
        if whole < len(data):
            with self.path.open("r+b") as f:
                f.truncate(whole)
                os.fsync(f.fileno())
            note = f"ignored an unfinished last line of {self.path} (from a crash); its task runs again"
        return {row["id"]: row for row in rows}, note

    def append(self, row: dict[str, Any]) -> None:
        """Write one whole line with one write(), then fsync: never half a line, never lost."""
        line = encode(row)
        with self._lock:
            if self._fd is None:
                created = not self.path.exists()
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                if created:
                    _fsync_dir(self.path.parent)
            written = os.write(self._fd, line)
            while written < len(line):  # a regular file takes it whole; this only guards the contract
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def result_files(paths: list[Path]) -> list[Path]:
    """Each path itself, or for a directory the results files in it (shards' included)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(path.glob("results*.jsonl"))
            if not inside:
                raise ResultsError(f"{path} holds no results*.jsonl (is it a batch output directory?)")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise ResultsError(f"{path} does not exist")
    return found


def merge(paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """(one row per task id, notes): a task found twice keeps the result that finished last."""
    merged: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for path in result_files(paths):
        data = path.read_bytes()
        rows, whole = parse(data, str(path))
        if whole < len(data):
            notes.append(f"{path}: ignored an unfinished last line")
        for row in rows:
            old = merged.get(row["id"])
            if old is not None:
                notes.append(f"task {row['id']!r} has more than one result; kept the one that finished last")
                if str(old.get("finished_at", "")) > str(row.get("finished_at", "")):
                    continue
            merged[row["id"]] = row
    return list(merged.values()), notes


def write_atomic(path: Path, rows: list[dict[str, Any]]) -> None:
    """The whole file or the old one, never half: a temporary file, fsync, rename."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("wb") as f:
        f.write(b"".join(encode(row) for row in rows))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
