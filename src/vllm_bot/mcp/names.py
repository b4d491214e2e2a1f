"""Public tool names for MCP tools: `mcp__<server>__<tool>`, always within ^[a-zA-Z0-9_-]{1,64}$.

The server part never contains "__" and never starts or ends with "_", so the first "__" after the
prefix ends it and two servers can never produce the same name. Within one server, names that only
differ in characters we had to replace (`get.issue` / `get_issue`) are told apart by a short stable
hash of the original name; so are names cut to fit 64 characters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp__"
MAX_LEN = 64
SERVER_PART_MAX = 24
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def short_hash(*parts: str) -> str:
    """8 hex digits that depend only on `parts` (stable across runs and machines)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:8]


def sanitize(text: str) -> str:
    """Replace every character outside [a-zA-Z0-9_-] with "_"."""
    return _INVALID.sub("_", text)


def server_part(server: str) -> str:
    """The server's segment of a public name: no "__", no leading/trailing "_", at most 24 chars."""
    part = re.sub(r"_{2,}", "_", sanitize(server)).strip("_")
    if part and len(part) <= SERVER_PART_MAX:
        return part
    keep = part[: SERVER_PART_MAX - 9].rstrip("_")
    return f"{keep or 'server'}_{short_hash(server)}"


def _fit(head: str, tool_part: str, server: str, tool: str) -> str:
    """`head + tool_part`, cut to MAX_LEN with a hash suffix when too long."""
    name = head + tool_part
    if len(name) <= MAX_LEN:
        return name
    room = MAX_LEN - len(head) - 9
    return f"{head}{tool_part[:room]}_{short_hash(server, tool)}"


class NameTable:
    """Assigns public names; each (server, tool) keeps its name for the life of the table."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.taken: set[str] = set(reserved)
        self.assigned: dict[tuple[str, str], str] = {}
        self._servers: dict[str, str] = {}

    def server(self, server: str) -> str:
        """The server part for `server`, unique among the servers seen so far."""
        if server not in self._servers:
            part = server_part(server)
            if part in self._servers.values():
                part = f"{part[: SERVER_PART_MAX - 9].rstrip('_')}_{short_hash(server)}"
            self._servers[server] = part
        return self._servers[server]

    def assign(self, server: str, tool: str) -> str:
        key = (server, tool)
        if key in self.assigned:
            return self.assigned[key]
        head = f"{PREFIX}{self.server(server)}__"
        tool_part = sanitize(tool)
        if not re.search(r"[a-zA-Z0-9]", tool_part):  # nothing readable left (e.g. a Cyrillic name)
            tool_part = "tool_" + short_hash(tool)
        name = _fit(head, tool_part, server, tool)
        if name in self.taken:
            name = _fit(head, f"{tool_part}_{short_hash(server, tool)}", server, tool)
        counter = 2
        while name in self.taken:  # only after a hash collision: practically never
            suffix = f"_{counter}"
            name = name[: MAX_LEN - len(suffix)] + suffix
            counter += 1
        self.taken.add(name)
        self.assigned[key] = name
        return name
