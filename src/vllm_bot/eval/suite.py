"""The bundled eval suite: self-checking coding tasks in three tiers (`tasks/*.yaml`).

- `tools`: find, read and run: the answer is something only looking or running tells;
- `file`: a bug, a feature, a refactor or a failing test in a file or two;
- `repo`: work in a bundled project of a few thousand lines (`tasks/projects/`), where the model must
  explore before it edits: a bug across two modules, a feature touching three files, a failing test
  whose cause is elsewhere. A repo task is the project with its `changes` applied (`old` -> `new`
  text edits; a null removes a file); the project as shipped is its reference solution.

A task file holds the task text, the repository's files, the hidden files of its check (tests the
agent never sees: batch copies them into the workspace only after the agent finishes) and which of
them are the tests (default: every hidden file of the runner's language). A repo task's check runs
the project's own tests, as shipped, and its own. Everything under `tasks/` is hidden from the
agents' commands (safety/boundary.py). `materialize` turns the chosen tasks into git repositories
and a TASKS.jsonl for `batch`. A task whose `requires` (e.g. node) is missing here is skipped.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..batch.copies import make_repository
from ..cliargs import program_name
from .checks import RUNNERS, SUFFIXES, check_command

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
PROJECTS_DIR = TASKS_DIR / "projects"
SUITE_VERSION = 2  # bumped whenever a task changes, so scores over time compare like with like
TIERS = ("tools", "file", "repo")
REQUIRED = {"tier", "kind", "language", "task"}
KEYS = REQUIRED | {"hidden", "files", "tests", "requires", "project", "changes"}
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
    tier: str  # "tools", "file", "repo"
    kind: str  # e.g. "find", "run", "bug fix", "feature", "refactor", "failing test", "bug across modules"
    language: str
    task: str
    files: dict[str, str]  # the repository the agent starts from
    hidden: dict[str, str]  # copied in for the check only
    tests: list[str]  # the hidden files the harness runs
    requires: list[str] = field(default_factory=list)
    solution: dict[str, str | None] = field(default_factory=dict)  # a repo task's files as shipped

    @property
    def runner(self) -> str:
        return RUNNERS[self.language]

    def missing(self) -> list[str]:
        """Programs this task needs that are not on PATH here."""
        return [program for program in self.requires if shutil.which(program) is None]

    def check(self) -> str:
        return check_command(self.runner, {path: self.hidden[path] for path in self.tests})


class SuiteError(ValueError):
    """A task file of the suite is malformed (a bug in the suite, reported with the file)."""


def bundled(directory: Path = TASKS_DIR) -> list[EvalTask]:
    """Every task of the suite, by id."""
    import yaml

    projects: dict[str, dict[str, str]] = {}
    tasks = []
    for path in sorted(directory.glob("*.yaml")):
        data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            tasks.append(parse_task(path.stem, data, projects, directory / "projects"))
        except (KeyError, ValueError) as e:
            raise SuiteError(f"{path}: {e}") from None
    return tasks


def parse_task(
    task_id: str, data: dict[str, Any], projects: dict[str, dict[str, str]], projects_dir: Path
) -> EvalTask:
    unknown, missing = set(data) - KEYS, REQUIRED - set(data)
    if unknown or missing:
        raise ValueError(f"unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
    if data["tier"] not in TIERS or data["language"] not in RUNNERS:
        raise ValueError(f"tier {data['tier']!r} or language {data['language']!r} is not one of ours")
    files, hidden = dict(data.get("files") or {}), dict(data.get("hidden") or {})
    solution: dict[str, str | None] = {}
    if data.get("project"):
        name = data["project"]
        if name not in projects:
            projects[name] = read_project(projects_dir / name)
        start, solution = apply_changes(projects[name], data.get("changes") or {})
        files = {**start, **files}
        if data["tier"] == "repo":  # the project's own tests (and their helpers) as shipped
            hidden = {**{p: t for p, t in projects[name].items() if p.startswith("tests/")}, **hidden}
    suffix = SUFFIXES[RUNNERS[data["language"]]]
    tests = data.get("tests") or [p for p in hidden if is_test(p, suffix)]
    if not tests or any(p not in hidden for p in tests):
        raise ValueError(f"tests {tests} must name hidden files")
    return EvalTask(
        id=task_id,
        tier=data["tier"],
        kind=data["kind"],
        language=data["language"],
        task=data["task"],
        files=files,
        hidden=hidden,
        tests=sorted(tests),
        requires=list(data.get("requires") or []),
        solution=solution,
    )


def read_project(root: Path) -> dict[str, str]:
    """A bundled project's files (path -> text), without bytecode caches."""
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def is_test(path: str, suffix: str) -> bool:
    """Is a hidden file a test file (`test_*` or `hidden_test*` with the runner's suffix)?"""
    return Path(path).name.startswith(("test_", "hidden_test")) and path.endswith(suffix)


def apply_changes(
    project: dict[str, str], changes: dict[str, Any]
) -> tuple[dict[str, str], dict[str, str | None]]:
    """(the project with `changes` applied, the changed files as shipped: None for a file added)."""
    files, solution = dict(project), {}
    for path, edits in changes.items():
        solution[path] = project.get(path)
        if edits is None:
            files.pop(path)
            continue
        text = files.get(path, "")
        for edit in edits:
            old, new = edit.get("old", ""), edit.get("new", "")
            if old and text.count(old) != 1:
                raise ValueError(f"{path}: the text to change is found {text.count(old)} times: {old[:60]!r}")
            text = text.replace(old, new) if old else text + new
        files[path] = text
    return files, solution


def select(tasks: list[EvalTask], ids: str | None) -> list[EvalTask]:
    """The tasks named in a comma-separated list of ids and tiers (all when None), in suite order;
    ValueError for an unknown name."""
    if not ids:
        return tasks
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    known = {t.id for t in tasks} | set(TIERS)
    unknown = [i for i in wanted if i not in known]
    if unknown:
        listing = f"`{program_name()} eval --list`"
        what = "an unknown eval task" if len(unknown) == 1 else "unknown eval tasks"
        tiers = ", ".join(TIERS)
        raise ValueError(f"{what}: {', '.join(unknown)}; {listing} lists them (or name a tier: {tiers})")
    chosen = {t.id for t in tasks for name in wanted if name in (t.id, t.tier)}
    return [t for t in tasks if t.id in chosen]


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


def materialize(tasks: list[EvalTask], root: Path) -> tuple[Path, Path]:
    """Repositories under root/repos, hidden files under root/hidden, and root/tasks.jsonl.
    Returns (tasks file, hidden directory). Existing repositories are kept (a resumed eval)."""
    hidden_root = root / "hidden"
    lines = []
    for task in tasks:
        repo, hidden = root / "repos" / task.id, hidden_root / task.id
        if not repo.exists():
            make_repo(task, repo)
        shutil.rmtree(hidden, ignore_errors=True)
        write_files(hidden, task.hidden)
        line = {
            "id": task.id,
            "workspace": str(repo),
            "task": task.task,
            "check": task.check(),
            "check_files": str(hidden),
        }
        lines.append(json.dumps(line))
    tasks_file = root / "tasks.jsonl"
    tasks_file.write_text("\n".join(lines) + "\n")
    return tasks_file, hidden_root
