"""`@path` in a user's message attaches that file (or directory listing) to the message.

The prompt completes `@` paths; sending the message reads each mentioned path that exists with the
read tool (so its rules apply: inside the workspace or `tools.allowed_paths`, no binaries, numbered
lines) and appends the output below the message, within a budget so one mention cannot fill a small
context window. A word after `@` that is not an existing path (`@decorator`, `user@host`) is left alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MENTION = re.compile(r"(?<![^\s(])@(\S+)")
TRAILING = ".,;:!?)]}'\""
MAX_FILES = 8


@dataclass
class Attachments:
    text: str  # the message as the model sees it
    attached: list[str] = field(default_factory=list)  # what the user is told, one line per mention


def mentioned_paths(text: str, workspace: Path) -> list[str]:
    """The `@` words of `text` that name an existing path (relative to `workspace`), in order, once."""
    found: list[str] = []
    for match in MENTION.finditer(text):
        raw = match.group(1).rstrip(TRAILING)
        if raw and raw not in found and os.path.lexists(workspace / os.path.expanduser(raw)):
            found.append(raw)
    return found[:MAX_FILES]


def budget_for(context_window: int, chars_per_token: float) -> int:
    """Characters of attachments per message: about a quarter of the context window."""
    return max(4_000, int(context_window * 0.25 * chars_per_token))


def attach(text: str, workspace: Path, read: Callable[[str], Any], budget: int) -> Attachments:
    """`text` with the read tool's output for each mentioned path appended; `read(path)` returns a
    ToolResult. Output past `budget` characters is cut at a line, with how to read the rest."""
    paths = mentioned_paths(text, workspace)
    if not paths:
        return Attachments(text)
    parts: list[str] = []
    told: list[str] = []
    for raw in paths:
        if budget <= 0:
            told.append(f"Not attached @{raw}: no room left in this message (the model can read it)")
            continue
        result = read(raw)
        if result.kind == "error":
            told.append(f"Not attached @{raw}: {result.value}")
            continue
        body = str(result.value)
        header = body.partition("\n")[0].rstrip(":")
        if len(body) > budget:
            body = body[: body.rfind("\n", 0, budget) + 1] + (
                f"[attachment cut to fit the context window: use the read tool on {raw} for the rest]\n"
            )
            header += ", cut to fit the context window"
        budget -= len(body)
        parts.append(f'<attached path="{raw}">\n{body.rstrip()}\n</attached>')
        told.append(f"Attached @{raw}: {header}")
    if not parts:
        return Attachments(text, told)
    return Attachments("\n\n".join([text, *parts]), told)
