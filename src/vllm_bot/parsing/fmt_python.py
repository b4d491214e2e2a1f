"""Formats written as function-call syntax: pythonic lists (Llama 3.2/4, ToolACE, olmo3, lfm2),
`TOOL_CALL: read(path="a.py")`, and the Gemma family's `call:name{key:<escape>value<escape>}`.

Python text is read with `ast.parse` and only literal values are taken (`ast.literal_eval` on each
argument); nothing is ever evaluated.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..calls import ToolCall
from .core import Found, Scan
from .jsonscan import scan_value

_NAME = re.compile(r"[A-Za-z_][\w.]*")
_PY_HEAD = re.compile(r"\s*\[?\s*([A-Za-z_][\w.]*)\s*\(")
_JSON_NAMES = {"true": True, "false": False, "null": None}
PARSE_LIMIT = 2_000_000

RawCall = tuple[str, dict[str, Any], tuple[Any, ...]]


class _JsonLiterals(ast.NodeTransformer):
    """olmo3 and others write JSON's true/false/null inside Python calls."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _JSON_NAMES:
            return ast.copy_location(ast.Constant(_JSON_NAMES[node.id]), node)
        return node


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(_JsonLiterals().visit(node))
    except ValueError:
        raise ValueError(f"{ast.unparse(node)[:80]} is not a literal value") from None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    raise ValueError("not a function name")


def parse_pythonic(source: str) -> list[RawCall]:
    """Calls from `[a(x=1), b(y="z")]`, `a(x=1)` or one call per line; ValueError otherwise."""
    if len(source) > PARSE_LIMIT:
        raise ValueError("too large")
    try:
        tree = ast.parse(source.strip(), mode="exec")
        calls: list[RawCall] = []
        for statement in tree.body:
            if not isinstance(statement, ast.Expr):
                raise ValueError("not a call")
            node = statement.value
            for item in node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]:
                if not isinstance(item, ast.Call) or any(k.arg is None for k in item.keywords):
                    raise ValueError("not a call")
                kwargs = {k.arg: _literal(k.value) for k in item.keywords if k.arg}
                calls.append((_dotted(item.func), kwargs, tuple(_literal(a) for a in item.args)))
    except (SyntaxError, TypeError, RecursionError, MemoryError) as exc:
        raise ValueError(str(exc)) from exc
    if not calls:
        raise ValueError("no calls")
    return calls


_ITEM_HEAD = re.compile(r"[\s,]*([A-Za-z_][\w.]*)\s*\(")
_LIST_END = re.compile(r"[\s,]*\]?\s*\Z")

# A call read from a pythonic list, or (name, problem) for one whose text could not be read.
Item = tuple[str, dict[str, Any], tuple[Any, ...]] | tuple[str, str]


def pythonic_items(source: str) -> list[Item]:
    """Like `parse_pythonic`, but one unreadable call (a bytes literal, a broken quote) does not
    lose its siblings: each `name(…)` of the list is read on its own and a bad one comes back as
    (name, problem). ValueError when the text is not a list of calls at all."""
    try:
        return list(parse_pythonic(source))
    except ValueError as exc:
        whole = exc
    text = source.strip()
    i = 1 if text.startswith("[") else 0
    items: list[Item] = []
    broken = 0
    while _LIST_END.match(text, i) is None:
        head = _ITEM_HEAD.match(text, i)
        if head is None:
            raise whole
        scanned = scan_value(text, head.end(1))
        broken += not scanned.closed
        end = scanned.end if scanned.closed else _item_end(text, head.end())
        if end is None or broken > _MAX_BROKEN:
            raise whole
        try:
            items.extend(parse_pythonic(text[head.start(1) : end]))
        except ValueError as exc:
            items.append((head.group(1), str(exc)))
        i = end
    if not items:
        raise whole
    return items


# The `)` that ends a call whose brackets or quotes do not balance: the one before the next
# `, name(` of the list, or before the list's end.
_ITEM_TAIL = re.compile(r"\)(?=[\s,]*[A-Za-z_][\w.]*\s*\(|\s*(?:\]\s*)?\Z)")
# Members whose brackets do not balance, per list: finding each one's end rescans the rest of the
# list, so a runaway list of them is one error instead of quadratic work.
_MAX_BROKEN = 16


def _item_end(text: str, at: int) -> int | None:
    """Where a broken call (`f(a='x 'y')`) ends, so the calls after it are still read."""
    tail = _ITEM_TAIL.search(text, at)
    return tail.end() if tail else None


