"""The tools wing: the tool definitions (the single source of truth), their validation, and the
built-in tools (read, write, edit, exec) behind one ToolExecutor.

Attributes load lazily: `tools.definitions` is pure data that `config.rules` and the parser read, so
importing it must not pull in the executor (which imports `config`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .definitions import TOOL_DEFINITIONS
    from .errors import ToolError
    from .executor import ToolExecutor

_LAZY = {
    "TOOL_DEFINITIONS": ".definitions",
    "ToolError": ".errors",
    "ToolExecutor": ".executor",
}

__all__ = ["TOOL_DEFINITIONS", "ToolError", "ToolExecutor"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name], __name__), name)
