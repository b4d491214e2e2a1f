"""The built-in tools (read, write, edit, exec) behind one ToolExecutor."""

from .errors import ToolError
from .executor import ToolExecutor

__all__ = ["ToolError", "ToolExecutor"]