def item_calls(scan: Scan, items: list[Item], source: str, raw: str) -> list[ToolCall]:
    out = []
    for item in items:
        if len(item) == 2:
            name, problem = item
            out.append(scan.builder.error(source, f"the call could not be read ({problem})", raw, name))
        else:
            name, kwargs, positional = item
            out.append(scan.builder.call(name, kwargs, source, raw, positional))
    return out


def pythonic_span(scan: Scan, start: int, at: int, source: str) -> Found | None:
    """One `name(…)` call at `at` (after a marker that began at `start`)."""
    name = _NAME.match(scan.text, at, scan.end)
    if name is None or not scan.text.startswith("(", name.end()):
        return None
    scanned = scan.scan_json(name.end())
    if not scanned.closed:
        return scan.pending(start) if scan.partial and scanned.end >= scan.end else None
    raw = scan.text[at : scanned.end]
    try:
        (call_name, kwargs, positional), *_ = parse_pythonic(raw)
    except ValueError as exc:
        return scan.error_span(
            start, scanned.end, source, f"the call could not be read ({exc})", name.group()
        )
    call = scan.builder.call(call_name, kwargs, source, raw, positional)
    return scan.span(start, scanned.end, source, [call])


def line_call(scan: Scan, pos: int) -> Found | None:
    """Granite 3.3/4.0 (vLLM's `granite_pythonic`): a line that is one `tool(k=v, …)` call of a
    known tool, and nothing else; several such lines are several calls."""
    at = scan.skip_space(pos)
    name = _NAME.match(scan.text, at, scan.end)
    if name is None or scan.builder.known(name.group()) is None:
        return None
    found = pythonic_span(scan, pos, at, "granite_pythonic")
    if found is None or found.pending:
        return found
    if any(c.metadata.get("error") for c in found.calls):
        return None  # `read(the file)` in a plan: not a call in an ambiguous spot
    rest = scan.text[found.end : scan.line_end(found.end)]
    if rest.strip():
        return None  # `read(path="a") returns the text`: talk about a call
    if scan.partial and scan.line_end(found.end) >= scan.end:
        return scan.pending(pos)  # the line may still go on
    return found


def whole_message(scan: Scan, pos: int) -> Found | None:
    """A reply that is nothing but a pythonic call list naming known tools (vLLM's `pythonic`)."""
    head = _PY_HEAD.match(scan.text, pos, scan.end)
    if head is None:
        rest = scan.text[pos : scan.end].strip()
        if scan.partial and len(rest) < 24 and _could_become(scan, rest):
            return scan.pending(pos)
        return None
    listed = head.group().lstrip().startswith("[")
    unknown = scan.builder.known(head.group(1)) is None
    if unknown and (not listed or (scan.partial and not _may_be_list(scan, head.start(1)))):
        return None  # an unknown first name may still open a list whose other members are known
    if scan.partial:
        return scan.pending(pos)
    body = scan.text[pos : scan.end]
    if not body.rstrip().endswith((")", "]")):
        return None
    try:
        items = pythonic_items(body)
    except ValueError:
        return None
    known = [scan.builder.known(item[0]) is not None for item in items]
    if not all(known) and not (listed and any(known)):
        return None  # a list naming some offered tool is a call list; its other names are errors
    return scan.span(pos, scan.end, "pythonic", item_calls(scan, items, "pythonic", body))


def _may_be_list(scan: Scan, at: int) -> bool:
    """While streaming: the text from `at` may still become a list of calls. `[TODO(x)] fix it`
    cannot, so the lines after it stream instead of being held until the reply ends."""
    text = scan.text
    while (head := _ITEM_HEAD.match(text, at, scan.end)) is not None:
        scanned = scan.scan_json(head.end(1))
        if not scanned.closed:
            return scanned.end >= scan.end  # still being written, or a bracket that does not match
        at = _SEPARATOR.match(text, scanned.end, scan.end).end()  # type: ignore[union-attr]
        if text.startswith("]", at):
            return scan.only_space_after(at + 1)
    return _NAME_SO_FAR.fullmatch(text, at, scan.end) is not None  # `, rea` of `, read(`


_SEPARATOR = re.compile(r"[\s,]*")
_NAME_SO_FAR = re.compile(r"[\s,]*(?:[A-Za-z_][\w.]*\s*)?")


def _could_become(scan: Scan, rest: str) -> bool:
    name = rest.lstrip("[").lstrip()
    heads = (*scan.builder.names, *("functions." + n for n in scan.builder.names))
    return rest == "[" or (bool(name) and any(h.startswith(name) for h in heads))


