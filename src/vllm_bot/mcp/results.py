"""MCP call results (wire form: content blocks, structuredContent, isError) -> ToolResult.

Text blocks become the text the model reads; images, audio and binary resources become a one-line
description (the model cannot see them through a chat-completions tool message), text resources
(also a base64 `blob` whose MIME type is text) their text, and a resource link says how to read it.
Structured content becomes a "data" result when it is what the text says anyway; `isError` an
"error" result.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from ..calls import ToolResult

READ_TOOL = "mcp_read_resource"
# The same form as the context window's own marker (model/context.py), which merges the two into one
# when it has to cut again, so a result never carries two markers.
CUT_MARKER = (
    "[... {n} characters cut here: the output is too long. "
    "Ask the tool for less (a narrower query, a filter or a page) ...]"
)
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")


def convert_result(
    call_id: str, name: str, result: Mapping[str, Any], limit: int, *, server: str | None = None
) -> ToolResult:
    """The ToolResult for one `tools/call` answer, at most about `limit` characters long. `server`:
    resource links say how to read them from it."""
    blocks = [b for b in result.get("content") or [] if isinstance(b, Mapping)]
    texts = [describe_block(b, server) for b in blocks]
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


def describe_block(block: Mapping[str, Any], server: str | None = None) -> str:
    """The text of a text block; a short bracketed description of anything else."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {_size(block.get('data'))}, not shown]"
    if kind == "resource_link":
        about = f": {block['description']}" if block.get("description") else ""
        uri = str(block.get("uri", ""))
        how = (
            f"; read it with {READ_TOOL}(server={json.dumps(server)}, uri={json.dumps(uri)})"
            if server
            else ""
        )
        return f"[resource link {block.get('name', '')} {uri}{_mime(block)}{about}{how}]"
    if kind == "resource":
        return describe_contents(block.get("resource") or {})
    return f"[{kind or 'unknown'} content, not shown]"


def describe_contents(resource: Mapping[str, Any]) -> str:
    """One resource's contents (resources/read, or embedded in a result): its text under a header line,
    or a description when it is binary."""
    uri = resource.get("uri", "")
    text = resource.get("text")
    if not isinstance(text, str):
        text = blob_text(resource)
    if isinstance(text, str):
        return f"[resource {uri}{_mime(resource)}]\n{text}"
    return f"[resource {uri}{_mime(resource)}, {_size(resource.get('blob'))}, binary, not shown]"


def blob_text(resource: Mapping[str, Any]) -> str | None:
    """A base64 blob as text when its MIME type says it is text and it decodes as UTF-8."""
    mime = str(resource.get("mimeType") or "").split(";")[0].strip().lower()
    blob = resource.get("blob")
    if not isinstance(blob, str) or not (mime.startswith("text/") or mime in _TEXT_TYPES):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def cap(text: str, limit: int) -> str:
    """Head and tail of `text` around a line saying how much was cut, when longer than `limit`
    (the whole, marker included, stays within about `limit` characters)."""
    if len(text) <= limit:
        return text
    room = max(3, limit - len(CUT_MARKER) - 8)
    head = text[: room * 2 // 3]
    tail = text[-(room // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n{CUT_MARKER.format(n=cut)}\n{tail}"


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
    size = len(data) * 3 // 4 - len(data) + len(data.rstrip("="))  # base64, less its padding
    return f"{size} bytes" if size < 10_000 else f"{size // 1024} KB"


def _mime(item: Mapping[str, Any]) -> str:
    return f" ({item['mimeType']})" if item.get("mimeType") else ""
