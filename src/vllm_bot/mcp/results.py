"""MCP call results (wire form: content blocks, structuredContent, isError) -> ToolResult.

Text blocks become the text the model reads; images, audio and resources become a one-line
description (the model cannot see them through a chat-completions tool message). Structured
content becomes a "data" result when it is what the text says anyway; `isError` an "error" result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..calls import ToolResult


def convert_result(call_id: str, name: str, result: Mapping[str, Any], limit: int) -> ToolResult:
    """The ToolResult for one `tools/call` answer, at most about `limit` characters long."""
    blocks = [b for b in result.get("content") or [] if isinstance(b, Mapping)]
    texts = [describe_block(b) for b in blocks]
    text = "\n".join(t for t in texts if t)
    if result.get("isError"):
        return ToolResult(call_id, name, "error", cap(text or "the tool failed without a message", limit))
    structured = result.get("structuredContent")
    if structured is not None and _same_as_text(structured, blocks):
        encoded = json.dumps(structured, ensure_ascii=False)
        if len(encoded) <= limit:
            return ToolResult(call_id, name, "data", structured)
        text = encoded
    return ToolResult(call_id, name, "text", cap(text or "(the tool returned no output)", limit))


def describe_block(block: Mapping[str, Any]) -> str:
    """The text of a text block; a short bracketed description of anything else."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {_size(block.get('data'))}, not shown]"
    if kind == "resource_link":
        about = f": {block['description']}" if block.get("description") else ""
        return f"[resource link {block.get('name', '')} {block.get('uri', '')}{_mime(block)}{about}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        uri = resource.get("uri", "")
        if isinstance(resource.get("text"), str):
            return f"[resource {uri}{_mime(resource)}]\n{resource['text']}"
        return f"[resource {uri}{_mime(resource)}, {_size(resource.get('blob'))}, binary, not shown]"
    return f"[{kind or 'unknown'} content, not shown]"


def cap(text: str, limit: int) -> str:
    """Head and tail of `text` with a line saying how much was cut, when longer than `limit`."""
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :] if limit >= 3 else ""
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[... {cut} characters of MCP output cut ...]\n{tail}"


def _same_as_text(structured: Any, blocks: list[Mapping[str, Any]]) -> bool:
    """True when the text blocks are absent or only the JSON encoding of `structured`."""
    texts = [b for b in blocks if b.get("type") == "text"]
    if len(texts) != len(blocks):
        return False  # images or resources the data alone would lose
    if not texts:
        return True
    try:
        return bool(json.loads("".join(str(b.get("text", "")) for b in texts)) == structured)
    except ValueError:
        return False


def _size(data: Any) -> str:
    if not isinstance(data, str):
        return "size unknown"
    size = len(data) * 3 // 4  # base64
    return f"{size} bytes" if size < 10_000 else f"{size // 1024} KB"


def _mime(item: Mapping[str, Any]) -> str:
    return f" ({item['mimeType']})" if item.get("mimeType") else ""
