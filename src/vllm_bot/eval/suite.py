"""The bundled eval suite: small self-checking coding tasks, each a tiny repository (`tasks/*.yaml`).

A task file holds the task text, the repository's files, the hidden files of its check (tests the
agent never sees: batch copies them into the workspace only after the agent finishes, `check_files`)
and the check command (`{python}` is the running interpreter). `materialize` turns the chosen tasks into git
repositories and a TASKS.jsonl for `batch`; the hidden files go to a directory the sandbox hides
from the agent's commands. A task whose `requires` (e.g. node) is missing here is skipped.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..batch.copies import make_repository
from ..cliargs import program_name

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
SUITE_VERSION = 1  # bumped whenever a task changes, so scores over time compare like with like
KEYS = {"kind", "language", "task", "files", "hidden", "check", "requires"}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "vllm-bot eval",
    "GIT_AUTHOR_EMAIL": "eval@localhost",
    "GIT_COMMITTER_NAME": "vllm-bot eval",
    "GIT_COMMITTER_EMAIL": "eval@localhost",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}


@dataclass
class EvalTask:
    id: str
    kind: str  # "bug fix", "feature", "refactor", "failing test"
    language: str
    task: str
    files: dict[str, str]
    hidden: dict[str, str]
    check: str
    requires: list[str] = field(default_factory=list)

    def missing(self) -> list[str]:
        """Programs this task needs that are not on PATH here."""
        return [program for program in self.requires if shutil.which(program) is None]


def bundled(directory: Path = TASKS_DIR) -> list[EvalTask]:
    """Every task of the suite, by id."""
    import yaml

    tasks = []
    for path in sorted(directory.glob("*.yaml")):
        data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        unknown = set(data) - KEYS
        if unknown:
            raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
        tasks.append(EvalTask(id=path.stem, **data))
    return tasks


def select(tasks: list[EvalTask], ids: str | None) -> list[EvalTask]:
    """The tasks named in a comma-separated list (all when None); ValueError for an unknown id."""
    if not ids:
        return tasks
    by_id = {t.id: t for t in tasks}
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        listing = f"`{program_name()} eval --list`"
        what = "an unknown eval task" if len(unknown) == 1 else "unknown eval tasks"
        raise ValueError(f"{what}: {', '.join(unknown)}; {listing} lists them")
    return [by_id[i] for i in wanted]


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if name.endswith(".sh"):
            path.chmod(0o755)


def make_repo(task: EvalTask, root: Path) -> None:
    """The task's repository: its files in one commit with a fixed author and date (built aside and
    renamed into place, so an interrupted eval never leaves half a repository)."""
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write_files(tmp, task.files)
    make_repository(tmp, f"{task.id}: initial", GIT_ENV)
    tmp.rename(root)


def check_command(task: EvalTask) -> str:
    """The task's check (batch copies the hidden files in first: the task line's `check_files`)."""
    return task.check.replace("{python}", shlex.quote(sys.executable))


def materialize(tasks: list[EvalTask], root: Path) -> tuple[Path, Path]:
    """Repositories under root/repos, hidden files under root/hidden, and root/tasks.jsonl.
    Returns (tasks file, hidden directory). Existing repositories are kept (a resumed eval)."""
    import json

    hidden_root = root / "hidden"
    lines = []
    for task in tasks:
        repo, hidden = root / "repos" / task.id, hidden_root / task.id
        if not repo.exists():
            make_repo(task, repo)
        write_files(hidden, task.hidden)
        line = {
            "id": task.id,
            "workspace": str(repo),
            "task": task.task,
            "check": check_command(task),
            "check_files": str(hidden),
        }
        lines.append(json.dumps(line))
    tasks_file = root / "tasks.jsonl"
    tasks_file.write_text("\n".join(lines) + "\n")
    return tasks_file, hidden_root
