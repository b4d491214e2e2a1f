"""The exec tool: run a shell command in the workspace, bounded in time, output and processes.

`bash -c COMMAND` (through the sandbox's `wrap_command` when given) runs in its own session with
stdin from /dev/null and a non-interactive environment. Output (stdout and stderr through one pipe,
so in order) is captured with bounded memory. On timeout or cancel the whole tree is killed; after a
normal exit, processes the command left behind are killed too (exec keeps no background jobs), and
the pipe is drained for at most DRAIN_SECONDS so a grandchild holding it cannot hang the agent. When
nothing can be left (the sandbox's PID namespace died with the command, or we are the subreaper and
have no other child) the /proc scan of the kill is skipped: a command that exits at once costs no
more than its own run. The wait wakes on the output and on the shell's exit (a pidfd), never polls.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..calls import ToolResult
from ..config.statedir import STATE_DIR_NAME, workspace_state_dir
from ..prompts import message
from .capture import OutputCapture
from .context import ToolContext, ToolError, fail, ok, plural
from .gitenv import git_discovery_env
from .reaper import MARKER_VAR, become_subreaper, exited, kill_tree, left_nothing

DRAIN_SECONDS = 1.0
READ_CHUNK = 1 << 16
KEEP_SPILLS = 20
LIMIT_SCAN = 16384  # bytes of the output's head and tail searched for signs of a resource limit
_F_SETPIPE_SZ = 1031

# Nothing may wait for a human: no pagers, editors, prompts; no colour codes in the model's context.
NONINTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_MERGE_AUTOEDIT": "no",
    "EDITOR": "true",
    "VISUAL": "true",
    "DEBIAN_FRONTEND": "noninteractive",
    "npm_config_yes": "true",
    "PIP_NO_INPUT": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "COMPOSER_NO_INTERACTION": "1",
    "PYTHONUNBUFFERED": "1",
    "NO_COLOR": "1",
    "TERM": "dumb",
}

OutputCallback = Callable[[str], None]


@dataclass
class Run:
    """What happened to one command."""

    returncode: int | None
    seconds: float
    ending: str  # "exit" | "timeout" | "cancel"
    capture: OutputCapture
    leftovers: int = 0


def exec_tool(
    ctx: ToolContext,
    command: str,
    timeout: int | None = None,
    *,
    on_output: OutputCallback | None = None,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
) -> ToolResult:
    """Run `command` with bash in the workspace; returns exit code, duration and (capped) output.
    `deadline` (time.monotonic, the task's time budget) cuts the timeout to the time left."""
    timeout, notes = _clamp_timeout(ctx, timeout)
    limit, budgeted = _budget_limit(timeout, deadline)
    if budgeted:
        notes.append(
            f"the timeout was cut to {limit:.0f} s, what the task's time budget (agent.time_budget) had left"
        )
    if ctx.before_command is not None:
        ctx.before_command()
    run = run_command(ctx, command, limit, on_output, cancel)
    notes += _limit_notes(ctx, run)
    if ctx.after_command is not None:
        notes += ctx.after_command()
    return _result(ctx, run, limit, notes, budgeted)


def _clamp_timeout(ctx: ToolContext, timeout: int | None) -> tuple[int, list[str]]:
    cfg = ctx.config
    if timeout is None:
        return cfg.exec_timeout, []
    if timeout > cfg.exec_max_timeout:
        return cfg.exec_max_timeout, [
            f"timeout {timeout} s is above the maximum; used {cfg.exec_max_timeout} s"
        ]
    return timeout, []


def _budget_limit(limit: float, deadline: float | None) -> tuple[float, bool]:
    """The timeout cut to the time the task's budget has left: (seconds, whether it was cut)."""
    if deadline is None:
        return limit, False
    left = deadline - time.monotonic()
    if left < 0.5:
        raise ToolError(message("budget_used_up"))
    return (left, True) if left < limit else (limit, False)


def command_env(ctx: ToolContext) -> dict[str, str]:
    """A command's environment, but for the run's marker (MARKER_VAR)."""
    env = dict(ctx.env)
    env.update(NONINTERACTIVE_ENV)
    env.update(git_discovery_env(ctx.workspace))  # never a planted repository (see gitenv)
    env.update(ctx.config.exec_env)
    env.pop(MARKER_VAR, None)
    return env


def run_command(
    ctx: ToolContext,
    command: str,
    limit: float,
    on_output: OutputCallback | None,
    cancel: threading.Event | None,
) -> Run:
    """Run `command` to its end, timeout or cancel; whatever happens, no process of it survives."""
    if ctx.wrap_command is None:
        # Unsandboxed, orphans must re-parent to us to be found and killed. A sandbox's PID namespace
        # does that job, and a subreaper would collect bwrap's exiting inner process as a zombie.
        become_subreaper()
    marker = secrets.token_hex(8)
    started = time.monotonic()
    proc = _spawn(ctx, command, marker)
    assert proc.stdout is not None
    capture = OutputCapture(ctx.config.output_limit, lambda: _open_spill(ctx), ctx.config.exec_spill_bytes)
    pump = _Pump(proc.stdout.fileno(), capture, on_output)
    ending = "error"  # stays so only if reading raised (e.g. in the on_output callback)
    try:
        ending = _wait(proc, pump, started + limit, cancel)
    finally:
        alone = ending == "exit" and (ctx.pid_namespace or left_nothing(proc))
        killed = set() if alone else kill_tree(proc, marker, ctx.config.exec_kill_grace)
        if ending != "error":
            pump.drain(time.monotonic() + (DRAIN_SECONDS if ending == "exit" else 0.5))
        proc.stdout.close()
        capture.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    leftovers = len(killed - {proc.pid}) if ending == "exit" else 0
    return Run(proc.returncode, time.monotonic() - started, ending, capture, leftovers)


def _command_argv(ctx: ToolContext, command: str) -> list[str]:
    """`bash -c COMMAND` in the sandbox (which sets the resource limits inside it), or unsandboxed
    under the resource limits alone."""
    argv = ["bash", "-c", command]
    if ctx.wrap_command is not None:
        return ctx.wrap_command(argv)
    return ctx.limits.wrap(argv) if ctx.limits is not None else argv


def _limit_notes(ctx: ToolContext, run: Run) -> list[str]:
    """What the model should know about the resource limits the command ran into (and its cgroup
    is removed)."""
    if ctx.limits is None:
        return []
    seen = bytes(run.capture.head[-LIMIT_SCAN:]) + b"\n" + bytes(run.capture.tail[-LIMIT_SCAN:])
    return ctx.limits.finish(run.returncode, seen.decode("utf-8", "replace"))


def _spawn(ctx: ToolContext, command: str, marker: str) -> subprocess.Popen[bytes]:
    argv = _command_argv(ctx, command)
    env = command_env(ctx)
    try:
        return popen(ctx, argv, {**env, MARKER_VAR: marker})
    except (OSError, ValueError) as e:
        raise ToolError(
            f"could not start the command: {e}. Check the command for NUL bytes or a missing program."
        ) from None


def popen(ctx: ToolContext, argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start a command's process: in the workspace, its own session, output and errors through one
    pipe, stdin empty."""
    return subprocess.Popen(
        argv,
        cwd=ctx.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        close_fds=True,
    )


def _wait(proc: subprocess.Popen[bytes], pump: _Pump, deadline: float, cancel: threading.Event | None) -> str:
    """Read output until the shell exits and the pipe closes (or DRAIN_SECONDS after the exit)."""
    exited_at: float | None = None
    with _ExitWatch(proc.pid) as exit_fd:
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                return "cancel"
            if now >= deadline:
                return "timeout"
            pump.read(min(0.1, deadline - now), exit_fd if exited_at is None else None)
            if exited(proc):
                if pump.eof:
                    return "exit"
                exited_at = exited_at or now
                if now - exited_at > DRAIN_SECONDS:
                    return "exit"  # a background process holds the pipe; kill_tree deals with it


class _ExitWatch:
    """A pidfd of the shell, readable once it has exited (None where the kernel has none)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = None

    def __enter__(self) -> int | None:
        with contextlib.suppress(OSError, AttributeError):
            self.fd = os.pidfd_open(self.pid)
        return self.fd

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


class _Pump:
    """Moves bytes from the pipe to the capture (and the live callback)."""

    def __init__(self, fd: int, capture: OutputCapture, on_output: OutputCallback | None):
        self.fd = fd
        self.capture = capture
        self.on_output = on_output
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.eof = False
        with contextlib.suppress(OSError):
            fcntl.fcntl(self.fd, _F_SETPIPE_SZ, 1 << 20)  # fewer wake-ups for floods; best effort

    def read(self, wait: float, exit_fd: int | None = None) -> None:
        """Read what the pipe has, waiting up to `wait` s for output, its end, or `exit_fd` (the
        shell's exit); without either to wait on, sleep a little (the shell is about to exit)."""
        fds = ([] if self.eof else [self.fd]) + ([] if exit_fd is None else [exit_fd])
        if not fds:
            time.sleep(min(0.01, wait))
            return
        ready, _, _ = select.select(fds, [], [], wait)
        if self.fd not in ready:
            return
        data = os.read(self.fd, READ_CHUNK)
        if not data:
            self.eof = True
            return
        self.capture.feed(data)
        if self.on_output is not None:
            self.on_output(self.decoder.decode(data))

    def drain(self, deadline: float) -> None:
        while not self.eof and time.monotonic() < deadline:
            self.read(max(0.0, min(0.05, deadline - time.monotonic())))


def _open_spill(ctx: ToolContext) -> tuple[Path, BinaryIO]:
    """A new file under <state_dir>/outputs/ for a full output; keeps the newest KEEP_SPILLS."""
    if ctx.state_dir == ctx.workspace / STATE_DIR_NAME:
        workspace_state_dir(ctx.workspace)  # creates it with its self-ignoring .gitignore
    outputs = ctx.state_dir / "outputs"
    outputs.mkdir(parents=True, exist_ok=True)
    old = sorted(outputs.glob("exec-*.log"), key=lambda p: p.stat().st_mtime)
    for stale in old[: max(0, len(old) - KEEP_SPILLS + 1)]:
        stale.unlink(missing_ok=True)
    path = outputs / f"exec-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}.log"
    return path, open(path, "xb")


def _result(ctx: ToolContext, run: Run, limit: float, notes: list[str], budgeted: bool) -> ToolResult:
    took = f"{run.seconds:.1f} s"
    if run.ending == "timeout" and budgeted:
        status = (
            f"Stopped after {limit:.0f} s: the task's time budget (agent.time_budget) ran out; the command "
            "and all its processes were killed. Output so far:"
        )
    elif run.ending == "timeout":
        status = (
            f"Timed out after {limit} s; the command and all its processes were killed. If it needs longer, "
            f"pass a larger timeout (up to {ctx.config.exec_max_timeout}) or make it do less. Output so far:"
        )
    elif run.ending == "cancel":
        status = f"Interrupted by the user after {took}; the command was killed. Output so far:"
    elif run.returncode is not None and run.returncode < 0:
        status = f"Killed by signal {_signal_name(-run.returncode)} after {took}."
    else:
        status = f"Exit code {run.returncode} ({took})."
    if run.leftovers:
        notes.append(
            f"stopped {plural(run.leftovers, 'background process', 'background processes')} the command "
            "left running (exec keeps no background jobs)"
        )
    text = run.capture.render(ctx.display) if run.capture.total else "(no output)"
    if notes:
        status += "\nNote: " + "; ".join(notes) + "."
    body = status + "\n" + text
    return ok(body) if run.ending == "exit" and run.returncode == 0 else fail(body)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
