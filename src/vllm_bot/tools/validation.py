"""Check and normalize tool arguments against a tool's JSON schema from TOOL_DEFINITIONS.

Small models spell argument names their own way (`old_string`, `file_path`, `replaceAll`) and send
numbers as strings. What can be mapped or coerced without guessing is; the rest becomes an
`ArgumentError` whose message tells the model exactly what to send instead.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any

from ..calls import CallProblem, CheckedCall, ToolCall
from ..prompts import message
from . import schema_check
from .definitions import find_definition, signature, tool_names
from .shapes import example_arguments

# Spellings models use for our parameters, beyond case/underscore differences (those map by rule).
ARG_ALIASES: dict[str, str] = {
    "old_string": "oldText",
    "old_str": "oldText",
    "old": "oldText",
    "search": "oldText",
    "new_string": "newText",
    "new_str": "newText",
    "new": "newText",
    "replace": "newText",
    "file_path": "path",
    "filepath": "path",
    "file": "path",
    "filename": "path",
    "cmd": "command",
    "text": "content",
    "contents": "content",
    "start_line": "offset",
    "line": "offset",
    "lines": "limit",
}

# (tool, argument) pairs whose string is a whole file's text: an object or array given there is the
# JSON document the model meant to write (`write(path="x.json", content={...})`). Not edit's
# oldText/newText: they are fragments inside a file, and JSON laid out by us would neither match
# the file's text nor fit its indentation. Anywhere else a list or object for a string is a mistake
# the model must hear about (`path=["a.py"]`, `command=["ls", "-la"]`), never something to run.
# Kept here rather than as a marker in TOOL_DEFINITIONS, which are sent to the server as they are.
JSON_TEXT_ARGUMENTS: frozenset[tuple[str, str]] = frozenset({("write", "content")})


class ArgumentError(ValueError):
    """Arguments that do not fit the schema; the message is written for the model."""


def check_call(call: ToolCall, definitions: list[dict[str, Any]]) -> CheckedCall | CallProblem:
    """The one check of a call before it runs: its problem (as its maker marked it, an unknown tool,
    arguments that do not fit the schema), or the call with its arguments normalized. A call that
    is already a CheckedCall is not checked again."""
    if call.error:
        return call.error
    if isinstance(call, CheckedCall):
        return call
    definition = find_definition(definitions, call.name)
    if definition is None:
        return CallProblem(unknown_tool(call.name, tool_names(definitions)), "unknown_tool")
    try:
        arguments = normalize_arguments(definition, call.arguments)
    except ArgumentError as e:
        return CallProblem(str(e), "arguments")
    return CheckedCall(call.id, call.name, arguments, call.metadata)


def unknown_tool(name: str, available: list[str]) -> str:
    """What the model is told about a call of a tool that does not exist, with the nearest name."""
    close = difflib.get_close_matches(name.lower(), available, n=1, cutoff=0.5)
    guess = message("did_you_mean", name=close[0]) if close else ""
    return message("unknown_tool", name=repr(name), guess=guess, available=", ".join(available))


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def map_argument_names(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Rename keys to the schema's spelling where the intent is unambiguous."""
    properties = schema.get("properties") or {}
    folded = {_fold(p): p for p in properties}
    out: dict[str, Any] = {}
    for key, value in args.items():
        target = key
        if key not in properties:
            alias = ARG_ALIASES.get(key) or ARG_ALIASES.get(key.lower())
            if alias is not None and alias in properties:
                target = alias
            elif _fold(key) in folded:
                target = folded[_fold(key)]
        if target in out and target != key:
            continue  # the schema's own spelling wins over an alias
        out[target] = value
    return out


def _coerce_value(value: Any, prop: dict[str, Any], json_text: bool = False) -> Any:
    kind = prop.get("type")
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return int(value.strip())
    elif kind == "number":
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return value
    elif kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
    elif kind == "string":
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, (int, float)):
            return str(value)
        if json_text and isinstance(value, (dict, list)):
            return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    elif kind in ("object", "array") and isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, (dict, list)):
            return decoded
    return value


def coerce_arguments(
    schema: dict[str, Any], args: dict[str, Any], json_text: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Coerce values to their property's type; an optional argument given as null is left out
    (models write `"offset": null` to mean "not given"). Only the string arguments named in
    `json_text` take an object or array as its JSON text."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {
        k: _coerce_value(v, properties[k], k in json_text) if k in properties else v
        for k, v in args.items()
        if not (v is None and k in properties and k not in required and not _allows_null(properties[k]))
    }


def _allows_null(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def expected_shape(definition: dict[str, Any]) -> str:
    """`edit(path, oldText, newText, replace_all?)` with `{"path": "<string>", ...}` (nested shapes drawn
    by tools/shapes.py: `[{"name": "<string>"}]`, never a bare `<array>`)."""
    params = definition["function"].get("parameters") or {}
    return f"{signature(definition, typed=False)}, arguments like {example_arguments(params)}"


def _describe_error(error: Any) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    where = f"'{path}': " if path else ""
    if error.validator == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown argument(s)")
    if error.validator == "type":
        got = json.dumps(error.instance, ensure_ascii=False)
        got = got if len(got) <= 80 else got[:77] + "..."
        if error.validator_value == "string" and isinstance(error.instance, (list, dict)):
            return where + _not_a_string(path, error.instance, got)
        return f"{where}expected {error.validator_value}, got {got}"
    return where + error.message


def _not_a_string(name: str, value: list[Any] | dict[str, Any], got: str) -> str:
    kind = "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        fix = f"send the string itself: {json.dumps(name)}: {json.dumps(value[0], ensure_ascii=False)}"
    else:
        fix = "send a single string value"
    return f"expected a string, got {kind} {got}; {fix}"


_ANY_OBJECT: dict[str, Any] = {"type": "object"}  # the schema of a tool that declares no parameters


def schema_errors(schema: dict[str, Any], args: dict[str, Any]) -> list[Any]:
    """The errors of `args` against `schema`, fewest path steps first: schema_check's own check
    where it covers the schema (no jsonschema import), else jsonschema's."""
    if schema_check.covers(schema):
        errors: Iterable[Any] = schema_check.iter_errors(schema, args)
    else:
        import jsonschema  # deferred: only for schemas schema_check does not cover

        errors = jsonschema.Draft202012Validator(schema).iter_errors(args)
    return sorted(errors, key=lambda e: (len(e.absolute_path), str(e.message)))


def normalize_arguments(definition: dict[str, Any], args: Any) -> dict[str, Any]:
    """Return arguments that satisfy the tool's schema, or raise ArgumentError for the model."""
    if not isinstance(args, dict):
        raise ArgumentError(
            f"arguments must be a JSON object, got {type(args).__name__}. "
            f"Expected {expected_shape(definition)}"
        )
    schema = definition["function"].get("parameters") or _ANY_OBJECT
    tool = definition["function"]["name"]
    json_text = frozenset(arg for t, arg in JSON_TEXT_ARGUMENTS if t == tool)
    fixed = coerce_arguments(schema, map_argument_names(schema, args), json_text)
    errors = schema_errors(schema, fixed)
    if errors:
        problems = "; ".join(_describe_error(e) for e in errors[:3])
        raise ArgumentError(
            f"invalid arguments for {tool}: {problems}. Expected {expected_shape(definition)}"
        )
    return fixed
