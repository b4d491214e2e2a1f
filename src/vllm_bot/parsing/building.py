"""Turn what a format parser recovered (a name and raw arguments) into a validated ToolCall.

Names are cleaned (`functions.read`, `read<|channel|>commentary`, `Read`) and matched to the tool
definitions; arguments are decoded when given as a JSON string, mapped and coerced through the
schema by `validation.normalize_arguments`: a call that can run is a CheckedCall, checked here once.
A call that cannot be used carries `metadata["error"]`, a CallProblem: a message for the model that
quotes the problem and shows the TOOL_CALL format.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..calls import CallProblem, CheckedCall, ProblemKind, ToolCall, new_call_id
from ..tools.definitions import find_definition, tool_names
from ..tools.validation import ArgumentError, example_arguments, map_argument_names, normalize_arguments
from .jsonscan import loads_lenient

NAME_KEYS = ("name", "tool_name", "function_name", "tool", "function", "recipient_name", "action")
ARG_KEYS = ("args", "arguments", "parameters", "input", "params", "action_input")
_IGNORED_KEYS = frozenset({"id", "type", "call_id", "index", "tool_call_id"})
# Names a format explanation uses where a real call has a tool: `<function-name>`, `...`, `NAME`.
_PLACEHOLDER = re.compile(
    r"(?:.*[<>{}]|.*(?:\.\.\.|…)|[A-Z][A-Z_\-]*|(?:your|my|some|the)[_\- ]\w+|"
    r"(?:function|tool)[_\- ]?name|name|function|tool|none|null|n/?a)\Z",
    re.S,
)
# Words that say "no call" right after a `TOOL_CALL:` marker.
NO_CALL = re.compile(r"\(?(?:none|no\b|not\b|nothing|n/a|null|-+|—)", re.I)
_PREFIX = re.compile(r"^(?:functions|function|tools|tool|default_api)[.:]")
_JUNK = re.compile(r"<\|.*$|[\s`'\"]+", re.S)
SNIPPET = 240


def clean_name(raw: str) -> str:
    """`functions.read:0` / `read<|channel|>commentary` / ` "read" ` / `read.read` -> `read`."""
    name = _JUNK.sub("", raw)
    name = re.sub(r":\d+$", "", _PREFIX.sub("", name))
    head, dot, tail = name.partition(".")
    return head if dot and head == tail else name  # MuseGlimmer's `read.read` names `read`


def placeholder(raw_name: str) -> bool:
    """A name that stands for "some tool" in an explanation, never a tool: `<function-name>`."""
    name = clean_name(raw_name) if "<|" in raw_name else raw_name.strip().strip("\"'`")
    return bool(name) and _PLACEHOLDER.match(name) is not None


def is_schema(args: Any) -> bool:
    """Arguments that are a JSON schema (`{"type": "object", "properties": {…}}`): the object is a
    tool's declaration, not a call of it."""
    return (
        isinstance(args, dict)
        and isinstance(args.get("properties"), dict)
        and (args.get("type") == "object" or isinstance(args.get("required"), list))
    )


