"""Resource limits for exec commands: rlimits on every process, a cgroup around the whole command.

Every command starts through a small bash launcher (no extra process: it ends in `exec`) that joins
the command's cgroups, sets the rlimits and opens the seccomp program for bubblewrap:

    unsandboxed:  launcher(join, rlimits) -> bash -c COMMAND
    sandboxed:    launcher(join, seccomp on fd 9) -> bwrap ... -- launcher(rlimits) -> bash -c COMMAND

Joining a cgroup is the slow step (the kernel's migration waits for an RCU grace period: 8-15 ms
when no migration happened just before, so every command in a real session pays it). So the next
command's cgroup is made, and its launcher started and joined, while the model thinks: that launcher
(`standby_launcher`) waits for the rest of its arguments on stdin, NUL-separated: `NAME=VALUE` to
export, `--`, then what follows the join's `--` in `launcher` (see tools/standby.py). Sandboxed,
the whole sandbox can start ahead the same way, its inner launcher waiting (bwrap.wrap_ahead): an
`Ahead`.

Soft and hard limits are set alike (a command cannot raise them back), except CPU time, whose hard
limit is a few seconds above the soft one so the process gets SIGXCPU (reportable) before SIGKILL.
RLIMIT_NPROC is set only inside a sandbox run by an ordinary user: it never binds uid 0, and outside
a user namespace it counts every process of the user, not those of the command.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import cgroup

MB = 1 << 20
CPU_GRACE = 5  # seconds between SIGXCPU and SIGKILL
SECCOMP_FD = 9
STANDBY = "--standby"
LAUNCHER = r"""while [ "$1" != -- ]; do
  printf '%s\n' "$$" > "$1" || { echo "vllm-bot: cannot join the cgroup $1" >&2; exit 125; }; shift
done
shift
if [ "$1" = --standby ]; then
  mapfile -d '' -t args; exec </dev/null; set -- "${args[@]}"
  [ $# -gt 0 ] || exit 0
  while [ "$1" != -- ]; do export "$1"; shift; done
  shift
fi
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
    return [*launcher_head(join), seccomp or "", *ulimits, "--", *argv]


def launcher_head(join: Sequence[str]) -> list[str]:
    """The part of a launcher's argv up to its cgroups: what a standby launcher was started with."""
    return ["bash", "-c", LAUNCHER, "vllm-bot-launch", *join, "--"]


def standby_launcher(join: Sequence[str]) -> list[str]:
    """argv of a launcher that joins `join` now and reads the rest of its argv from stdin."""
    return [*launcher_head(join), STANDBY]


def _always() -> bool:
    return True


@dataclass(frozen=True)
class Ahead:
    """A command's process started before its command: `argv` ends in STANDBY (it waits for the
    rest of its argv on stdin), `head` is what the command's own argv must start with to use it, and
    `intact()` whether what it was started on is still what a fresh start would get."""

    argv: list[str]
    intact: Callable[[], bool] = _always

    @property
    def head(self) -> list[str]:
        return self.argv[:-1]


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
        self.ready: cgroup.CommandCgroup | None = None  # made ahead for the next command (prepare)
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
        self.current, self.ready = self.ready or self._create(), None
        return self._launch(self.current)

    def prepare(self) -> Launch | None:
        """Make the next command's cgroup ahead of it; how that command will start (None: no
        cgroup can be made here)."""
        if self.ready is None:
            self.ready = self._create()
        return self._launch(self.ready) if self.ready else None

    def _launch(self, made: cgroup.CommandCgroup | None) -> Launch:
        nproc = self.sandboxed and os.geteuid() != 0
        return Launch(made.procs_files if made else [], ulimit_args(self.limits, processes=nproc))

    def _create(self) -> cgroup.CommandCgroup | None:
        if self.plan is None:
            return None
        return cgroup.create(self.plan, self.limits.processes, self.limits.memory)

    def wrap(self, argv: list[str]) -> list[str]:
        """An unsandboxed command under the limits."""
        launch = self.begin()
        return launcher(argv, join=launch.join, ulimits=launch.ulimits)

    def finish(self, returncode: int | None, output: str, *, later: bool = False) -> list[str]:
        """After the command (its processes already killed): notes for the model about the limits
        it hit; removes its cgroup, or with `later` leaves that to `sweep` (removing one can wait
        for its last processes to leave it: 20 ms steps)."""
        counts = {"pids": 0, "oom_kill": 0}
        if self.current is not None:
            counts = cgroup.events(self.current)
            self.pending.append(self.current)
            self.current = None
        if not later:
            self.sweep()
        # the messages' patterns are compiled with the first command's end, not at start-up
        from vllm_bot.safety.sandbox.hits import explain

        return explain(self.limits, returncode, output, counts, git_writable=self.git_writable)

    def sweep(self) -> None:
        """Remove the cgroups of finished commands (killing what is left in them)."""
        self.pending = [made for made in self.pending if not cgroup.remove(made)]

    def close(self) -> None:
        if self.ready is not None:
            self.pending.append(self.ready)
            self.ready = None
        self.sweep()
