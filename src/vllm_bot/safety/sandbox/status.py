"""Find out once per process whether bubblewrap can sandbox commands here, and say so plainly.

The probe runs bwrap with the same namespace and capability flags every command will get; whatever
fails is reported with bwrap's own message and the fix, never papered over.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import cgroup, kernelfs, seccomp
from vllm_bot.safety.sandbox.limits import describe_limits
from vllm_bot.safety.sandbox.paths import host_which

DOCS = "docs/sandbox.md"
ENV_LAYER = "environment from an allowlist (secrets not passed)"
NETWORK_RISK = (
    "network ALLOWED (sandbox.network): a poisoned README or issue can make the model download and run code"
)
UNSANDBOXED = "commands run UNSANDBOXED and every command needs approval (unless --yes)"
TRIAL_TIMEOUT = 10.0

# Namespaces, no capabilities (as root bwrap would otherwise keep them all, and a command could
# remount / read-write), no nested user namespaces (no way to rearrange the mounts), own session
# (no TIOCSTI keystroke injection into our terminal), killed when we die.
BASE_FLAGS = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc",
              "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session")  # fmt: skip


@dataclass
class SandboxStatus:
    mode: str  # configured mode: auto | bwrap | off
    active: bool  # commands will run inside bwrap
    layers: list[str]  # human-readable active protections
    warning: str | None  # why commands are not (fully) protected, with the fix
    bwrap: str | None = None  # the bwrap binary that passed the trial
    flags: tuple[str, ...] = field(default=())  # namespace and capability flags that passed the trial
    network: bool = False  # sandboxed commands may use the network (sandbox.network)
    seccomp: bool = False  # commands start under the seccomp filter
    missing: list[str] = field(default_factory=list)  # layers unavailable here, each with why
    cgroups: cgroup.CgroupPlan | None = None  # where per-command cgroups can be made

    def gaps(self, mcp_servers: list[str]) -> list[str]:
        """What the sandbox does not cover here, one sentence each: risks the configuration takes
        (network, MCP servers `mcp_servers`) and layers missing on this machine."""
        found = [NETWORK_RISK] if self.active and self.network else []
        if mcp_servers:
            found.append(
                f"MCP servers ({', '.join(mcp_servers)}) run OUTSIDE the sandbox, with your rights: "
                "only the approval prompt stands between the model and them"
            )
        return found + [f"missing layer - {layer}" for layer in self.missing]

    def describe(self) -> str:
        """One line for the start banner and /sandbox (risks first, so a shortened line keeps them)."""
        if not self.active:
            return f"sandbox: OFF ({self.mode}) - {self.warning}"
        network = f"{NETWORK_RISK}; " if self.network else ""
        return f"sandbox: bubblewrap - {network}{', '.join(self.layers)}"


Trial = tuple[tuple[str, ...] | None, str, str]  # (flags that work, bwrap's error, seccomp's error)
_TRIALS: dict[tuple[str, bool], Trial] = {}
_PLAN: list[cgroup.CgroupPlan] = []  # found once per process


def probe(config: SandboxConfig) -> SandboxStatus:
    """The sandbox status for `config`; runs one trial of bwrap per binary and network setting."""
    if config.mode == "off":
        off = SandboxStatus("off", False, [ENV_LAYER], f"sandbox.mode is off: {UNSANDBOXED}")
        return _limited(config, off)
    path = host_which(os.path.expanduser(config.bwrap))
    if path is None:
        problem = f"bubblewrap ({config.bwrap}) is not installed"
        fix = f"install it with `sudo apt-get install bubblewrap` (see {DOCS})"
        return _inactive(config, problem, fix)
    key = (path, config.network)
    if key not in _TRIALS:
        _TRIALS[key] = _trial(path, config.network)
    flags, error, seccomp_error = _TRIALS[key]
    if flags is None:
        problem = f"bubblewrap cannot create a sandbox here ({error})"
        fix = f"inside Docker or on Ubuntu 24.04 see {DOCS}"
        return _inactive(config, problem, fix)
    layers = _layers(config, flags, not seccomp_error)
    status = SandboxStatus(config.mode, True, layers, None, path, flags, config.network, not seccomp_error)
    status.missing += [f"seccomp filter: {seccomp_error}"] if seccomp_error else []
    if seccomp_error and not config.unix_sockets:
        status.missing.append(
            "unix sockets: without the seccomp filter a command can connect to a server's socket "
            "that it can see (outside $HOME and /run, e.g. under /var/tmp), and through it reach "
            "outside the sandbox"
        )
    if os.geteuid() == 0:
        status.missing.append(
            "unprivileged uid: the agent runs as root, so commands keep host uid 0 inside their user "
            "namespace (root-owned kernel files are covered read-only instead; run vllm-bot as an "
            "ordinary user for an unprivileged uid)"
        )
    return _limited(config, status)


def _limited(config: SandboxConfig, status: SandboxStatus) -> SandboxStatus:
    """`status` with the resource-limit layers (they apply whether or not commands are sandboxed)."""
    if not _PLAN:
        _PLAN.append(cgroup.plan())
    status.cgroups = _PLAN[0]
    layers, missing = describe_limits(config, status.cgroups, sandboxed=status.active)
    status.layers += layers
    status.missing += missing
    return status


def unavailable_message(status: SandboxStatus) -> str:
    """The message for SandboxUnavailable when sandbox.mode is bwrap."""
    return f"{status.warning}. Or set sandbox.mode to auto to run commands unsandboxed with approval."


def _inactive(config: SandboxConfig, problem: str, fix: str) -> SandboxStatus:
    if config.mode == "bwrap":
        warning = f"sandbox.mode is bwrap but {problem}: commands are refused; {fix}"
    else:
        warning = f"{problem}: {UNSANDBOXED}; {fix}"
    return _limited(config, SandboxStatus(config.mode, False, [ENV_LAYER], warning))


def _trial(path: str, network: bool) -> Trial:
    """(flags that work, "", seccomp's error or "") or (None, bwrap's error, "")."""
    flags: tuple[str, ...] = BASE_FLAGS if network else (*BASE_FLAGS, "--unshare-net")
    error = _run_trial(path, flags)
    if error and "disable-userns" in error:  # bwrap < 0.8: mounts stay locked, only the extra guard is lost
        flags = tuple(f for f in flags if f != "--disable-userns")
        error = _run_trial(path, flags)
    if error:
        return None, error, ""
    if not seccomp.supported():
        return flags, "", f"no filter for this architecture ({seccomp.machine()})"
    with tempfile.TemporaryFile() as program:
        program.write(seccomp.deny_program())
        program.seek(0)
        seccomp_error = _run_trial(path, (*flags, "--seccomp", str(program.fileno())), program.fileno())
    return flags, "", seccomp_error and f"bubblewrap could not load it ({seccomp_error})"


def _run_trial(path: str, flags: tuple[str, ...], fd: int | None = None) -> str:
    argv = [path, *flags, "--ro-bind", "/", "/", *kernelfs.dev_args(1 << 20), *kernelfs.proc_args(),
            "--tmpfs", "/run", "--tmpfs", "/tmp", "--", "/bin/sh", "-c", "exit 0"]  # fmt: skip
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True,
                                pass_fds=() if fd is None else (fd,))  # fmt: skip
    except OSError as e:
        return str(e)
    try:
        _, stderr = proc.communicate(timeout=TRIAL_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return f"the trial run timed out after {TRIAL_TIMEOUT:g} s"
    if proc.returncode == 0:
        return ""
    lines = stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _layers(config: SandboxConfig, flags: tuple[str, ...], filtered: bool) -> list[str]:
    layers = ["filesystem read-only outside the workspace", "private /tmp"]
    if not config.network:
        layers.append("network off")
    layers += [
        "pid/ipc/uts namespaces",
        "no capabilities" + (", no nested user namespaces" if "--disable-userns" in flags else ""),
        "no new privileges",
        "host kernel interfaces read-only (/proc/sys, /sys, ...)",
    ]
    if filtered:
        layers.append("seccomp filter (mount, kexec, bpf, keyctl, ptrace attach, ... denied)")
        if not config.unix_sockets:
            layers.append("no unix sockets (a server's socket outside cannot be reached)")
    if os.geteuid() != 0:
        layers.append(f"unprivileged uid {os.geteuid()} in a user namespace")
    if config.git_writable:
        layers.append(".git WRITABLE (sandbox.git_writable), hooks and config read-only")
    else:
        layers.append(".git read-only")
    layers += [
        ".vllm-bot read-only",
        "home hidden but the workspace and toolchains (~/.ssh, ~/.aws, dotfiles, ...)",
        "service sockets hidden (/run)",
        ENV_LAYER,
    ]
    return layers
