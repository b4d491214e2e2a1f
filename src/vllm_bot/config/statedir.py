"""The agent's own state: `.vllm-bot/` inside the workspace and a per-user state dir."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

STATE_DIR_NAME = ".vllm-bot"


def is_stand_in(dot_git: Path | str) -> bool:
    """True for an empty `.git` directory: the mount point that masks a missing repository while a
    sandboxed command runs or waits to (or left by a session that was killed). git passes over it
    when it looks for a repository, and so do we."""
    if os.path.islink(dot_git):
        return False
    try:
        with os.scandir(dot_git) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def workspace_state_dir(workspace: Path, create: bool = True) -> Path:
    """`<workspace>/.vllm-bot/`, which ignores its own contents so `git status` stays clean."""
    path = workspace / STATE_DIR_NAME
    if create:
        path.mkdir(exist_ok=True)
        ignore = path / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by vllm-bot: keep the agent's state out of git\n*\n")
    return path


def user_state_dir(create: bool = True, env: Mapping[str, str] | None = None) -> Path:
    """Per-user state (server capability cache, ...): $XDG_STATE_HOME/vllm-bot; `env` (default ours)
    gives the variables and HOME."""
    env = os.environ if env is None else env
    base = Path(env.get("XDG_STATE_HOME") or Path(env.get("HOME") or Path.home()) / ".local" / "state")
    path = base / "vllm-bot"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write(path: Path, text: str) -> None:
    """Write by temp file + fsync + rename, so a crash leaves the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
