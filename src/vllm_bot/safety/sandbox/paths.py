"""Which paths the sandbox protects inside writable trees, and which secrets it hides.

Protected (read-only even inside the workspace, whether or not they exist yet): `.git/hooks`,
`.git/config`, `.git/config.worktree`, `.git/modules` (submodule git dirs carry their own hooks and
config), the `.git` file of a worktree or submodule and the git dirs it points to, `.gitmodules`,
and the agent's `.vllm-bot/`. A workspace without a repository gets an empty `.git` as a mount point
(so no command can make one there); such a stand-in (statedir.is_stand_in) is no repository to git, nor to
us. What is hidden is the boundary's business (safety/boundary.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vllm_bot.config.statedir import STATE_DIR_NAME, is_stand_in

# Not searched for nested repositories: dependency trees that are big and never the user's own repos.
SCAN_SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"})
SCAN_SKIP |= {STATE_DIR_NAME}
SCAN_LIMIT = 20_000  # folders looked at for nested repositories, at most
Kind = Literal["dir", "file"]
GIT_PROTECTED: tuple[tuple[str, Kind], ...] = (("hooks", "dir"), ("config", "file"), ("modules", "dir"))


@dataclass(frozen=True)
class Protected:
    path: Path
    kind: Kind  # what to create as a mount point when it does not exist
    create: bool  # mask it even when missing (creating an empty mount point)


def read_gitdir(git_file: Path) -> Path | None:
    """The directory a `.git` file points to (`gitdir: ...`), resolved; None if unreadable."""
    try:
        text = git_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            return (git_file.parent / line.split(":", 1)[1].strip()).resolve()
    return None


def git_dirs(root: Path) -> list[Path]:
    """The git dirs of the repository rooted at `root`: `.git`, or the targets of a `.git` file
    (the worktree's or submodule's git dir and its common dir)."""
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [] if is_stand_in(dot_git) else [dot_git]
    if not dot_git.is_file():
        return []
    target = read_gitdir(dot_git)
    if target is None:
        return []
    dirs = [target]
    commondir = target / "commondir"
    if commondir.is_file():
        common = (target / commondir.read_text(encoding="utf-8", errors="replace").strip()).resolve()
        dirs.append(common)
    return dirs


def protected_paths(workspace: Path) -> list[Protected]:
    """Everything under `workspace` (and the git dirs it uses) that commands must not change."""
    workspace = workspace.resolve()
    found = [Protected(workspace / STATE_DIR_NAME, "dir", True)]
    dot_git = workspace / ".git"
    if dot_git.is_symlink() or dot_git.is_file():
        found.append(Protected(dot_git, "file", False))
    elif not dot_git.exists() or is_stand_in(dot_git):
        found.append(Protected(dot_git, "dir", True))  # no repository: nobody may create one
    for git_dir in git_dirs(workspace):
        found.extend(Protected(git_dir / name, kind, True) for name, kind in GIT_PROTECTED)
        found.append(Protected(git_dir / "config.worktree", "file", False))
    found.append(Protected(workspace / ".gitmodules", "file", False))
    return found


def is_protected(path: Path, workspace: Path) -> bool:
    """True if writing `path` would touch a protected path of `workspace` (for in-process file tools)."""
    resolved = path.resolve()
    return any(resolved == p.path or p.path in resolved.parents for p in protected_paths(workspace))


def nested_repositories(root: Path, limit: int = SCAN_LIMIT) -> tuple[list[Path], bool]:
    """Folders below `root` (not `root` itself) that hold a `.git`, and whether the search stopped at
    `limit` folders before the end."""
    found: list[Path] = []
    for seen, (folder, dirnames, filenames) in enumerate(os.walk(root), start=1):
        if seen > limit:
            return found, True
        if (".git" in dirnames or ".git" in filenames) and folder != str(root):
            found.append(Path(folder))
        dirnames[:] = [name for name in dirnames if name not in SCAN_SKIP]
    return found, False


def host_search_path(inside: Sequence[Path] = ()) -> str:
    """`PATH` for the programs the agent starts on the host (bubblewrap, git, MCP servers): only
    absolute entries, none inside the current directory or `inside` (a workspace). An entry such as
    `./node_modules/.bin`, or an empty one, would find a program the model planted in the workspace."""
    try:
        here = [Path.cwd().resolve(), *(p.resolve() for p in inside)]
    except OSError:  # the current directory was removed
        here = [p.resolve() for p in inside]
    kept = []
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        real = Path(os.path.realpath(entry))
        if not any(real == h or real.is_relative_to(h) for h in here) and entry not in kept:
            kept.append(entry)
    return os.pathsep.join(kept)


def host_which(program: str, inside: Sequence[Path] = ()) -> str | None:
    """`shutil.which` over `host_search_path`: never a program from the workspace."""
    return shutil.which(program, path=host_search_path(inside))
