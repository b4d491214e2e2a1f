"""Where a task's `setup` and `check` run: in the sandbox, as the model's own commands do, with the
task's copy as the workspace (writable), the network off unless the task line says `"network": true`,
and the same boundary (safety/boundary.py): $HOME hidden but for the toolchains, the batch's child
config and the agent's own config and state hidden. A check imports what the model wrote; run outside,
a planted module would run as the user."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..safety.boundary import for_workspace
from ..safety.sandbox import Sandbox, probe, safe_environment


@dataclass(frozen=True)
class Confined:
    """How to start one shell command of a task: its argv wrapped, and its environment."""

    sandbox: Sandbox
    env: dict[str, str]

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` inside the sandbox (unchanged where none can run in auto mode; SandboxUnavailable in
        bwrap mode)."""
        return self.sandbox.wrap(argv)

    @property
    def active(self) -> bool:
        return self.sandbox.active


@contextmanager
def confined(config: Config, workspace: Path, *, network: bool, hidden: Sequence[Path]) -> Iterator[Confined]:
    box = dataclasses.replace(config.sandbox, network=network)
    boundary = for_workspace(workspace, box, allowed=config.tools.allowed_paths, extra_hidden=hidden)
    with Sandbox(workspace, box, probe(box), boundary=boundary) as sandbox:
        env = safe_environment(os.environ, extra_secrets=[config.vllm.api_key], tmpdir=sandbox.tmpdir)
        yield Confined(sandbox, env)


def place_files(source: Path, workspace: Path) -> None:
    """Copy `source`'s files into `workspace` (a task's hidden tests, just before its check), through
    nothing the model left there: a symlink on the way (`hidden_test.py -> ~/.bashrc`, `tests ->
    /elsewhere`) is removed, not followed, and so is a file where a folder goes (or the reverse)."""
    for src in sorted(source.rglob("*")):
        rel = src.relative_to(source)
        dest = workspace
        for depth, part in enumerate(rel.parts, 1):
            dest = dest / part
            last = depth == len(rel.parts)
            wants_dir = not last or src.is_dir()
            if dest.is_symlink() or (dest.exists() and not wants_dir and dest.is_dir()):
                shutil.rmtree(dest) if dest.is_dir() and not dest.is_symlink() else dest.unlink()
            elif dest.exists() and wants_dir and not dest.is_dir():
                dest.unlink()
        if src.is_dir():
            dest.mkdir(exist_ok=True)
        else:
            shutil.copyfile(src, dest)
