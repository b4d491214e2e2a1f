"""Directory listings for read, and near names for a path that does not exist."""

from __future__ import annotations

import difflib
import heapq
import os
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from ..config.statedir import STATE_DIR_NAME
from .context import human_size

LIST_MAX_ENTRIES = 500
_SCAN_MAX_ENTRIES = 20000  # bounded cost of the near-name search on huge trees
# Not searched for similar names nor offered as completions: version control, our state, caches, venvs.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", STATE_DIR_NAME, "node_modules", "__pycache__", ".venv", "venv", ".tox"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache"}
)


def list_directory(directory: Path, shown: str, limit: int = LIST_MAX_ENTRIES) -> str:
    """Sorted names (dirs end in '/', links show their target) with file sizes; capped at `limit`."""
    total = dirs = 0

    def entries() -> Iterator[tuple[str, os.DirEntry[str]]]:
        nonlocal total, dirs
        with os.scandir(directory) as it:
            for entry in it:
                total += 1
                dirs += entry.is_dir(follow_symlinks=False)
                yield entry.name, entry

    first = heapq.nsmallest(limit, entries(), key=lambda pair: pair[0])
    label = "." if shown == "." else shown.rstrip("/") + "/"
    if total == 0:
        return f"Directory {label} is empty."
    noun = "entry" if total == 1 else "entries"
    lines = [f"Directory {label} ({total:,} {noun}, {dirs:,} director{'y' if dirs == 1 else 'ies'}):"]
    lines += [_describe(entry) for _, entry in first]
    if total > limit:
        lines.append(
            f"... {total - limit:,} more entries not shown. Use exec with `ls` or `find` "
            "and a pattern to narrow it down."
        )
    return "\n".join(lines)


def _describe(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return f"{entry.name} -> {os.readlink(entry.path)}"
        if entry.is_dir(follow_symlinks=False):
            return entry.name + "/"
        return f"{entry.name}  ({human_size(entry.stat(follow_symlinks=False).st_size)})"
    except OSError:
        return entry.name  # vanished or unreadable while listing


def missing_path(target: Path, root: Path, display: Callable[[Path], str], advice: str) -> str:
    """ "PATH does not exist.", the close paths `suggest_paths` finds, then `advice`, as one message."""
    parts = (f"{display(target)} does not exist.", suggest_paths(target, root, display), advice)
    return " ".join(part for part in parts if part)


def suggest_paths(target: Path, root: Path, display: Callable[[Path], str]) -> str:
    """A sentence naming existing paths close to the missing `target` (a real path), or ''."""
    parent = target.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent
    parts: list[str] = []
    if not parent.is_dir():
        return f"{display(parent)} is a file, not a directory."
    if parent != target.parent:
        parts.append(
            f"Directory {display(target.parent)}/ does not exist; the nearest existing is {display(parent)}/."
        )
    else:
        names = _names(parent)
        close = difflib.get_close_matches(target.name, names, n=4, cutoff=0.6)
        close += [n for n in names if n.lower() == target.name.lower() and n not in close]
        if close:
            parts.append("Similar names there: " + ", ".join(display(parent / n) for n in close) + ".")
    elsewhere = [p for p in _find_by_name(root, target.name) if p != target]
    if elsewhere:
        parts.append(
            f"Files named {target.name} elsewhere: " + ", ".join(display(p) for p in elsewhere) + "."
        )
    return " ".join(parts)


def _names(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as it:
            return [e.name for _, e in zip(range(_SCAN_MAX_ENTRIES), it, strict=False)]
    except OSError:
        return []


def _find_by_name(root: Path, name: str, max_depth: int = 4, max_hits: int = 5) -> list[Path]:
    """Breadth-first search of `root` for entries called `name`, bounded in depth and entries."""
    hits: list[Path] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    seen = 0
    while queue and seen < _SCAN_MAX_ENTRIES and len(hits) < max_hits:
        directory, depth = queue.popleft()
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    seen += 1
                    if entry.name == name:
                        hits.append(Path(entry.path))
                    if (
                        depth < max_depth
                        and entry.name not in SKIP_DIRS
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        queue.append((Path(entry.path), depth + 1))
        except OSError:
            continue
    return hits
