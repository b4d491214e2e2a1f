"""What an eval run hides from its agents' commands and its checks, beyond what the boundary always
hides (the package's `eval/tasks`, a checkout's `tests/eval`: safety/boundary.py), and the harness it
shows them. Hidden: the suite's hidden files, the other modes' outputs (their checks' logs and kept
workspaces hold hidden tests), and, run from a checkout, the checkout's git history and build output,
which hold the suite too. Shown: the harness, which every check runs (under $HOME nothing is visible
unless shown). Only inside the sandbox: without it, eval says a score may be inflated."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..safety.boundary import for_workspace
from ..safety.sandbox.status import probe
from .checks import HARNESS_DIR

CHECKOUT = Path(__file__).resolve().parents[3]  # the checkout, when the package runs from one


def checkout_copies(checkout: Path = CHECKOUT) -> list[Path]:
    """A checkout's git directories and build output (they hold copies of the suite)."""
    if not (checkout / "cli.py").is_file():
        return []  # an installed package: no checkout around it
    found = [checkout / "build", checkout / "dist"]
    dot_git = checkout / ".git"
    found.append(dot_git)
    if dot_git.is_file():  # a worktree: its git dir, and the repository's that holds the objects
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            git_dir = (checkout / text.removeprefix("gitdir:").strip()).resolve()
            found.append(git_dir)
            common = git_dir / "commondir"
            if common.is_file():
                found.append((git_dir / common.read_text().strip()).resolve())
    return [path for path in found if path.exists()]


def hidden_for(out: Path, mode: str, modes: list[str]) -> list[Path]:
    """The paths one mode's agents and checks must not see."""
    others = [out / label for label in modes if label != mode]
    return [out / "suite" / "hidden", *others, *checkout_copies()]


def confined(config: Any, out: Path, mode: str, modes: list[str]) -> Any:
    """The config a mode's batch runs with: `hidden_for` hidden, the harness shown."""
    box = config.sandbox
    hidden = [*box.hidden_paths, *(str(p) for p in hidden_for(out, mode, modes))]
    visible = [*box.visible_paths, str(HARNESS_DIR)]
    sandbox = dataclasses.replace(box, hidden_paths=hidden, visible_paths=visible)
    return dataclasses.replace(config, sandbox=sandbox)


def sandbox_record(config: Any, out: Path) -> dict[str, Any]:
    """Whether the tasks ran sandboxed (eval.json keeps it), and warnings for the user: without the
    sandbox the hidden tests are not hidden; an output directory the sandbox shows lets a task read
    the others' repositories."""
    status = probe(config.sandbox)
    warnings = []
    if not status.active:
        warnings.append(
            f"{status.warning}. The tasks' hidden tests are hidden from the agents' commands only inside "
            "the sandbox, so without it a score may count tasks solved by reading them"
        )
    else:
        boundary = for_workspace(out / "mode" / "tasks" / "task" / "workspace", config.sandbox)
        if boundary.visible((out / "suite" / "repos").resolve()):
            warnings.append(
                f"the output directory {out} is visible to the agents' commands (it is outside $HOME and "
                "/tmp), so a task could read the other tasks' repositories; give --output-dir a folder "
                "under $HOME or /tmp"
            )
    return {"active": status.active, "mode": config.sandbox.mode, "warnings": warnings}
