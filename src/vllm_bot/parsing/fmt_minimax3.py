"""MiniMax-M3: every tag is preceded by the namespace token `]<]minimax[>[`, parameters are XML
elements named after the parameter, and structured values nest (vLLM's `_llm_nom/m3_text.py`):

    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="N">]<]minimax[>[<K>V]<]minimax[>[</K>…]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

A parameter holding child elements is an object (`<city>…</city><zip>…</zip>`), or a list when
its children are `<item>` elements; a tag repeated inside an object collects its values in a list.
Leaf text is typed by the schema of the property it fills. One `<tool_call>` holds every call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..calls import ToolCall
from .core import Found, Scan

NS = "]<]minimax[>["
_OPEN = NS + "<tool_call>"
_CLOSE = NS + "</tool_call>"
_INVOKE = re.compile(r"\s*" + re.escape(NS) + r"<invoke\s+name\s*=\s*\"([^\"]*)\"\s*>")
_INVOKE_END = NS + "</invoke>"
_TAG = re.compile(r"<(/?)([^<>\s/]+)>")
_MAX_DEPTH = 32


def tool_call(scan: Scan, pos: int) -> Found | None:
    """`]<]minimax[>[<tool_call>` … `]<]minimax[>[</tool_call>`."""
    text = scan.text
    close = scan.find(_CLOSE, pos)
    if close < 0 and scan.partial:
        return scan.pending(pos)
    if close < 0 and _INVOKE.match(text, pos + len(_OPEN), scan.end) is None:
        return None  # "…]<]minimax[>[<tool_call> opens the block": talk about the tag
    limit = scan.end if close < 0 else close
    calls: list[ToolCall] = []
    i = pos + len(_OPEN)
    while (invoke := _INVOKE.match(text, i, limit)) is not None:
        stop = text.find(_INVOKE_END, invoke.end(), limit)
        body_end = limit if stop < 0 else stop
        i = body_end if stop < 0 else stop + len(_INVOKE_END)
        raw = text[invoke.start() : i]
        name = invoke.group(1)
        known = scan.builder.resolve(name)
        schema = scan.builder.schema(known) if known else {}
        try:
            args = _element_values(text[invoke.end() : body_end].split(NS)[1:], schema)
        except ValueError as exc:
            calls.append(
                scan.builder.error("minimax_m3", f"the parameters could not be read ({exc})", raw, name)
            )
            continue
        calls.append(scan.builder.call(name, args, "minimax_m3", raw))
    end = limit if close < 0 else close + len(_CLOSE)
    if not calls:
        return scan.error_span(
            pos, end, "minimax_m3", 'expected ]<]minimax[>[<invoke name="…"> inside the block'
        )
    return scan.span(pos, end, "minimax_m3", calls)


def _element_values(chunks: list[str], schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments from the chunks between namespace tokens (`<K>V`, `</K>`, `<K>`, …)."""
    root: list[tuple[str, Any]] = []
    stack: list[tuple[str, list[tuple[str, Any]], list[str]]] = [("", root, [])]
    for chunk in chunks:
        tag = _TAG.match(chunk)
        if tag is None:
            stack[-1][2].append(chunk)  # text after a closed child, or stray text
            continue
        rest = chunk[tag.end() :]
        if tag.group(1):  # a closing tag: close up to the matching element
            while len(stack) > 1:
                name, children, texts = stack.pop()
                stack[-1][1].append((name, (children, "".join(texts))))
                if name == tag.group(2):
                    break
            continue
        if len(stack) > _MAX_DEPTH:
            raise ValueError("the elements nest too deep")
        stack.append((tag.group(2), [], [rest] if rest else []))
    while len(stack) > 1:
        name, children, texts = stack.pop()
        stack[-1][1].append((name, (children, "".join(texts))))
    props = schema.get("properties") or {}
    return _collect([(name, _value(node, props.get(name))) for name, node in root])


def _value(node: tuple[list[tuple[str, Any]], str], prop: dict[str, Any] | None) -> Any:
    """A leaf's text typed by `prop`; an element with children as an object or a list."""
    children, text = node
    prop = prop if isinstance(prop, dict) else {}
    if not children:
        return _leaf(text, prop)
    if all(name == "item" for name, _ in children) and prop.get("type") in ("array", None):
        items = prop.get("items") if isinstance(prop.get("items"), dict) else None
        return [_value(child, items) for _, child in children]
    props = prop.get("properties") or {}
    extra = prop.get("additionalProperties") if isinstance(prop.get("additionalProperties"), dict) else None
    return _collect([(name, _value(child, props.get(name, extra))) for name, child in children])


def _collect(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object from (tag, value) pairs; a repeated tag keeps every value, as a list."""
    grouped: dict[str, list[Any]] = {}
    for name, value in pairs:
        grouped.setdefault(name, []).append(value)
    return {name: values[0] if len(values) == 1 else values for name, values in grouped.items()}


def _leaf(text: str, prop: dict[str, Any]) -> Any:
    """Leaf text typed by its schema (`018956` is the integer 18956); left as text otherwise."""
    kind, word = prop.get("type"), text.strip()
    try:
        if kind == "integer":
            return int(word)
        if kind == "number":
            return float(word) if any(c in word for c in ".eE") else int(word)
        if kind in ("boolean", "object", "array"):
            return json.loads(word)
    except ValueError:
        return word
    return text
