"""MCP tool listings -> OpenAI tool definitions (function.name / description / parameters).

Every definition is sent with every request, so descriptions are trimmed and schema annotations the
model does not need (`title`, `$comment`, `$schema`) are dropped. A tool that cannot be sent — no
name, no inputSchema or a non-object one, a schema that is not JSON or not valid JSON Schema, a
`$ref` that does not resolve inside the schema, anything else the MCP SDK cannot read — or cannot be
called — one that requires task-augmented calls, a second tool with the name of one listed before
it — is skipped with the reason for the user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from .names import NameTable, sanitize
from .screen import Rejected

DESCRIPTION_LIMIT = 400  # characters of a tool's description
PROPERTY_DESCRIPTION_LIMIT = 160  # characters of one parameter's description
DROPPED_KEYWORDS = ("title", "$comment", "$schema")

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUES = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


class ToolSkipped(ValueError):
    """An MCP tool that cannot be offered to the model; the message says why (for the user)."""


@dataclass
class McpTool:
    """One MCP tool as the session knows it."""

    server: str
    name: str  # the server's name for it
    public: str  # the name the model sees and calls
    definition: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)  # readOnlyHint, destructiveHint, ...


def convert_listing(
    server: str, listing: list[dict[str, Any]], names: NameTable, rejected: list[Rejected] | None = None
) -> tuple[list[McpTool], list[str]]:
    """(tools in listing order, reasons for the skipped ones: `rejected`, which the SDK could not
    read, then the others). Names that are already valid claim their plain public name first, so
    `get_issue` keeps it even when `get.issue` is listed before.

    A name listed twice keeps its first tool: a call only names the tool, so the server decides what
    runs, and the model is shown the one the server lists first."""
    skipped = [_rejection(r) for r in rejected or []]
    seen: set[str] = set()
    twins: set[int] = set()
    for i, tool in enumerate(listing):
        name = tool.get("name")
        if isinstance(name, str) and name in seen:
            twins.add(i)
        elif isinstance(name, str):
            seen.add(name)
    order = sorted(range(len(listing)), key=lambda i: not is_clean(listing[i].get("name")))
    converted: dict[int, McpTool] = {}
    for i in order:
        if i in twins:
            twice = "a second tool with this name (the server lists it twice; kept the first)"
            skipped.append(f"{listing[i]['name']}: {twice}")
            continue
        try:
            converted[i] = convert_tool(server, listing[i], names)
        except ToolSkipped as e:
            skipped.append(str(e))
    return [converted[i] for i in sorted(converted)], skipped


def _rejection(rejected: Rejected) -> str:
    """Why a tool the SDK could not read is skipped: in our words when we have them."""
    try:
        check_tool(rejected.tool)
    except ToolSkipped as e:
        return str(e)
    name = rejected.tool.get("name")
    return f"{name}: the MCP SDK cannot read it ({rejected.problem})"


def is_clean(name: Any) -> bool:
    return isinstance(name, str) and sanitize(name) == name


def convert_tool(server: str, tool: Mapping[str, Any], names: NameTable) -> McpTool:
    """The definition for one tool of `server` (`tool` in MCP wire form: name, inputSchema, ...)."""
    name, parameters = check_tool(tool)
    public = names.assign(server, name)
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), Mapping) else {}
    title = tool.get("title") or (annotations or {}).get("title")
    description = trim(str(tool.get("description") or title or name), DESCRIPTION_LIMIT)
    definition = {
        "type": "function",
        "function": {"name": public, "description": description, "parameters": compact(parameters)},
    }
    return McpTool(server, name, public, definition, dict(annotations or {}))


def check_tool(tool: Any) -> tuple[str, dict[str, Any]]:
    """(its name, its parameters) if the tool can be offered; raises ToolSkipped otherwise."""
    if not isinstance(tool, Mapping):
        raise ToolSkipped(f"a tool that is not an object ({trim(json.dumps(tool, default=str), 60)})")
    name = tool.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolSkipped(f"a tool without a name ({_summary(tool)})")
    execution = tool.get("execution")
    if isinstance(execution, Mapping) and execution.get("taskSupport") == "required":
        raise ToolSkipped(
            f'{name}: it can only run as a task (execution.taskSupport "required"), which vllm-bot '
            "does not support"
        )
    return name, checked_schema(name, tool.get("inputSchema"))


def checked_schema(name: str, schema: Any) -> dict[str, Any]:
    """`schema` if it can be sent as `parameters`; raises ToolSkipped otherwise."""
    if schema is None:
        raise ToolSkipped(f"{name}: it has no inputSchema (MCP requires one, even when empty)")
    if not isinstance(schema, Mapping):
        raise ToolSkipped(f"{name}: its inputSchema is not an object schema")
    kind = schema.get("type", "object")
    if kind != "object":
        raise ToolSkipped(f'{name}: its inputSchema has type {json.dumps(kind)}, not "object"')
    try:
        data = json.loads(json.dumps(schema, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise ToolSkipped(f"{name}: its inputSchema is not JSON ({e})") from None
    data["type"] = "object"
    for ref in find_refs(data):
        if not resolves(data, ref):
            raise ToolSkipped(f"{name}: its inputSchema refers to {ref!r}, which it does not contain")
    import jsonschema  # deferred: only sessions with MCP servers need it here

    try:
        jsonschema.Draft202012Validator.check_schema(data)
    except jsonschema.SchemaError as e:
        raise ToolSkipped(f"{name}: its inputSchema is not valid JSON Schema ({e.message})") from None
    return data


def find_refs(node: Any) -> list[str]:
    """Every `$ref` string anywhere in `node`."""
    refs: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                refs.append(value)
            else:
                refs.extend(find_refs(value))
    elif isinstance(node, list):
        for item in node:
            refs.extend(find_refs(item))
    return refs


def resolves(root: dict[str, Any], ref: str) -> bool:
    """Whether `ref` points inside `root` (a JSON pointer or an `$anchor`); external refs do not."""
    if not ref.startswith("#"):
        return False
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        return fragment in _anchors(root)
    node: Any = root
    for token in fragment.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def _anchors(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("$anchor"), str):
            found.add(node["$anchor"])
        for value in node.values():
            found |= _anchors(value)
    elif isinstance(node, list):
        for item in node:
            found |= _anchors(item)
    return found


def compact(schema: Any) -> Any:
    """A copy of `schema` without annotation keywords and with short descriptions.

    Only keyword positions are touched: a parameter that is itself named "title" stays.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DROPPED_KEYWORDS:
            continue
        if key == "description" and isinstance(value, str):
            out[key] = trim(value, PROPERTY_DESCRIPTION_LIMIT)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES or key in _SCHEMA_LISTS:
            out[key] = [compact(sub) for sub in value] if isinstance(value, list) else compact(value)
        else:
            out[key] = value
    return out


def trim(text: str, limit: int) -> str:
    """Whitespace collapsed; cut at a sentence or word end with "…" when longer than `limit`."""
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    sentence = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if sentence >= limit // 2:
        return cut[: sentence + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit // 2 else cut).rstrip(" ,;:") + "…"


def _summary(tool: Mapping[str, Any]) -> str:
    description = tool.get("description")
    if isinstance(description, str) and description.strip():
        return "description: " + trim(description, 60)
    return "no description either"
