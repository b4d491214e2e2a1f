"""Compact shapes of a tool's JSON schema, for the text-mode prompt and the hints in argument errors.

`create_entities(entities: [{name: string, entityType: string, observations: [string]}])` tells a
model without native tool calls the types, enums, object keys and array items it must send. Every
signature is sent with every text-mode request, so one that would pass its character budget is
drawn shallower (nested shapes become `object` / `array`) until it fits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

SIGNATURE_BUDGET = 360  # characters of one tool's signature (about 90 tokens)
EXAMPLE_BUDGET = 400  # characters of the example arguments in an error hint
MAX_DEPTH = 4  # nesting levels drawn at most (below them: object / array)
MAX_ENUM = 8  # enum values shown before "…"
MAX_KEYS = 12  # object keys shown before "…"
SCALARS = ("string", "integer", "number", "boolean", "null")
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][\w$-]*$")

Leaf = Callable[[str], str]  # a scalar type name -> how it is drawn


def typed_signature(definition: dict[str, Any], budget: int = SIGNATURE_BUDGET) -> str:
    """`read(path: string, offset?: integer)`, as deep as fits in `budget` characters."""
    fn = definition["function"]
    params = fn.get("parameters") or {}
    for depth in range(MAX_DEPTH, -1, -1):
        text = f"{fn['name']}({_fields(params, params, depth, _bare)})"
        if len(text) <= budget:
            return text
    return f"{fn['name']}({_fields(params, params, -1, _bare)})"


def example_arguments(schema: dict[str, Any], names: list[str] | None = None) -> str:
    """`{"path": "<string>", "entities": [{"name": "<string>"}]}`: a readable example, not JSON."""
    properties = schema.get("properties") or {}
    shown = list(properties) if names is None else names
    for depth in range(MAX_DEPTH, -1, -1):
        parts = [f"{json.dumps(n)}: {_draw(properties.get(n), schema, depth, _placeholder)}" for n in shown]
        text = "{" + ", ".join(parts) + "}"
        if len(text) <= EXAMPLE_BUDGET or depth == 0:
            return text
    return "{}"  # unreachable: depth 0 always returns


def shape(schema: Any, root: dict[str, Any] | None = None, depth: int = MAX_DEPTH) -> str:
    """The shape of one schema: `string`, `"a"|"b"`, `[{id: integer}]`, `object`."""
    return _draw(schema, root if root is not None else schema, depth, _bare)


def _bare(kind: str) -> str:
    return kind


def _placeholder(kind: str) -> str:
    return json.dumps(f"<{kind}>") if kind == "string" else f"<{kind}>"


def _fields(schema: dict[str, Any], root: dict[str, Any], depth: int, leaf: Leaf, limit: int = 0) -> str:
    """`name: T, other?: T` for an object schema's properties (the first `limit`, when given);
    depth -1 gives the names alone."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name in list(properties)[: limit or None]:
        if leaf is _placeholder:  # an example: JSON keys, optional ones unmarked
            key = json.dumps(name)
        else:
            key = (name if _PLAIN_KEY.match(name) else json.dumps(name)) + ("" if name in required else "?")
        parts.append(key if depth < 0 else f"{key}: {_draw(properties[name], root, depth, leaf)}")
    if len(parts) < len(properties):
        parts.append("…")
    return ", ".join(parts)


def _draw(schema: Any, root: dict[str, Any], depth: int, leaf: Leaf) -> str:
    if not isinstance(schema, dict):
        return leaf("any") if schema is not False else "never"
    schema = _resolve(schema, root)
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        values = [json.dumps(v, ensure_ascii=False) for v in schema["enum"][:MAX_ENUM]]
        return "|".join(values + (["…"] if len(schema["enum"]) > MAX_ENUM else []))
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _union([_draw(s, root, depth, leaf) for s in schema[key]])
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        return _draw(_merge(schema, root), root, depth, leaf)
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_draw({**schema, "type": k}, root, depth, leaf) for k in kind])
    if kind == "array" or (kind is None and ("items" in schema or "prefixItems" in schema)):
        return _array(schema, root, depth, leaf)
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, depth, leaf)
    return leaf(kind if kind in SCALARS else "any")


def _array(schema: dict[str, Any], root: dict[str, Any], depth: int, leaf: Leaf) -> str:
    if depth <= 0:
        return leaf("array")
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and prefix:
        return "[" + ", ".join(_draw(s, root, depth - 1, leaf) for s in prefix) + "]"
    items = schema.get("items")
    return "[" + (_draw(items, root, depth - 1, leaf) if isinstance(items, dict) else leaf("any")) + "]"


def _object(schema: dict[str, Any], root: dict[str, Any], depth: int, leaf: Leaf) -> str:
    if depth <= 0:
        return leaf("object")
    if schema.get("properties"):
        return "{" + _fields(schema, root, depth - 1, leaf, MAX_KEYS) + "}"
    values = schema.get("additionalProperties")
    if isinstance(values, dict) and values:
        return "{" + f"{leaf('string')}: {_draw(values, root, depth - 1, leaf)}" + "}"
    return leaf("object")


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    return "|".join(unique)


def _merge(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """allOf folded into one object schema: the properties and required keys of every part."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        part = _resolve(part, root) if isinstance(part, dict) else {}
        merged.setdefault("type", part.get("type"))
        merged["properties"] = {**(merged.get("properties") or {}), **(part.get("properties") or {})}
        merged["required"] = [*(merged.get("required") or []), *(part.get("required") or [])]
    return merged


def _resolve(schema: dict[str, Any], root: dict[str, Any], hops: int = 8) -> dict[str, Any]:
    """Follow a local `$ref` (`#/$defs/Item`); anything it cannot follow stays as it is."""
    while hops and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        node: Any = root
        for token in schema["$ref"][2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            node = node.get(token) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return schema
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        hops -= 1
    return schema
