"""The exception tool handlers raise for expected failures, and messages for OS errors."""

from __future__ import annotations

import errno
from collections.abc import Callable


class ToolError(Exception):
    """An expected failure; the message is written for the model and says what to do next."""


_OS_HINTS = {
    errno.EACCES: "permission denied: the agent cannot {verb} {path}. Choose another path",
    errno.EPERM: "operation not permitted on {path}. Choose another path",
    errno.ENOSPC: "no space left on the device holding {path}. Free some space, then retry",
    errno.EDQUOT: "disk quota exceeded for {path}. Free some space, then retry",
    errno.EROFS: "{path} is on a read-only file system. Choose a path inside the workspace",
    errno.ENAMETOOLONG: "the path {path} is too long. Use a shorter name",
    errno.ELOOP: "{path} goes through a symlink loop (or a link swapped in meanwhile). Use a direct path",
    errno.ENOTDIR: "a component of {path} is a file, not a directory. Check the path with read on its parent",
    errno.EISDIR: "{path} is a directory. Give a file path (read lists a directory)",
    errno.ENOENT: "{path} does not exist (it may have just been removed). Use read on its directory",
    errno.EFBIG: "the file {path} would be too large",
    errno.EBUSY: "{path} is busy. Retry later or choose another path",
}


def describe_os_error(error: OSError, verb: str, shown: Callable[[str], str]) -> str:
    """A message for the model about a failed file operation; `shown` displays a path."""
    path = shown(str(error.filename)) if error.filename else "the file"
    hint = _OS_HINTS.get(error.errno or 0)
    if hint:
        return hint.format(verb=verb, path=path) + "."
    return f"could not {verb} {path}: {error.strerror or error}. Check the path and retry."
