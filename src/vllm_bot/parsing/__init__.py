"""INTERIM minimal parser (TOOL_CALL: blocks and <tool_call> JSON) until the full parser lands."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..calls import ToolCall, new_call_id


@dataclass
class Extraction:
    calls: list[ToolCall] = field(default_factory=list)
    content: str = ""
    formats: list[str] = field(default_factory=list)


_PATTERNS = [
    ("tool_call_block", re.compile(r"TOOL_CALL:\s*(\{.*?\})\s*(?:\n|$)", re.S)),
    ("hermes", re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)),
]


def extract_tool_calls(text: str, definitions: list[dict[str, Any]] | None = None) -> Extraction:
    out = Extraction(content=text)
    for fmt, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            try:
                obj = json.loads(m.group(1))
            except json.JSONDecodeError as e:
                out.calls.append(ToolCall(new_call_id(), "", {}, {"source": fmt, "error": str(e)}))
                continue
            args = obj.get("args", obj.get("arguments", {}))
            out.calls.append(ToolCall(new_call_id(), obj.get("name", ""), args, {"source": fmt}))
            out.content = out.content.replace(m.group(0), "")
            if fmt not in out.formats:
                out.formats.append(fmt)
    out.content = out.content.strip()
    return out


def parse_tool_calls(text: str, definitions: list[dict[str, Any]] | None = None) -> list[ToolCall]:
    return extract_tool_calls(text, definitions).calls


def split_reasoning(text: str) -> tuple[str, str]:
    m = re.match(r"\s*(?:<think>)?(.*?)</think>", text, re.S)
    if m:
        return m.group(1).strip(), text[m.end() :].lstrip()
    return "", text


class StreamFilter:
    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        return delta

    def flush(self) -> str:
        return ""
