"""Helpers of the eval tests: the reference solutions (tests/eval/solutions.yaml, never shipped in
the sdist; a repo task's solution is the bundled project as shipped), a task's workspace as the
agent would leave it, and its check run as batch runs it (hidden files copied in first)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from vllm_bot.eval.suite import EvalTask, bundled, write_files
from vllm_bot.testing.script import Call, Reply

SOLUTIONS_FILE = Path(__file__).with_name("solutions.yaml")
TASKS = bundled()
BY_ID = {t.id: t for t in TASKS}
WHOLE_SUITE = bool(os.environ.get("CI"))  # CI runs every task; a plain run a sample of each kind


def solutions() -> dict[str, dict[str, str]]:
    if not SOLUTIONS_FILE.is_file():
        pytest.skip("the reference solutions are not here (they are not shipped in the sdist)")
    return yaml.safe_load(SOLUTIONS_FILE.read_text(encoding="utf-8"))


def solution(task: EvalTask) -> dict[str, str | None]:
    """The files a reference solution writes (None: the file is removed)."""
    return dict(task.solution) if task.tier == "repo" else dict(solutions()[task.id])


def sample(
    tasks: list[EvalTask] = TASKS, by: tuple[str, ...] = ("tier", "kind", "language")
) -> list[EvalTask]:
    """Every task in CI; else the first task of each combination of `by`."""
    if WHOLE_SUITE:
        return tasks
    seen: set[tuple[str, ...]] = set()
    chosen = []
    for task in tasks:
        group = tuple(getattr(task, name) for name in by)
        if group not in seen:
            seen.add(group)
            chosen.append(task)
    return chosen


def key(task: EvalTask) -> str:
    """The fake server finds a task's conversation by the first line of its text."""
    return task.task.splitlines()[0]


def solving(task: EvalTask) -> list[Reply]:
    """A scripted model that writes the reference solution and says so."""
    files = solution(task)
    calls = [
        Call("write", {"path": path, "content": text}) for path, text in files.items() if text is not None
    ]
    calls += [Call("exec", {"command": f"rm {path}"}) for path, text in files.items() if text is None]
    return [Reply(content="Writing the fix.", calls=calls), Reply(content="Done: the fix is in place.")]


def doing_nothing() -> list[Reply]:
    return [Reply(content="Done.")]


def apply(root: Path, files: dict[str, str | None]) -> None:
    write_files(root, {k: v for k, v in files.items() if v is not None})
    for name in [k for k, v in files.items() if v is None]:
        (root / name).unlink()


def start(task: EvalTask, root: Path) -> Path:
    """The task's repository files in `root` (no git: the check does not need it)."""
    root.mkdir(parents=True)
    write_files(root, task.files)
    return root


def run_check(task: EvalTask, workspace: Path) -> subprocess.CompletedProcess[str]:
    """The task's check as batch runs it (outside the sandbox here): hidden files copied in first."""
    write_files(workspace, task.hidden)
    return subprocess.run(
        ["bash", "-c", task.check()], cwd=workspace, capture_output=True, text=True, timeout=300
    )


def missing_programs(task: EvalTask) -> None:
    if task.missing():
        pytest.skip(f"{task.id} needs {', '.join(task.missing())}")
