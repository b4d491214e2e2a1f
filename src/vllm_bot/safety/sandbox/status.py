"""Find out once per process whether bubblewrap can sandbox commands here, and say so plainly.

The probe runs bwrap with the same namespace and capability flags every command will get; whatever
fails is reported with bwrap's own message and the fix, never papered over.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field

from vllm_bot.config import SandboxConfig

DOCS = "docs/sandbox.md"
ENV_LAYER = "environment from an allowlist (secrets not passed)"
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

    def describe(self) -> str:
        """One line for the start banner and /sandbox."""
        if not self.active:
            return f"sandbox: OFF ({self.mode}) - {self.warning}"
        network = "; network ALLOWED (sandbox.network)" if self.network else ""
        return f"sandbox: bubblewrap - {', '.join(self.layers)}{network}"


_TRIALS: dict[tuple[str, bool], tuple[tuple[str, ...] | None, str]] = {}


def probe(config: SandboxConfig) -> SandboxStatus:
    """The sandbox status for `config`; runs one trial of bwrap per binary and network setting."""
    if config.mode == "off":
        return SandboxStatus("off", False, [ENV_LAYER], f"sandbox.mode is off: {UNSANDBOXED}")
    path = shutil.which(os.path.expanduser(config.bwrap))
    if path is None:
        problem = f"bubblewrap ({config.bwrap}) is not installed"
        fix = f"install it with `sudo apt-get install bubblewrap` (see {DOCS})"
        return _inactive(config, problem, fix)
    key = (path, config.network)
    if key not in _TRIALS:
        _TRIALS[key] = _trial(path, config.network)
    flags, error = _TRIALS[key]
    if flags is None:
        problem = f"bubblewrap cannot create a sandbox here ({error})"
        fix = f"inside Docker or on Ubuntu 24.04 see {DOCS}"
        return _inactive(config, problem, fix)
    return SandboxStatus(config.mode, True, _layers(config.network, flags), None, path, flags, config.network)


def unavailable_message(status: SandboxStatus) -> str:
    """The message for SandboxUnavailable when sandbox.mode is bwrap."""
    return f"{status.warning}. Or set sandbox.mode to auto to run commands unsandboxed with approval."


def _inactive(config: SandboxConfig, problem: str, fix: str) -> SandboxStatus:
    if config.mode == "bwrap":
        warning = f"sandbox.mode is bwrap but {problem}: commands are refused; {fix}"
    else:
        warning = f"{problem}: {UNSANDBOXED}; {fix}"
    return SandboxStatus(config.mode, False, [ENV_LAYER], warning)


def _trial(path: str, network: bool) -> tuple[tuple[str, ...] | None, str]:
    """(flags that work, "") or (None, bwrap's error)."""
    flags: tuple[str, ...] = BASE_FLAGS if network else (*BASE_FLAGS, "--unshare-net")
    error = _run_trial(path, flags)
    if error and "disable-userns" in error:  # bwrap < 0.8: mounts stay locked, only the extra guard is lost
        flags = tuple(f for f in flags if f != "--disable-userns")
        error = _run_trial(path, flags)
    return (None, error) if error else (flags, "")


def _run_trial(path: str, flags: tuple[str, ...]) -> str:
    argv = [path, *flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run",
            "--tmpfs", "/tmp", "--", "/bin/sh", "-c", "exit 0"]  # fmt: skip
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
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


def _layers(network: bool, flags: tuple[str, ...]) -> list[str]:
    layers = ["filesystem read-only outside the workspace", "private /tmp"]
    if not network:
        layers.append("network off")
    layers += [
        "pid/ipc/uts namespaces",
        "no capabilities" + (", no nested user namespaces" if "--disable-userns" in flags else ""),
        ".git/hooks, .git/config and .vllm-bot read-only",
        "secrets hidden (~/.ssh, ~/.aws, ...)",
        "service sockets hidden (/run)",
        ENV_LAYER,
    ]
    return layers
