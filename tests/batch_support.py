"""Shared helpers for the batch and eval tests: tiny repositories, tasks files, scripted agents and
running `vllm-bot batch` / `vllm-bot eval` as real subprocesses against the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "cli.py"
BROKEN = "def add(a, b):\n    return a - b\n"
CHECK = "python3 -c 'import app; assert app.add(2, 3) == 5'"


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    for name, text in (files or {"app.py": BROKEN}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path


def write_tasks(path: Path, tasks: list[dict]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def fix_task(task_id: str, workspace: str = "repo", **extra) -> dict:
    """A task whose text carries its id (the fake server's conversation key) and whose check passes
    once app.add adds."""
    return {
        "id": task_id,
        "workspace": workspace,
        "task": f"Fix add() in app.py [{task_id}]",
        "check": CHECK,
        **extra,
    }


def key(task_id: str) -> str:
    return f"[{task_id}]"


def fixing() -> list[Reply]:
    """A scripted agent that reads, fixes and answers (three model turns)."""
    return [
        Reply(content="Reading.", calls=[Call("read", {"path": "app.py"})]),
        Reply(calls=[Call("edit", {"path": "app.py", "oldText": "a - b", "newText": "a + b"})]),
        Reply(content="Fixed add()."),
    ]


def giving_up() -> list[Reply]:
    """An agent that answers without changing anything (its check fails)."""
    return [Reply(content="I could not find the problem.")]


def stalling() -> list[Reply]:
    """An agent whose first reply never finishes streaming (it runs until stopped or out of time)."""
    return [Reply(content="Let me think about this for a long while.", stall_after_bytes=80)]


def write_config(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CLI), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env()
    )


def start(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CLI), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env(),
    )


def env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEBUG", "VLLM_BASE_URL", "VLLM_MODEL", "VLLM_API_KEY")
    }


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def worktrees(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    )
    return [line for line in out.stdout.splitlines() if line.startswith("worktree ")]
