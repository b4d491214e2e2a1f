"""What a config value must be beyond its type, declared on the dataclass field itself.

A numeric field is declared with `ranged(default, ...)` (its range lives in the field's metadata) and
`vllm.tool_choice` with `checked(default, tool_choice_problem)`. `config.apply_mapping` asks
`value_problem` for every field it sets, so a value that makes no sense (`agent.max_iterations: 0`,
`vllm.tool_choice: "bogus"`) is a config error naming the key and the layer it came from (file,
environment variable or command line), exactly like a wrong type. A test checks that every numeric
field of every section declares a range, so a new field cannot skip the check.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..mcp.names import NAME_RE, PREFIX
from ..tools.definitions import TOOL_DEFINITIONS, tool_names

TOOL_CHOICE_MODES = ("auto", "none", "required")
RULE = "rule"  # the metadata key: a callable(value) -> problem or None

Rule = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class Range:
    """Bounds for a number: `low` inclusive, `above` exclusive, `high` inclusive (None: unbounded)."""

    low: float | None = None
    above: float | None = None
    high: float | None = None
    says: str | None = None  # what a good value is, when the bounds alone read badly

    def __call__(self, value: Any) -> str | None:
        good = (
            (self.low is None or value >= self.low)
            and (self.above is None or value > self.above)
            and (self.high is None or value <= self.high)
        )
        return None if good else f"must be {self.says or self.wording()}, got {json.dumps(value)}"

    def wording(self) -> str:
        if self.low is not None and self.high is not None:
            return f"between {self.low:g} and {self.high:g}"
        parts = []
        if self.above is not None:
            parts.append(f"greater than {self.above:g}")
        if self.low is not None:
            parts.append("0 or more" if self.low == 0 else f"at least {self.low:g}")
        if self.high is not None:
            parts.append(f"at most {self.high:g}")
        return " and ".join(parts)


def ranged(
    default: Any,
    *,
    low: float | None = None,
    above: float | None = None,
    high: float | None = None,
    says: str | None = None,
) -> Any:
    """A dataclass field whose value (when not None) must lie in the given range."""
    return checked(default, Range(low, above, high, says))


def checked(default: Any, rule: Rule) -> Any:
    """A dataclass field whose value (when not None) must satisfy `rule` (returns a problem or None)."""
    return dataclasses.field(default=default, metadata={RULE: rule})


def value_problem(field: dataclasses.Field[Any], value: Any) -> str | None:
    """Why `value` (already of the field's type) makes no sense for `field`; None if it does."""
    rule = field.metadata.get(RULE)
    if rule is None or value is None:
        return None
    problem: str | None = rule(value)
    return problem


def tool_choice_problem(value: str) -> str | None:
    return None if is_tool_choice(value) else _TOOL_CHOICE_HELP + f", got {json.dumps(value)}"


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
