"""What every command's git finds: the workspace's own repository, never a planted one.

Commands get `safe.bareRepository=explicit` as command-line config (GIT_CONFIG_COUNT/KEY/VALUE), so
git never takes a directory laid out as a bare repository (the workspace root or `sub/` with HEAD,
objects, refs and a config naming programs) for the repository it is in; and GIT_CEILING_DIRECTORIES
stops discovery at the top of the workspace's own repository (or the workspace, without one), so a
repository above it is never used either. An empty `.git` is the sandbox's stand-in for a missing
repository (statedir.is_stand_in), not a repository: discovery passes over it.
`git --git-dir=...` still works: it is explicit.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.statedir import is_stand_in


def git_discovery_env(workspace: Path) -> dict[str, str]:
    """The variables that pin git discovery for commands run in `workspace`."""
    workspace = Path(os.path.abspath(workspace))
    top = next((d for d in (workspace, *workspace.parents) if _repository_at(d)), workspace)
    return {
        "GIT_CEILING_DIRECTORIES": str(top.parent),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.bareRepository",
        "GIT_CONFIG_VALUE_0": "explicit",
    }


def _repository_at(folder: Path) -> bool:
    dot_git = folder / ".git"
    return os.path.lexists(dot_git) and not is_stand_in(dot_git)
