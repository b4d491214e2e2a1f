"""A cgroup per command, where one can be made: `pids.max` and `memory.max` for the whole command.

rlimits are per process (a fork bomb multiplies them) and RLIMIT_NPROC does not bind uid 0, so the
real bound on a command is a cgroup. One is made under the agent's own cgroup when that cgroup lets
children use the controller (cgroup v2: `pids`/`memory` listed in its `cgroup.subtree_control`, as a
systemd unit with `Delegate=yes` or a container's own cgroup namespace gives it), or, on a cgroup v1
(hybrid) host, under the agent's cgroup in the `pids` hierarchy. Memory on v1 is not used: the v1
memory cgroup is usually the one a supervisor (container runtime, CI runner) limits us with, and we
do not touch it. Nothing here changes a host setting: no controller is enabled, only child cgroups
named `vllm-bot-<pid>-<n>` are made, and each is removed when its command ends (the next command's
is made ahead, while the model thinks, and removed at the end of the session if unused; leftovers of
a crashed session are removed at the next start).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "vllm-bot-"
REMOVE_SECONDS = 2.0
_counter = itertools.count(1)


@dataclass(frozen=True)
class CgroupPlan:
    """Where this process can make limited child cgroups (None: that controller is unavailable)."""

    pids: Path | None
    memory: Path | None  # cgroup v2 only
    problem: str  # why one is missing ("" when both are there)


@dataclass
class CommandCgroup:
    """The cgroups one command runs in (one dir on v2, one per hierarchy on v1)."""

    dirs: list[Path] = field(default_factory=list)
    pids: Path | None = None
    memory: Path | None = None

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of the cgroup file systems."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            found.append((fields[4].replace("\\040", " "), rest[0], rest[2]))
    return found


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def plan() -> CgroupPlan:
    """Find where child cgroups can be made; removes leftovers of sessions that died."""
    mounts, own = _mounts(), _own_paths()
    pids = memory = None
    v2 = next((m for m in mounts if m[1] == "cgroup2"), None)
    if v2 is not None and "" in own:
        parent = Path(v2[0] + own[""])
        enabled = _read(parent / "cgroup.subtree_control").split()
        if os.access(parent, os.W_OK):
            pids = parent if "pids" in enabled else None
            memory = parent if "memory" in enabled else None
    if pids is None:
        v1 = next((m for m in mounts if m[1] == "cgroup" and "pids" in m[2].split(",")), None)
        if v1 is not None and "pids" in own and os.access(v1[0] + own["pids"], os.W_OK):
            pids = Path(v1[0] + own["pids"])
    for parent in {p for p in (pids, memory) if p is not None}:
        remove_stale(parent)
    return CgroupPlan(pids, memory, _problem(pids, memory, v2 is not None))


def _problem(pids: Path | None, memory: Path | None, has_v2: bool) -> str:
    missing = [name for name, where in (("pids", pids), ("memory", memory)) if where is None]
    if not missing:
        return ""
    where = "cgroup v2 delegates none to the agent here" if has_v2 else "there is no cgroup v2 hierarchy"
    if "memory" in missing:
        where += "; v1 memory cgroups are left to the system, so memory is limited per process only"
    return f"no cgroup {' or '.join(missing)} controller to use ({where})"


def create(plan: CgroupPlan, max_processes: int, max_memory: int) -> CommandCgroup | None:
    """Child cgroups with the limits set (0: no limit of that kind); None when none can be made."""
    made = CommandCgroup()
    name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
    wanted: dict[Path, list[str]] = {}
    if plan.pids is not None and max_processes:
        wanted.setdefault(plan.pids / name, []).append("pids")
    if plan.memory is not None and max_memory:
        wanted.setdefault(plan.memory / name, []).append("memory")
    try:
        for path, kinds in wanted.items():
            path.mkdir()
            made.dirs.append(path)
            if "pids" in kinds:
                made.pids = path
                (path / "pids.max").write_text(str(max_processes))
            if "memory" in kinds:
                made.memory = path
                (path / "memory.max").write_text(str(max_memory))
                with contextlib.suppress(OSError):  # no swap accounting: then swap is not limited
                    (path / "memory.swap.max").write_text("0")
    except OSError:
        remove(made)
        return None
    return made if made.dirs else None


def events(made: CommandCgroup) -> dict[str, int]:
    """How often the limits were hit: {"pids": fork refusals, "oom_kill": processes killed}."""
    counts = {"pids": 0, "oom_kill": 0}
    if made.pids is not None:
        counts["pids"] = _event(made.pids / "pids.events", "max")
    if made.memory is not None:
        counts["oom_kill"] = _event(made.memory / "memory.events", "oom_kill")
    return counts


def remove(made: CommandCgroup) -> bool:
    """Kill whatever still runs in the command's cgroups and remove them; False if one remains."""
    left = []
    for path in made.dirs:
        if not _remove_one(path):
            left.append(path)
    made.dirs = left
    return not left


def _remove_one(path: Path) -> bool:
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
        _kill_members(path)
        time.sleep(0.02)


def _kill_members(path: Path) -> None:
    if (path / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            (path / "cgroup.kill").write_text("1")
        return
    for pid in _read(path / "cgroup.procs").split():
        with contextlib.suppress(OSError):
            os.kill(int(pid), signal.SIGKILL)


def remove_stale(parent: Path) -> None:
    """Remove our cgroups whose session is gone (rmdir only removes empty ones)."""
    with contextlib.suppress(OSError):
        for child in parent.glob(f"{PREFIX}*-*"):
            pid = child.name[len(PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    child.rmdir()


def _event(path: Path, key: str) -> int:
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