_PY_LIST = re.compile(r"\[?\s*[A-Za-z_][\w.\-]*\s*\(")


def looks_pythonic(text: str, at: int) -> bool:
    """`[read(…` rather than `[{"name"…`: a pythonic call list starts at `at`."""
    return _PY_LIST.match(text, at) is not None


def tagged_pythonic(marker: str, close: str, source: str):
    """`<|tool_call_start|>[a(x=1)]<|tool_call_end|>` (lfm2), `<|python_start|>…` (llama4),
    `<function_calls>a(x=1)\\nb()</function_calls>` (olmo3)."""

    def handler(scan: Scan, pos: int) -> Found | None:
        if not scan.text.startswith(marker, pos):
            return None
        body = pos + len(marker)
        at = scan.find(close, body)
        if at < 0 and scan.partial:
            return scan.pending(pos)
        end = scan.end if at < 0 else at + len(close)
        inner = scan.text[body : scan.end if at < 0 else at]
        try:
            items = pythonic_items(inner)
        except ValueError as exc:
            return scan.error_span(pos, end, source, f"the call list could not be read ({exc})")
        return scan.span(pos, end, source, item_calls(scan, items, source, inner))

    return handler


# -- Gemma: call:name{key:<escape>text<escape>,n:42,flag:true,nested:{…},list:[…]} -----------

_GEMMA_FORMS = {  # marker -> (closing marker, string delimiter, source)
    "<start_function_call>": ("<end_function_call>", "<escape>", "functiongemma"),
    "<|tool_call>": ("<tool_call|>", '<|"|>', "gemma4"),
}
_BARE_TOKEN = re.compile(r"[^,}\]]*")
_MAX_DEPTH = 32


def gemma(scan: Scan, pos: int) -> Found | None:
    marker = next((m for m in _GEMMA_FORMS if scan.text.startswith(m, pos)), None)
    if marker is None:
        return None
    close, quote, source = _GEMMA_FORMS[marker]
    at = scan.find(close, pos)
    if at < 0 and scan.partial:
        return scan.pending(pos)
    end = scan.end if at < 0 else at + len(close)
    body = scan.text[pos + len(marker) : scan.end if at < 0 else at].strip()
    head = re.match(r"(?:call:)?\s*([A-Za-z_][\w.\-]*)\s*", body)
    if head is None:
        return scan.error_span(pos, end, source, "expected call:NAME{…}")
    try:
        args, _ = _gemma_value(body, head.end(), quote, 0) if body[head.end() :] else ({}, 0)
    except (ValueError, IndexError) as exc:
        return scan.error_span(pos, end, source, f"the arguments could not be read ({exc})", head.group(1))
    call = scan.builder.call(head.group(1), args, source, scan.text[pos:end])
    return scan.span(pos, end, source, [call])


def _gemma_value(text: str, i: int, quote: str, depth: int) -> tuple[Any, int]:
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    while text[i : i + 1].isspace():
        i += 1
    if text.startswith(quote, i):
        close = text.find(quote, i + len(quote))
        if close < 0:
            raise ValueError("unterminated string")
        return text[i + len(quote) : close], close + len(quote)
    if text.startswith("{", i) or text.startswith("[", i):
        return _gemma_container(text, i, quote, depth)
    token = _BARE_TOKEN.match(text, i)
    assert token is not None
    word = token.group().strip()
    return _gemma_scalar(word), token.end()


def _gemma_container(text: str, i: int, quote: str, depth: int) -> tuple[Any, int]:
    is_object = text[i] == "{"
    out_obj: dict[str, Any] = {}
    out_list: list[Any] = []
    i += 1
    closer = "}" if is_object else "]"
    while True:
        while text[i : i + 1] in (" ", "\n", "\t", ","):
            i += 1
        if text.startswith(closer, i):
            return (out_obj if is_object else out_list), i + 1
        if i >= len(text):
            raise ValueError(f"missing {closer!r}")
        before = i
        if is_object:
            colon = text.find(":", i)
            if colon < 0:
                raise ValueError("expected key:value")
            key = text[i:colon].strip().strip("\"'")
            out_obj[key], i = _gemma_value(text, colon + 1, quote, depth + 1)
        else:
            value, i = _gemma_value(text, i, quote, depth + 1)
            out_list.append(value)
        if i <= before:
            raise ValueError(f"unexpected {text[i]!r}")


def _gemma_scalar(word: str) -> Any:
    if word in _JSON_NAMES:
        return _JSON_NAMES[word]
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            continue
    return word