def snippet(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SNIPPET else text[: SNIPPET - 20] + " … " + text[-17:]


def jsonable(value: Any) -> Any:
    """Arguments must survive json.dumps (the server re-parses them): tuples become lists, and
    anything else that JSON cannot carry raises ValueError."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise ValueError("a number that JSON cannot carry")
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    raise ValueError(f"a {type(value).__name__} value, which JSON cannot carry")


class Builder:
    """Per-parse context: the tool definitions and how to turn recovered parts into calls."""

    def __init__(self, definitions: list[dict[str, Any]]) -> None:
        self.definitions = definitions
        self.names = tool_names(definitions)
        # a loose spelling means a tool only when it means one (`Read` for `read`; not `a_b` for
        # both `a-b` and `a_b`)
        folded: dict[str, str | None] = {}
        for n in self.names:
            fold = n.lower().replace("-", "_")
            folded[fold] = None if fold in folded else n
        self._folded = {fold: n for fold, n in folded.items() if n is not None}
        self._examples: dict[str, str] = {}

    def known(self, raw_name: str) -> str | None:
        """The defined tool this name means, or None."""
        name = clean_name(raw_name)
        if name in self.names:
            return name
        return self._folded.get(name.lower().replace("-", "_"))

    def resolve(self, raw_name: str) -> str | None:
        """`known`, or for a call in an explicit format a namespaced `foo.read` whose last
        segment names exactly one offered tool (vLLM's MuseGlimmer parser maps it so). Not
        `known` itself: that also decides what counts as a call in bare text, where
        `os.read(path="a")` on a line is Python, not a call of `read`."""
        name = self.known(raw_name)
        if name is not None:
            return name
        head, dot, tail = clean_name(raw_name).rpartition(".")
        return self.known(tail) if dot and head and tail else None

    def schema(self, name: str) -> dict[str, Any]:
        definition = find_definition(self.definitions, name)
        return (definition or {}).get("function", {}).get("parameters") or {}

    def example(self, name: str | None) -> str:
        """`TOOL_CALL: {"name": "edit", "args": {...}}` for the tool the model meant (or the first)."""
        tool = name if name in self.names else (self.names[0] if self.names else "read")
        if tool not in self._examples:
            schema = self.schema(tool)
            required = schema.get("required") or list(schema.get("properties") or {})[:1]
            args = example_arguments(schema, list(required))
            self._examples[tool] = (
                f'TOOL_CALL: {{"name": {json.dumps(tool, ensure_ascii=False)}, "args": {args}}}'
            )
        return self._examples[tool]

    def error(
        self, source: str, problem: str, raw: str, name: str | None = None, kind: ProblemKind = "unreadable"
    ) -> ToolCall:
        """A call that was clearly intended but cannot be used; never executed. The loop's answer
        begins "could not use this tool call:", so the message begins with the problem."""
        message = (
            f"{problem}.\n"
            f"You wrote: {snippet(raw)}\n"
            f"Write each call on its own line in this format, with the arguments as one valid JSON "
            f'object (escape quotes as \\" and newlines as \\n):\n{self.example(name)}'
        )
        tool = self.resolve(name) if name else None
        return _problem_call(tool or clean_name(name or ""), {}, source, CallProblem(message, kind))

    def too_many(self, rest: str, limit: int) -> ToolCall:
        """The error call standing for the calls of a reply past the first `limit`."""
        message = (
            f"This reply has more than {limit} tool calls: the first {limit} were read and the rest "
            f"were not read or run. Make fewer calls per reply and wait for their results.\n"
            f"The calls not read begin: {snippet(rest)}"
        )
        return _problem_call("", {}, "too_many_calls", CallProblem(message, "too_many"))

    def call(
        self,
        raw_name: str,
        args: Any,
        source: str,
        raw: str,
        positional: tuple[Any, ...] = (),
    ) -> ToolCall:
        """A call from an explicit format: unknown names and bad arguments become error calls.
        A placeholder name or schema arguments give a call marked as not a call (see `Found`)."""
        name = self.resolve(raw_name) or self._only_tool(raw_name)
        if (name is None and placeholder(raw_name)) or (is_schema(args) and not self._takes_schema(name)):
            return self.not_a_call(source)
        if name is None:
            shown = clean_name(raw_name) or raw_name.strip()
            listed = ", ".join(self.names)
            return self.error(
                source, f"unknown tool {shown!r} (available: {listed})", raw, shown, "unknown_tool"
            )
        try:
            args = self._arguments(name, args, positional)
            normalized = normalize_arguments(find_definition(self.definitions, name) or {}, args)
        except ArgumentError as exc:
            return self._invalid(name, args, source, str(exc))
        except ValueError as exc:
            return self.error(source, f"the arguments of {name} could not be read ({exc})", raw, name)
        return CheckedCall(new_call_id(), name, normalized, {"source": source})

    def not_a_call(self, source: str) -> ToolCall:
        """What an explanation of a format yields: dropped by the walker, never shown or run."""
        return _problem_call("", {}, source, CallProblem("not a call", "not_a_call"))

    def _only_tool(self, raw_name: str) -> str | None:
        """Kimi's bare counter (`0`) or an empty name when exactly one tool is offered."""
        if len(self.names) == 1 and re.fullmatch(r"\s*(?:functions\.)?\d*\s*", raw_name):
            return self.names[0]
        return None

    def _takes_schema(self, name: str | None) -> bool:
        return name is not None and "properties" in (self.schema(name).get("properties") or {})

    def _invalid(self, name: str, args: Any, source: str, message: str) -> ToolCall:
        try:
            kept = jsonable(args) if isinstance(args, dict) else {}
        except ValueError:
            kept = {}
        return _problem_call(name, kept, source, CallProblem(message, "arguments"))

    def _arguments(self, name: str, args: Any, positional: tuple[Any, ...]) -> Any:
        if args is None:
            args = {}
        if isinstance(args, str):
            args = self._string_arguments(name, args)
        if positional:
            if not isinstance(args, dict):
                raise ValueError("mixed positional and non-keyword arguments")
            params = list(self.schema(name).get("properties") or {})
            if len(positional) > len(params):
                raise ValueError(f"{len(positional)} positional arguments, {name} takes {len(params)}")
            args = {**dict(zip(params, positional, strict=False)), **args}
        return jsonable(args) if isinstance(args, dict) else args

    def _string_arguments(self, name: str, args: str) -> Any:
        """JSON text, or (LangChain's `"action_input": "ls -la"`) the value of the tool's one
        required string parameter."""
        if not args.strip():
            return {}
        try:
            return loads_lenient(args)
        except ValueError:
            schema = self.schema(name)
            required = schema.get("required") or []
            prop = (schema.get("properties") or {}).get(required[0]) if len(required) == 1 else None
            if prop is None or prop.get("type") != "string" or args.lstrip().startswith(("{", "[")):
                raise
            return {required[0]: args}

    def typed(self, raw_name: str, values: dict[str, str], source: str, raw: str) -> ToolCall:
        """A call from an XML/key-value format: raw string values typed by the tool's schema."""
        name = self.resolve(raw_name)
        if name is not None:
            props = self.schema(name).get("properties") or {}
            mapped = map_argument_names(self.schema(name), values)
            values = {k: _typed_value(v, props.get(k)) for k, v in mapped.items()}
        return self.call(raw_name, values, source, raw)

    def from_object(self, obj: Any, source: str, raw: str, explicit: bool = True) -> ToolCall | None:
        """A call from a decoded JSON object (`{"name":…, "arguments":…}` and its variants).
        In an ambiguous (bare) format, returns None unless it names a known tool with arguments."""
        parts = call_parts(obj)
        if parts is None:
            if not explicit:
                return None
            return self.error(source, 'expected an object with "name" and "args"', raw)
        name, args, has_args = parts
        if not explicit and (self.known(name) is None or not has_args):
            return None
        return self.call(name, args, source, raw)


def _problem_call(name: str, arguments: dict[str, Any], source: str, problem: CallProblem) -> ToolCall:
    return ToolCall(new_call_id(), name, arguments, {"source": source, "error": problem})


def call_parts(obj: Any) -> tuple[str, Any, bool] | None:
    """(name, arguments, whether an arguments key was present) from a call object, or None."""
    if not isinstance(obj, dict):
        return None
    inner = obj.get("function")
    if isinstance(inner, dict) and isinstance(inner.get("name"), str):
        return call_parts(inner)  # OpenAI shape {"type": "function", "function": {...}}
    name_key = next((k for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name_key is None:
        return None
    for key in ARG_KEYS:
        if key in obj:
            return obj[name_key], obj[key], True
    rest = {k: v for k, v in obj.items() if k != name_key and k not in _IGNORED_KEYS}
    return obj[name_key], rest, False


def _typed_value(value: str, prop: dict[str, Any] | None) -> Any:
    """XML values are raw text; non-string schema types are decoded from JSON when they parse
    (`validation` coerces the remaining simple cases such as "120" -> 120)."""
    kind = (prop or {}).get("type")
    if kind in (None, "string") or not isinstance(value, str):
        return value
    text = value.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text
