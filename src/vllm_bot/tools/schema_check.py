"""A JSON Schema check for the few keywords tool schemas mostly use, with jsonschema's own errors.

Every tool call's arguments are checked against the tool's schema. jsonschema does that for any
schema, but importing it costs ~160 ms and 8 MiB on a 2-core machine, a sixth of a session's memory
(issue 22). The built-in tools' schemas (and many MCP tools') use only `type`, `properties`,
`required`, `additionalProperties` and `minimum`: `covers` says whether a schema keeps to the keywords
below, and `iter_errors` checks those the way jsonschema's Draft 2020-12 validator does, with the same
messages and error fields (`validator`, `validator_value`, `instance`, `absolute_path`), so the model
hears the same words either way. Any other schema goes to jsonschema (validation.py).
tests/tools/test_schema_check.py holds the two to the same answers.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CHECKED = frozenset({"type", "properties", "required", "additionalProperties", "minimum"})
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})
TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


@dataclass(frozen=True)
class SchemaError:
    message: str
    validator: str
    validator_value: Any
    instance: Any
    absolute_path: tuple[Any, ...] = ()


def covers(schema: Any) -> bool:
    """Whether `iter_errors` checks this schema completely (else jsonschema must). A schema of its own
    is a dict here (jsonschema reports a `false` subschema without its path: leave those to it)."""
    if not isinstance(schema, dict) or not set(schema) <= CHECKED | ANNOTATIONS:
        return False
    kind = schema.get("type", "object")
    kinds = kind if isinstance(kind, list) else [kind]
    if not kinds or not all(isinstance(k, str) and k in TYPES for k in kinds):
        return False
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    required = schema.get("required", [])
    return (
        isinstance(props, dict)
        and all(covers(sub) for sub in props.values())
        and (isinstance(extra, bool) or covers(extra))
        and isinstance(required, list)
        and all(isinstance(r, str) for r in required)
        and _is_number(schema.get("minimum", 0))
    )


def iter_errors(schema: Any, instance: Any, path: tuple[Any, ...] = ()) -> Iterator[SchemaError]:
    """The errors of `instance` against a schema `covers` accepts, as jsonschema yields them."""
    for keyword, value in schema.items():
        for message in _KEYWORDS.get(keyword, _nothing)(value, instance, schema):
            yield SchemaError(message, keyword, value, instance, path)
        if keyword == "properties" and isinstance(instance, dict):
            for name, sub in value.items():
                if name in instance:
                    yield from iter_errors(sub, instance[name], (*path, name))
        if keyword == "additionalProperties" and isinstance(value, dict) and isinstance(instance, dict):
            for name in _extras(instance, schema):
                yield from iter_errors(value, instance[name], (*path, name))


def _nothing(value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[str]:
    return iter(())


def _type(value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[str]:
    kinds = value if isinstance(value, list) else [value]
    if not any(_is_type(instance, kind) for kind in kinds):
        yield f"{instance!r} is not of type {', '.join(repr(kind) for kind in kinds)}"


def _required(value: list[str], instance: Any, schema: dict[str, Any]) -> Iterator[str]:
    if isinstance(instance, dict):
        yield from (f"{name!r} is a required property" for name in value if name not in instance)


def _additional(value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[str]:
    if value is False and isinstance(instance, dict):
        extras = sorted(set(_extras(instance, schema)), key=str)
        if extras:
            verb = "was" if len(extras) == 1 else "were"
            listed = ", ".join(repr(extra) for extra in extras)
            yield f"Additional properties are not allowed ({listed} {verb} unexpected)"


def _minimum(value: Any, instance: Any, schema: dict[str, Any]) -> Iterator[str]:
    if _is_number(instance) and instance < value:
        yield f"{instance!r} is less than the minimum of {value!r}"


_KEYWORDS = {"type": _type, "required": _required, "additionalProperties": _additional, "minimum": _minimum}


def _extras(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    props = schema.get("properties", {})
    return (name for name in instance if name not in props)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        return whole and not isinstance(value, bool)
    if kind == "number":
        return _is_number(value)
    return isinstance(value, _PYTHON_TYPES[kind])


_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
