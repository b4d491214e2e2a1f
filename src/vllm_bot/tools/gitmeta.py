"""The file tools never lay out a git repository: a file named HEAD that holds a ref or an object id.

git takes any directory with a valid `HEAD`, `objects/` and `refs/` for a repository, and runs what
its `config` names (core.fsmonitor, filters, ...) for whoever runs git there: a read-only-looking
`git status`, or the agent's own git on the host. Without a valid HEAD no directory is a repository,
so that one file is refused (write and edit alike); `.git` itself is protected by name.
"""

from __future__ import annotations

import re
from pathlib import Path

_HEAD_CONTENT = re.compile(rb"\s*(ref:\s*refs/|[0-9a-fA-F]{40})")


def git_metadata_reason(target: Path, data: bytes) -> str | None:
    """Why writing `data` to `target` would make its directory a git repository; None otherwise."""
    if target.name.lower() != "head" or not _HEAD_CONTENT.match(data[:200]):
        return None
    return (
        f"{target.name} with this content would make {target.parent.name or 'the directory'}/ a git "
        "repository (git runs the commands its config names). The file tools never create git "
        "metadata; if the task really needs a repository, ask the user to create it with git"
    )
