"""ToolExecutor: runs a checked call's handler (checking a raw call first, once) and turns expected
failures into error results the model can act on. Handlers live in an explicit registry (name ->
callable)."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import os
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..calls import CheckedCall, ToolCall, ToolResult, error_result
from ..config import ToolsConfig
from ..config.statedir import STATE_DIR_NAME
from ..prompts import message
from ..safety.boundary import Boundary, for_workspace
from .context import ToolContext
from .definitions import TOOL_DEFINITIONS, find_definition, tool_names
from .errors import ToolError, describe_os_error
from .paths import Confinement
from .validation import check_call, unknown_tool

if TYPE_CHECKING:
    from ..safety.sandbox.limits import CommandLimits

Handler = Callable[..., ToolResult]
CONTEXT_PARAMS = ("on_output", "cancel", "deadline", "call_id")  # keyword-only extras a handler may declare
_VERBS = {"read": "read", "write": "write", "edit": "edit", "exec": "run a command in"}
# The built-in tools and their previews, "module:function" in this package; each module is imported
# when its tool is first called (or previewed), as the session's first request needs none of them.
_BUILTINS = {
    "read": "read:read_tool",
    "write": "write:write_tool",
    "edit": "edit:edit_tool",
    "exec": "shell:exec_tool",
}
_PREVIEWS = {"write": "write:preview_write", "edit": "edit:preview_edit"}


class ToolExecutor:
    """Runs the built-in tools (read, write, edit, exec) and any registered extra tools."""

    def __init__(
        self,
        workspace: Path,
        config: ToolsConfig,
        *,
        state_dir: Path | None = None,
        definitions: list[dict[str, Any]] | None = None,
        wrap_command: Callable[[list[str]], list[str]] | None = None,
        env: Mapping[str, str] | None = None,
        boundary: Boundary | None = None,
        after_command: Callable[[], list[str]] | None = None,
        limits: CommandLimits | None = None,
    ):
        workspace = Path(os.path.realpath(workspace))
        state = Path(state_dir) if state_dir is not None else workspace / STATE_DIR_NAME
        if boundary is None:  # the session passes its own; without one, the defaults for `workspace`
            own = [] if state.resolve().is_relative_to(workspace) else [state]
            boundary = for_workspace(workspace, allowed=config.allowed_paths, extra_hidden=own)
        paths = Confinement(boundary)
        base_env = dict(os.environ) if env is None else dict(env)
        self.context = ToolContext(workspace, config, paths, state, wrap_command, base_env, after_command)
        self.context.limits = limits
        self.definitions: list[dict[str, Any]] = list(
            TOOL_DEFINITIONS if definitions is None else definitions
        )
        self.handlers: dict[str, Handler] = {
            n: _Builtin(_BUILTINS[n], self.context) for n in tool_names(self.definitions) if n in _BUILTINS
        }

    def register(self, definition: dict[str, Any], handler: Handler) -> None:
        """Serve an extra tool (e.g. from MCP). `handler(**arguments)` returns a ToolResult (ids are
        filled in here); it may raise ToolError, and may declare keyword-only `on_output`/`cancel`/
        `deadline`."""
        name = definition["function"]["name"]
        if name in self.handlers:
            raise ValueError(f"tool {name!r} is already registered")
        if find_definition(self.definitions, name) is None:
            self.definitions.append(definition)
        self.handlers[name] = handler

    def unregister(self, name: str) -> None:
        """Stop serving an extra tool (an MCP tool that went away or was turned off); the definitions
        list is changed in place, as `register` does."""
        self.handlers.pop(name, None)
        self.definitions[:] = [d for d in self.definitions if d["function"]["name"] != name]

    def available(self) -> list[str]:
        return [n for n in tool_names(self.definitions) if n in self.handlers]

    def execute(self, name: str, args: dict[str, Any], *, call_id: str = "", **kw: Any) -> ToolResult:
        """`execute_call` for raw arguments (tests, `!command`, mentions): checked here, once."""
        return self.execute_call(ToolCall(call_id, name, args), **kw)

    def execute_call(
        self,
        call: ToolCall,
        *,
        on_output: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        deadline: float | None = None,
    ) -> ToolResult:
        """Run one call; expected failures come back as kind "error", never as exceptions. A
        CheckedCall runs as it is; any other call is checked first, and one that arrived broken
        (metadata error) is not run. `deadline` (time.monotonic): the task's time budget, for
        handlers that can honour it (exec)."""
        checked = check_call(call, self.definitions)
        if not isinstance(checked, CheckedCall):
            return error_result(call, str(checked))
        name, handler = call.name, self.handlers.get(call.name)
        if handler is None:
            return error_result(call, unknown_tool(name, self.available()))
        extras = {"on_output": on_output, "cancel": cancel, "deadline": deadline, "call_id": call.id}
        accepted = _keyword_extras(handler)
        try:
            result = handler(**checked.arguments, **{k: v for k, v in extras.items() if k in accepted})
        except ToolError as e:
            return error_result(call, str(e))
        except UnicodeError as e:
            return error_result(call, message("encoding_failed", tool=name, error=e))
        except OSError as e:
            return error_result(call, describe_os_error(e, _VERBS.get(name, "use"), self.context.display))
        return dataclasses.replace(result, tool_call_id=call.id, name=name)

    def prefetch(self, calls: list[CheckedCall]) -> None:
        """Before a turn's calls run in order: a handler that can start its calls ahead (`prefetch`,
        e.g. several delegate calls at once) is handed those of its tool."""
        for name, handler in self.handlers.items():
            start = getattr(handler, "prefetch", None)
            mine = [c for c in calls if c.name == name]
            if start is not None and mine:
                start(mine)

    def preview(self, call: ToolCall) -> str | None:
        """What write/edit would change (side-effect free), for the approval prompt; None otherwise."""
        if call.name not in _PREVIEWS or call.name not in self.handlers:
            return None
        checked = check_call(call, self.definitions)
        if not isinstance(checked, CheckedCall):
            return None
        preview: Callable[..., str] = _function(_PREVIEWS[call.name])
        try:
            return preview(self.context, **checked.arguments)
        except (ToolError, OSError, UnicodeError):
            return None


class _Builtin:
    """A built-in tool's handler bound to the executor's context; its module is imported at the
    first call. `inspect.signature` sees the tool function's own parameters."""

    def __init__(self, target: str, context: ToolContext) -> None:
        self.target = target
        self.context = context

    @functools.cached_property
    def handler(self) -> Handler:
        return partial(_function(self.target), self.context)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.handler)

    def __call__(self, **arguments: Any) -> ToolResult:
        return self.handler(**arguments)


def _function(target: str) -> Any:
    """The function `module:name` of this package."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f".{module}", __package__), name)


def _keyword_extras(handler: Handler) -> frozenset[str]:
    try:
        params = inspect.signature(handler).parameters
    except (TypeError, ValueError):
        return frozenset()
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    return frozenset(n for n in CONTEXT_PARAMS if n in params and params[n].kind is keyword_only)
