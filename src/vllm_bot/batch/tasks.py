"""The tasks file of a batch (TASKS.jsonl): one task per line, checked strictly before anything runs.

A line is `{"id", "workspace", "task", "check"?, "setup"?, "network"?, "check_files"?, "shared"?}`.
A relative workspace (or `check_files` folder) is relative to the tasks file. `setup` and `check`
run in the sandbox, the task's copy writable and the network off unless `"network": true`;
`check_files` is a folder whose contents are copied into the copy just before the check (hidden
tests the agent never saw). `"shared": true` says the workspace and check_files are on storage every
Ray node mounts at the same path (`--ray`): the node copies them from there instead of receiving an
archive. Unknown keys, missing keys, wrong types, bad JSON, a workspace that is not a directory and
duplicate ids are errors that name the line; all of them are reported at once.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

REQUIRED = ("id", "workspace", "task")
OPTIONAL = ("check", "setup", "network", "check_files", "shared")
FLAGS = ("network", "shared")  # the keys that are true or false
UNHASHED = ("line", "shared")  # where a task is, not what it is: no part of its fingerprint
MAX_ERRORS = 20


class TasksError(Exception):
    """The tasks file cannot be used (exit 2, nothing started); the message names each bad line."""


@dataclass(frozen=True)
class TaskSpec:
    id: str
    workspace: Path  # resolved
    task: str
    check: str | None = None
    setup: str | None = None
    line: int = 0
    network: bool = False  # setup and check may use the network
    check_files: Path | None = None  # copied into the workspace just before the check
    shared: bool = False  # workspace and check_files are on storage every Ray node mounts

    def fingerprint(self) -> str:
        """Changes when the task's text, workspace, check or setup change (a stale result is noticed)."""
        data = {k: str(v) for k, v in asdict(self).items() if k not in UNHASHED and v not in (None, False)}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def dir_name(self) -> str:
        """A directory name for the task's output: the id where it is safe, else a cleaned id + hash."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.id).strip("._")[:64]
        if safe == self.id:
            return safe
        return f"{safe or 'task'}-{hashlib.sha1(self.id.encode()).hexdigest()[:8]}"


def load_tasks(path: Path) -> list[TaskSpec]:
    """Every task of the file, in order; TasksError listing the bad lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TasksError(f"tasks file {path} cannot be read ({getattr(e, 'strerror', None) or e})") from None
    tasks: list[TaskSpec] = []
    errors: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            spec = parse_line(raw, number, path.parent)
        except TasksError as e:
            errors.append(f"{path} line {number}: {e}")
            continue
        if spec.id in first_line:
            errors.append(
                f"{path} line {number}: duplicate id {spec.id!r} (first on line {first_line[spec.id]})"
            )
            continue
        first_line[spec.id] = number
        tasks.append(spec)
    if errors:
        shown = errors[:MAX_ERRORS] + (
            [f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else []
        )
        raise TasksError("\n".join(shown))
    if not tasks:
        raise TasksError(f"tasks file {path} has no tasks (one JSON object per line)")
    return tasks


def parse_line(raw: str, number: int, base: Path) -> TaskSpec:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise TasksError(f"not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(data, dict):
        raise TasksError("must be a JSON object like " + '{"id": "t1", "workspace": "repo", "task": "..."}')
    for key in data:
        if key not in REQUIRED + OPTIONAL:
            close = difflib.get_close_matches(key, REQUIRED + OPTIONAL, n=1)
            hint = (
                f" (did you mean {close[0]!r}?)" if close else f" (allowed: {', '.join(REQUIRED + OPTIONAL)})"
            )
            raise TasksError(f"unknown key {key!r}{hint}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise TasksError(f"missing key{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
    for key, value in data.items():
        optional_null = key in OPTIONAL and value is None
        if key in FLAGS:
            if not isinstance(value, bool):
                raise TasksError(f"{key!r} must be true or false, got {json.dumps(value)[:60]}")
        elif not optional_null and (not isinstance(value, str) or (key in REQUIRED and not value.strip())):
            raise TasksError(f"{key!r} must be a non-empty string, got {json.dumps(value)[:60]}")
    workspace = _folder(base, data["workspace"], "workspace")
    files = _folder(base, data["check_files"], "check_files") if data.get("check_files") else None
    return TaskSpec(data["id"], workspace, data["task"], data.get("check"), data.get("setup"), number,
                    bool(data.get("network")), files, bool(data.get("shared")))  # fmt: skip


def _folder(base: Path, value: str, key: str) -> Path:
    path = (base / Path(value).expanduser()).resolve()
    if not path.is_dir():
        raise TasksError(f"{key} {value!r} is not a directory ({path})")
    return path


def parse_shard(value: str, env: Mapping[str, str] | None = None) -> tuple[int, int]:
    """`I/N` (1 <= I <= N) -> (I, N); `auto` or `auto/N`: this machine's index from a SLURM job array
    or a Kubernetes indexed Job (`env`: the environment). ValueError with a sentence otherwise."""
    auto = re.fullmatch(r"\s*auto\s*(?:/\s*(\d+)\s*)?", value)
    if auto:
        return _auto_shard(int(auto.group(1)) if auto.group(1) else None, os.environ if env is None else env)
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise ValueError(f"--shard must be I/N with 1 <= I <= N (e.g. 2/4), or auto, got {value!r}")
    return int(match.group(1)), int(match.group(2))


def _auto_shard(count: int | None, env: Mapping[str, str]) -> tuple[int, int]:
    """SLURM: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT; Kubernetes:
    JOB_COMPLETION_INDEX, of the N in `auto/N` (the Job's completions: Kubernetes does not export it)."""
    if "SLURM_ARRAY_TASK_ID" in env:
        names = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT")
        try:
            task_id, low, total = (int(env[name]) for name in names)
        except (KeyError, ValueError):
            raise ValueError(f"--shard auto: {', '.join(names)} must all be set to numbers") from None
        if count is not None and count != total:
            raise ValueError(f"--shard auto/{count}: the SLURM job array has {total} tasks")
        index, count, source = task_id - low, total, "the SLURM job array"
    elif "JOB_COMPLETION_INDEX" in env:
        if count is None:
            raise ValueError(
                "--shard auto in a Kubernetes indexed Job needs the count: --shard auto/N, N the Job's "
                "completions"
            )
        try:
            index, source = int(env["JOB_COMPLETION_INDEX"]), "JOB_COMPLETION_INDEX"
        except ValueError:
            raise ValueError("--shard auto: JOB_COMPLETION_INDEX is not a number") from None
    else:
        raise ValueError(
            "--shard auto reads SLURM_ARRAY_TASK_ID (a SLURM job array) or JOB_COMPLETION_INDEX (a "
            "Kubernetes indexed Job), and neither is set: use --shard I/N"
        )
    if not 0 <= index < count or count < 1:
        raise ValueError(
            f"--shard auto: index {index} from {source} is not in 0..{count - 1} (an array with a step, "
            "like --array=0-15:4? use --shard I/N)"
        )
    return index + 1, count


def in_shard(task_id: str, shard: tuple[int, int] | None) -> bool:
    """Is this task machine I's of N? By a hash of the id: stable when lines are added or reordered."""
    if shard is None:
        return True
    index, count = shard
    return int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % count == index - 1
