"""What a config value must be beyond its type: number ranges and the allowed `vllm.tool_choice`.

`config.apply_mapping` asks `value_problem` for every leaf it sets, so a value that makes no sense
(`agent.max_iterations: 0`, `vllm.tool_choice: "bogus"`) is a config error naming the key and the
layer it came from (file, environment variable or command line), exactly like a wrong type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .mcp.names import NAME_RE, PREFIX
from .tooldefs import TOOL_DEFINITIONS, tool_names

TOOL_CHOICE_MODES = ("auto", "none", "required")

Rule = tuple[Callable[[Any], bool], str]  # (holds for a good value, what a good value is)
_AT_LEAST_1: Rule = (lambda v: v >= 1, "at least 1")
_POSITIVE: Rule = (lambda v: v > 0, "greater than 0")
_NOT_NEGATIVE: Rule = (lambda v: v >= 0, "0 or more")

# dotted key -> rule; None (where the type allows it) always passes.
NUMBER_RULES: dict[str, Rule] = {
    "vllm.temperature": _NOT_NEGATIVE,
    "vllm.max_tokens": _AT_LEAST_1,
    "vllm.timeout": _POSITIVE,
    "vllm.stream_idle_timeout": _POSITIVE,
    "vllm.retry_window": _POSITIVE,
    "vllm.connect_timeout": _POSITIVE,
    "vllm.context_window": _AT_LEAST_1,
    "vllm.retry_attempts": _AT_LEAST_1,
    "vllm.retry_base": _NOT_NEGATIVE,
    "vllm.retry_cap": _NOT_NEGATIVE,
    "agent.max_iterations": _AT_LEAST_1,
    "agent.max_malformed_replies": _AT_LEAST_1,
    "agent.time_budget": _POSITIVE,
}


def value_problem(key: str, value: Any) -> str | None:
    """Why `value` (already of the right type) makes no sense for dotted `key`; None if it does."""
    if key == "vllm.tool_choice":
        return None if is_tool_choice(value) else _TOOL_CHOICE_HELP + f", got {json.dumps(value)}"
    rule = NUMBER_RULES.get(key)
    if rule is None or value is None or rule[0](value):
        return None
    return f"must be {rule[1]}, got {json.dumps(value)}"


def is_tool_choice(value: str) -> bool:
    """auto | none | required | a built-in tool | an MCP tool name (its tools are not known until
    the servers start, so any well-formed `mcp__SERVER__TOOL` is accepted here)."""
    if value in TOOL_CHOICE_MODES or value in tool_names(TOOL_DEFINITIONS):
        return True
    server, sep, tool = value.removeprefix(PREFIX).partition("__")
    return value.startswith(PREFIX) and bool(NAME_RE.match(value) and server and sep and tool)


_TOOL_CHOICE_HELP = (
    f"must be {', '.join(TOOL_CHOICE_MODES)}, a tool name ({', '.join(tool_names(TOOL_DEFINITIONS))}) "
    "or an MCP tool name (mcp__SERVER__TOOL)"
)
