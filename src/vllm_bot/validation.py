"""Check and normalize tool arguments against a tool's JSON schema from TOOL_DEFINITIONS.

Small models spell argument names their own way (`old_string`, `file_path`, `replaceAll`) and send
numbers as strings. What can be mapped or coerced without guessing is; the rest becomes an
`ArgumentError` whose message tells the model exactly what to send instead.
"""

from __future__ import annotations

import json
from typing import Any

from .tooldefs import signature

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


class ArgumentError(ValueError):
    """Arguments that do not fit the schema; the message is written for the model."""


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


def _coerce_value(value: Any, prop: dict[str, Any]) -> Any:
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
        if isinstance(value, (dict, list)):
            # e.g. write(path="x.json", content={...}): the model meant the JSON text.
            return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    elif kind in ("object", "array") and isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, (dict, list)):
            return decoded
    return value


def coerce_arguments(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Coerce values to their property's type; an optional argument given as null is left out
    (models write `"offset": null` to mean "not given")."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {
        k: _coerce_value(v, properties[k]) if k in properties else v
        for k, v in args.items()
        if not (v is None and k in properties and k not in required and not _allows_null(properties[k]))
    }


def _allows_null(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def expected_shape(definition: dict[str, Any]) -> str:
    """`edit(path, oldText, newText, replace_all?)` with `{"path": "<string>", ...}`."""
    params = definition["function"].get("parameters") or {}
    example = {
        name: f"<{prop.get('type', 'value')}>" for name, prop in (params.get("properties") or {}).items()
    }
    return f"{signature(definition)}, arguments like {json.dumps(example)}"


def _describe_error(error: Any) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    where = f"'{path}': " if path else ""
    if error.validator == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown argument(s)")
    if error.validator == "type":
        return f"{where}expected {error.validator_value}, got {json.dumps(error.instance)[:80]}"
    return where + error.message


_VALIDATORS: dict[str, Any] = {}  # schema JSON -> compiled validator (built once, not per call)


def _validator(schema: dict[str, Any], jsonschema: Any) -> Any:
    key = json.dumps(schema, sort_keys=True)
    validator = _VALIDATORS.get(key)
    if validator is None:
        validator = _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    return validator


def normalize_arguments(definition: dict[str, Any], args: Any) -> dict[str, Any]:
    """Return arguments that satisfy the tool's schema, or raise ArgumentError for the model."""
    import jsonschema  # deferred: not needed for --help / start-up

    if not isinstance(args, dict):
        raise ArgumentError(
            f"arguments must be a JSON object, got {type(args).__name__}. "
            f"Expected {expected_shape(definition)}"
        )
    schema = definition["function"].get("parameters") or {"type": "object"}
    fixed = coerce_arguments(schema, map_argument_names(schema, args))
    validator = _validator(schema, jsonschema)
    errors = sorted(validator.iter_errors(fixed), key=lambda e: (len(e.absolute_path), str(e.message)))
    if errors:
        problems = "; ".join(_describe_error(e) for e in errors[:3])
        raise ArgumentError(
            f"invalid arguments for {definition['function']['name']}: {problems}. "
            f"Expected {expected_shape(definition)}"
        )
    return fixed
