"""Build the tools a session uses: the sandbox under `exec`, the child environment, the executor."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..safety.boundary import Boundary, build
from ..safety.sandbox import Sandbox, SandboxUnavailable, probe, safe_environment
from ..safety.sandbox.limits import CommandLimits
from ..safety.sandbox.tripwire import Tripwire
from . import ToolError, ToolExecutor


@dataclass
class Toolbox:
    executor: Any  # tools.ToolExecutor
    sandbox: Any  # sandbox.Sandbox
    status: Any  # sandbox.SandboxStatus
    limits: Any = None  # sandbox.limits.CommandLimits

    @property
    def sandboxed(self) -> bool:
        return bool(self.sandbox.active)

    def set_boundary(self, boundary: Boundary) -> None:
        """A new boundary for the session (plan mode's read-only workspace): the sandbox's mounts and
        the file tools follow it from the next call."""
        self.sandbox.boundary = boundary
        self.executor.context.paths.boundary = boundary

    def close(self) -> None:
        self.sandbox.close()
        if self.limits is not None:
            self.limits.close()


def build_toolbox(
    config: Config, workspace: Path, state_dir: Path, boundary: Boundary | None = None
) -> Toolbox:
    """The tools of a session inside `boundary` (the one policy the sandbox and the file tools share;
    by default the session's, from `config`)."""
    if boundary is None:
        boundary = build(workspace, config, state_dirs=[state_dir])
    status = probe(config.sandbox)
    box = config.sandbox
    sandbox = Sandbox(workspace, box, status, boundary=boundary)
    limits = CommandLimits(box, status.cgroups, sandboxed=sandbox.active)

    def wrap(argv: list[str]) -> list[str]:
        try:
            return sandbox.wrap(argv, limits.begin())
        except SandboxUnavailable as e:
            raise ToolError(
                f"commands cannot run here: {e}. Work with read, write and edit instead."
            ) from None

    env = safe_environment(os.environ, extra_secrets=[config.vllm.api_key], tmpdir=sandbox.tmpdir)
    confined = sandbox.active or config.sandbox.mode == "bwrap"  # bwrap mode without bwrap: refuse, via wrap
    executor = ToolExecutor(
        workspace,
        config.tools,
        state_dir=state_dir,
        wrap_command=wrap if confined else None,
        env=env,
        boundary=boundary,
        limits=limits,
    )
    executor.context.pid_namespace = sandbox.active  # bwrap --unshare-pid (status.BASE_FLAGS)
    tripwire = Tripwire.for_workspace(workspace, boundary)
    executor.context.before_command = tripwire.arm
    executor.context.after_command = _after_command(tripwire, sandbox)
    return Toolbox(executor, sandbox, status, limits)


def _after_command(tripwire: Any, sandbox: Any) -> Any:
    """Checks after every command: protected files put back, the sandbox's mount points removed."""

    def check() -> list[str]:
        notes: list[str] = tripwire.check()
        sandbox.release_mount_points()
        return notes

    return check
