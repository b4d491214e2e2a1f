"""What a config value must be: its key and type (from the section's dataclass) and its rule,
declared on the dataclass field itself; `apply_mapping` puts a layer's raw data into the sections,
checking all three (an environment variable's text through `from_env`), and `ConfigError` says what
was wrong, with the key and the layer.

A numeric field is declared with `ranged(default, ...)` (its range lives in the field's metadata) and
`vllm.tool_choice` with `checked(default, tool_choice_problem)`. `apply_mapping` asks
`value_problem` for every field it sets, so a value that makes no sense (`agent.max_iterations: 0`,
`vllm.tool_choice: "bogus"`) is a config error naming the key and the layer it came from (file,
environment variable or command line), exactly like a wrong type. A test checks that every numeric
field of every section declares a range, so a new field cannot skip the check.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

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


class ConfigError(Exception):
    """Bad configuration; the message names the key and where it came from. Exit code 2."""


_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """A dataclass's field types (read only): evaluated once per class, as get_type_hints evaluates
    the text of every annotation each time (1.2 M instructions for ProfileConfig, once per profile)."""
    hints = _FIELD_TYPES.get(cls)
    if hints is None:
        hints = _FIELD_TYPES[cls] = typing.get_type_hints(cls)
    return hints


def apply_mapping(obj: Any, data: dict[str, Any], source: str, prefix: str = "") -> None:
    """Merge a nested mapping into dataclass `obj`, checking keys, types, each field's rule
    (`value_problem`) and then the object's own cross-field `check(key, source)` if it has one."""
    fields = {f.name: f for f in dataclasses.fields(obj) if f.compare}
    hints = field_types(type(obj))
    for key, value in data.items():
        dotted = prefix + key
        if key not in fields:
            hint = difflib.get_close_matches(key, list(fields), n=1)
            suggestion = f" (did you mean '{prefix}{hint[0]}'?)" if hint else ""
            raise ConfigError(f"{source}: unknown key '{dotted}'{suggestion}")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: '{dotted}' must be an object, got {_describe(value)}")
            apply_mapping(current, value, source, dotted + ".")
        else:
            value = coerce(value, hints[key], dotted, source)
            if isinstance(current, dict):  # keyed by name: a later layer adds or replaces entries
                value = {**current, **value}
            problem = value_problem(fields[key], value)
            if problem is not None:
                raise ConfigError(f"{source}: '{dotted}' {problem}")
            setattr(obj, key, value)
    check = getattr(obj, "check", None)
    if check is not None and prefix:
        check(prefix.removesuffix("."), source)


def not_above(obj: Any, small: str, big: str, key: str, source: str) -> None:
    if getattr(obj, small) > getattr(obj, big):
        raise ConfigError(
            f"{source}: '{key}.{small}' ({getattr(obj, small)}) must not be above '{key}.{big}' "
            f"({getattr(obj, big)})"
        )


def set_key(cfg: Any, dotted: str, value: Any, source: str) -> None:
    """Set one dotted key with the same checks as the file layer."""
    *parents, last = dotted.split(".")
    data: dict[str, Any] = {last: value}
    for part in reversed(parents):
        data = {part: data}
    apply_mapping(cfg, data, source)


def coerce(value: Any, tp: Any, key: str, source: str) -> Any:
    """Check `value` against type `tp`; return it (ints are accepted where floats are expected)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            try:
                return coerce(value, arg, key, source)
            except ConfigError:
                continue
        raise ConfigError(f"{source}: '{key}' must be {_type_name(tp)}, got {_describe(value)}")
    if tp is type(None):
        if value is None:
            return None
    elif origin is Literal:
        if value in args:
            return value
        choices = ", ".join(repr(a) for a in args)
        raise ConfigError(f"{source}: '{key}' must be one of {choices}, got {_describe(value)}")
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif origin is list:
        if isinstance(value, list):
            return [coerce(v, args[0], f"{key}[{i}]", source) for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            return {k: _coerce_item(v, args[1], f"{key}.{k}", source) for k, v in value.items()}
    elif tp is Any:
        return value
    elif dataclasses.is_dataclass(tp):
        return _coerce_item(value, tp, key, source)
    raise ConfigError(f"{source}: '{key}' must be {_type_name(tp)}, got {_describe(value)}")


def _coerce_item(value: Any, tp: Any, key: str, source: str) -> Any:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: '{key}' must be an object, got {_describe(value)}")
        item = tp()
        apply_mapping(item, value, source, key + ".")
        return item
    return coerce(value, tp, key, source)


def _type_name(tp: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    if tp in names:
        return names[tp]
    if tp is type(None):
        return "null"
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is list:
        return f"a list of {_type_name(typing.get_args(tp)[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict or dataclasses.is_dataclass(tp):
        return "an object"
    return str(tp)


def _describe(value: Any) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list"}
    kind = {**kinds, dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)
    shown = json.dumps(value)[:60] if not isinstance(value, (dict, list)) else ""
    return f"{kind} {shown}".strip()


ENV_KEYS = {
    "VLLM_BASE_URL": "vllm.base_url",
    "VLLM_API_KEY": "vllm.api_key",
    "VLLM_MODEL": "vllm.model",
    "DEBUG": "agent.debug",
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def from_env(cfg: Any, key: str, raw: str, var: str) -> Any:
    """An environment variable's text as the value of `key` (a boolean from 1/0, true/false, ...)."""
    section, name = key.split(".")
    tp = field_types(type(getattr(cfg, section)))[name]
    if tp is bool:
        if raw.strip().lower() in _TRUE | _FALSE:
            return raw.strip().lower() in _TRUE
        raise ConfigError(f"environment variable {var}: must be 1/0 or true/false, got {raw!r}")
    return raw
