"""What travels between the batch and a Ray node: a task's workspace out, the task's files back.

Out: the workspace exactly as a task here would get it (copies.py: the repository's last commit, or
the folder), packed as a gzipped tar with a size limit; a workspace from a git repository becomes a
repository again on the node (one commit), so the agent and the diff see git as they do here. Back:
the task's directory (events, logs, diff, session, trace), unpacked into the batch's output folder.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .copies import make_copy, make_repository, remove_copy

MANIFEST = ".vllm-bot-parcel.json"  # inside the archive: {"git": bool, "workspace": "sub/dir"}
IDENTITY = {
    "GIT_AUTHOR_NAME": "vllm-bot batch",
    "GIT_AUTHOR_EMAIL": "batch@vllm-bot.invalid",
    "GIT_COMMITTER_NAME": "vllm-bot batch",
    "GIT_COMMITTER_EMAIL": "batch@vllm-bot.invalid",
}


class ParcelError(Exception):
    """A workspace cannot travel (too large, unreadable): the task's error."""


def pack_workspace(workspace: Path, exclude: list[Path], limit: int) -> bytes:
    """The workspace as a task's copy of it, archived; ParcelError past `limit` bytes of files."""
    with tempfile.TemporaryDirectory(prefix="vllm-bot-parcel-") as tmp:
        copy = make_copy(workspace, Path(tmp) / "copy", exclude)
        try:
            inside = str(copy.workspace.relative_to(copy.root))
            manifest = {"git": copy.place is not None, "workspace": inside}
            return pack_dir(copy.root, limit, skip={".git"}, manifest=manifest, what=str(workspace))
        finally:
            remove_copy(copy.root, copy.source)


def pack_dir(
    root: Path,
    limit: int,
    *,
    skip: frozenset[str] | set[str] = frozenset(),
    manifest: dict[str, Any] | None = None,
    what: str = "",
) -> bytes:
    """`root`'s contents (top-level names in `skip` left out) as a gzipped tar."""
    size = sum(
        (Path(top) / name).lstat().st_size
        for top, _, names in os.walk(root)
        for name in names
        if not (Path(top) == root and name in skip)
    )
    if size > limit:
        raise ParcelError(
            f"{what or root} holds {size / 1e6:.3g} MB, over the {limit / 1e6:.3g} MB a task may carry "
            'to a Ray node (--ray-max-archive; or put it on storage every node mounts and add "shared": true)'
        )
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=1) as tar:
        for entry in sorted(os.listdir(root)):
            if entry not in skip:
                tar.add(root / entry, arcname=entry)
        if manifest is not None:
            data = json.dumps(manifest).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    """An archive of `pack_dir` into `dest` (made; nothing is written outside it)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(dest, filter="tar")
        else:  # Python before 3.10.12 / 3.11.4: refuse what the filter would
            for member in tar.getmembers():
                if Path(member.name).is_absolute() or ".." in Path(member.name).parts:
                    raise ParcelError(f"archive member {member.name!r} points outside {dest}")
            tar.extractall(dest)


def unpack_workspace(data: bytes, dest: Path) -> Path:
    """A packed workspace made whole again at `dest`; the path the agent works in."""
    unpack(data, dest)
    manifest = json.loads((dest / MANIFEST).read_text())
    (dest / MANIFEST).unlink()
    if manifest["git"]:
        make_repository(dest, "vllm-bot batch: the task's workspace", IDENTITY)
    return dest / manifest["workspace"]


def replace_dir(data: bytes, dest: Path) -> None:
    """The task's directory sent back by its node, in place of whatever an earlier attempt left."""
    if dest.exists():
        shutil.rmtree(dest)
    unpack(data, dest)
