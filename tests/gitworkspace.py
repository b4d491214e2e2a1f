"""Test helpers: real git repositories and plain directories in tmp_path, and tree manifests."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

SKIP_DIRS = {".git", ".vllm-bot"}


def git(ws: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def isolate_git(monkeypatch, tmp_path: Path) -> None:
    """No global or system git config, no repository discovery above tmp_path, a known identity."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)


def init_repo(ws: Path, files: dict[str, str] | None = None, *, identity: bool = True) -> Path:
    ws.mkdir(parents=True, exist_ok=True)
    git(ws, "init", "-q", "-b", "main")
    if identity:
        git(ws, "config", "user.name", "Test User")
        git(ws, "config", "user.email", "user@example.com")
    for path, text in (files or {"README.md": "hello\n"}).items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=Test User", "-c", "user.email=user@example.com", "commit", "-q", "-m", "initial")
    return ws


def user_git_state(ws: Path, *, exact: bool = True) -> dict[str, object]:
    """What must never change behind the user's back: the index (its bytes, or with exact=False its
    entries, for when the agent itself ran git commands that refresh stat data), HEAD, branches,
    stash."""
    index_path = ws / git(ws, "rev-parse", "--git-path", "index").strip()
    return {
        "index": index_path.read_bytes() if exact else git(ws, "ls-files", "--stage"),
        "head": git(ws, "rev-parse", "HEAD").strip(),
        "symbolic": git(ws, "symbolic-ref", "-q", "HEAD", check=False).strip(),
        "branches": git(ws, "for-each-ref", "refs/heads", "refs/tags", "refs/remotes"),
        "stash": git(ws, "stash", "list"),
    }


def manifest(ws: Path, skip=lambda rel: False) -> dict[str, tuple[str, bytes, bool]]:
    """Every file under ws except .git/.vllm-bot and paths `skip(rel)` is true for: kind, bytes (or
    link target), executable bit."""
    out: dict[str, tuple[str, bytes, bool]] = {}
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS or Path(root) != ws]
        names = list(files) + [d for d in dirs if os.path.islink(os.path.join(root, d))]
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws).replace(os.sep, "/")
            if skip(rel):
                continue
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full).encode(), False)
            else:
                out[rel] = ("file", Path(full).read_bytes(), bool(st.st_mode & stat.S_IXUSR))
    return out
