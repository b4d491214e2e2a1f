"""What every tool handler shares: its context, the error it raises for the model, result builders."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..calls import ToolResult
from ..config import ToolsConfig
from .errors import ToolError
from .paths import Confinement
from .seen import FileMemory

if TYPE_CHECKING:
    from ..safety.sandbox.limits import CommandLimits

__all__ = ["ToolContext", "ToolError", "fail", "ok"]


@dataclass
class ToolContext:
    """Everything a built-in handler needs; built once per ToolExecutor."""

    workspace: Path
    config: ToolsConfig
    paths: Confinement
    state_dir: Path
    wrap_command: Callable[[list[str]], list[str]] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    after_command: Callable[[], list[str]] | None = None  # checks after every exec; notes for the model
    before_command: Callable[[], None] | None = None  # what to note before every exec (tripwire.arm)
    seen: FileMemory = field(default_factory=FileMemory)  # what the model last saw of each file
    limits: CommandLimits | None = None  # resource limits of exec commands (and what hitting one means)
    pid_namespace: bool = False  # exec runs in its own PID namespace: nothing outlives the command

    def display(self, path: str | os.PathLike[str]) -> str:
        return self.paths.display(path)


def ok(text: str) -> ToolResult:
    """A successful text result; the executor fills in the call id and tool name."""
    return ToolResult("", "", "text", repair_surrogates(text))


def fail(text: str) -> ToolResult:
    """An error result for the model (also used for a non-zero exit, which still shows output)."""
    return ToolResult("", "", "error", repair_surrogates(text))


def repair_surrogates(text: str) -> str:
    """Text that encodes as UTF-8: bytes kept by surrogateescape become U+FFFD for display."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # surrogates that are not escaped bytes
        return text.encode("utf-8", "replace").decode("utf-8")


def human_size(n: int) -> str:
    """1234567 -> '1.2 MB' (decimal units; exact bytes below 1 KB)."""
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # pragma: no cover - the loop always returns


def plural(n: int, word: str, words: str | None = None) -> str:
    """ "1 line", "3 lines"; `words` is the plural form when adding "s" is wrong ("processes")."""
    return f"{n:,} " + (word if n == 1 else words or word + "s")


def count_lines(text: str) -> int:
    """Lines as read numbers them: newline-terminated lines plus a final unterminated one."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
