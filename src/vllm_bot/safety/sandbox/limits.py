"""Resource limits for exec commands: rlimits on every process, a cgroup around the whole command.

Every command starts through a small bash launcher (no extra process: it ends in `exec`) that joins
the command's cgroups, sets the rlimits and opens the seccomp program for bubblewrap:

    unsandboxed:  launcher(join, rlimits) -> bash -c COMMAND
    sandboxed:    launcher(join, seccomp on fd 9) -> bwrap ... -- launcher(rlimits) -> bash -c COMMAND

Soft and hard limits are set alike (a command cannot raise them back), except CPU time, whose hard
limit is a few seconds above the soft one so the process gets SIGXCPU (reportable) before SIGKILL.
RLIMIT_NPROC is set only inside a sandbox run by an ordinary user: it never binds uid 0, and outside
a user namespace it counts every process of the user, not those of the command.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence
from dataclasses import dataclass

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import cgroup
from vllm_bot.safety.sandbox.hits import explain

MB = 1 << 20
CPU_GRACE = 5  # seconds between SIGXCPU and SIGKILL
SECCOMP_FD = 9
LAUNCHER = r"""while [ "$1" != -- ]; do
  printf '%s\n' "$$" > "$1" || { echo "vllm-bot: cannot join the cgroup $1" >&2; exit 125; }; shift
done
shift
bpf=$1; shift
while [ "$1" != -- ]; do
  ulimit "$1" "$2" || { echo "vllm-bot: cannot set the limit ulimit $1 $2" >&2; exit 125; }; shift 2
done
shift
if [ -n "$bpf" ]; then exec "$@" 9<"$bpf"; fi
exec "$@"
"""


@dataclass(frozen=True)
class Limits:
    """The resolved limits (0: none of that kind)."""

    memory: int  # bytes, for the command (cgroup) and for each process (RLIMIT_DATA)
    processes: int
    file_size: int  # bytes
    cpu_seconds: int
    open_files: int


def resolve(config: SandboxConfig) -> Limits:
    memory = total_memory() // 2 if config.max_memory_mb is None else config.max_memory_mb * MB
    size = config.max_file_size_mb * MB
    return Limits(memory, config.max_processes, size, config.max_cpu_seconds, config.max_open_files)


def total_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return 0


def describe_limits(
    config: SandboxConfig, plan: cgroup.CgroupPlan, *, sandboxed: bool
) -> tuple[list[str], list[str]]:
    """(layers, missing layers) of the resource limits, for the status line."""
    limits = resolve(config)
    memory = f"memory {limits.memory // MB} MB" if limits.memory else "no memory limit"
    memory += " per command (cgroup)" if plan.memory and limits.memory else " per process"
    processes = f"{limits.processes} processes" if limits.processes else "no process limit"
    bound = bool(plan.pids) or (sandboxed and os.geteuid() != 0)
    processes += " (cgroup)" if plan.pids else ""
    sizes = f"files up to {limits.file_size // MB} MB" if limits.file_size else "no file size limit"
    cpu = f"{limits.cpu_seconds} s CPU per process" if limits.cpu_seconds else "no CPU limit"
    files = f"{limits.open_files} open files" if limits.open_files else "no open-file limit"
    layers = [f"limits: {memory}, {processes if bound else 'no process limit'}, {sizes}, {cpu}, {files}"]
    missing = [f"cgroup limits: {plan.problem}"] if plan.problem else []
    if not bound and limits.processes:
        why = "the agent runs as root" if os.geteuid() == 0 else "commands run outside a user namespace"
        missing.append(
            f"process limit: not enforced ({why} and no pids cgroup can be made, so a fork bomb is "
            "stopped only by the command's timeout)"
        )
    return layers, missing


def ulimit_args(limits: Limits, *, processes: bool) -> list[str]:
    """`ulimit OPTION VALUE` pairs for the launcher, each capped at what this process may set."""
    args = ["-c", "0"]  # no core files in the workspace
    kib = 1024
    wanted = [
        ("-f", resource.RLIMIT_FSIZE, limits.file_size, kib),
        ("-d", resource.RLIMIT_DATA, limits.memory, kib),
        ("-n", resource.RLIMIT_NOFILE, limits.open_files, 1),
    ]
    if processes:
        wanted.append(("-u", resource.RLIMIT_NPROC, limits.processes, 1))
    for option, kind, value, unit in wanted:
        capped = _capped(kind, value)
        if capped is not None:
            args += [option, str(max(capped // unit, 1))]
    if limits.cpu_seconds:
        hard = _capped(resource.RLIMIT_CPU, limits.cpu_seconds + CPU_GRACE)
        if hard is not None:
            args += ["-t", str(hard), "-St", str(min(limits.cpu_seconds, hard))]
    return args


def _capped(kind: int, value: int) -> int | None:
    """`value` lowered to the current hard limit; None for "no limit" (0)."""
    hard = resource.getrlimit(kind)[1]
    if not value:
        return None
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def launcher(
    argv: Sequence[str], *, join: Sequence[str] = (), ulimits: Sequence[str] = (), seccomp: str | None = None
) -> list[str]:
    """argv that joins the cgroup.procs files `join`, sets `ulimits` and opens `seccomp` on fd 9,
    then execs `argv`."""
    return ["bash", "-c", LAUNCHER, "vllm-bot-launch", *join, "--", seccomp or "", *ulimits, "--", *argv]


@dataclass(frozen=True)
class Launch:
    """How one command starts: the cgroup.procs files to join and the rlimits to set."""

    join: list[str]
    ulimits: list[str]


class CommandLimits:
    """The limits of one session's commands: a cgroup per command where possible, rlimits always."""

    def __init__(self, config: SandboxConfig, plan: cgroup.CgroupPlan | None, *, sandboxed: bool):
        self.limits = resolve(config)
        self.plan = plan
        self.sandboxed = sandboxed
        self.git_writable = config.git_writable
        self.current: cgroup.CommandCgroup | None = None
        self.pending: list[cgroup.CommandCgroup] = []  # cgroups not removed yet (retried later)

    @property
    def binds_processes(self) -> bool:
        """Whether a command's process count is bounded here (pids cgroup, or NPROC in a userns)."""
        return bool(self.plan and self.plan.pids) or (self.sandboxed and os.geteuid() != 0)

    def begin(self) -> Launch:
        """Make the cgroup for the next command (if one can be made)."""
        if self.current is not None:  # the last command never finished (it could not start)
            self.pending.append(self.current)
            self.current = None
        made = cgroup.create(self.plan, self.limits.processes, self.limits.memory) if self.plan else None
        self.current = made
        nproc = self.sandboxed and os.geteuid() != 0
        return Launch(made.procs_files if made else [], ulimit_args(self.limits, processes=nproc))

    def wrap(self, argv: list[str]) -> list[str]:
        """An unsandboxed command under the limits."""
        launch = self.begin()
        return launcher(argv, join=launch.join, ulimits=launch.ulimits)

    def finish(self, returncode: int | None, output: str) -> list[str]:
        """After the command (its processes already killed): notes for the model about the limits
        it hit; removes its cgroup."""
        counts = {"pids": 0, "oom_kill": 0}
        if self.current is not None:
            counts = cgroup.events(self.current)
            self.pending.append(self.current)
            self.current = None
        self.sweep()
        return explain(self.limits, returncode, output, counts, git_writable=self.git_writable)

    def sweep(self) -> None:
        """Remove the cgroups of finished commands (killing what is left in them)."""
        self.pending = [made for made in self.pending if not cgroup.remove(made)]

    def close(self) -> None:
        self.sweep()
