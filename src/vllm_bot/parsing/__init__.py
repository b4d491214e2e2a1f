"""Recover tool calls from whatever a local model writes in its reply text.

`parse_tool_calls(text)` is the public contract: the model client calls it on every text reply
(and on `content` when native tool calls came back empty), and the streaming display uses the
same scan through `StreamFilter`, so what is hidden while streaming is what gets executed.

Formats and their raw shapes are described in docs/parsing.md (from vLLM's parsers and
`shared/reference/vllm-protocol.md` §7); each format module says which it reads. Text inside
reasoning, code blocks that are not a call, inline code, quotes, tables, diffs, or another call's
string argument is never a call, nor is talk about a format (placeholders, a tool's schema, a
marker named in a sentence). One reply yields at most `Scan.MAX_CALLS` (64) calls; the rest of a
runaway reply becomes one error call saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..calls import ToolCall
from .core import Found
from .reasoning import inner_text
from .stream import StreamFilter
from .walker import builder_for, find_spans, prose

__all__ = ["Extraction", "StreamFilter", "extract_tool_calls", "parse_tool_calls", "split_reasoning"]

_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


@dataclass
class Extraction:
    calls: list[ToolCall] = field(default_factory=list)
    content: str = ""  # the reply without call syntax, reasoning or special tokens
    formats: list[str] = field(default_factory=list)  # call formats seen, in order of appearance
    reasoning: str = ""  # the thinking found in the text (<think>…</think> and the other forms)


def tidy(text: str) -> str:
    """Prose for display: at most one blank line in a row, no blank edges."""
    return _BLANK_LINES.sub("\n\n", text).strip()


def extract_tool_calls(text: str, definitions: list[dict[str, Any]] | None = None) -> Extraction:
    """Calls in order, the remaining prose, and which formats were used."""
    spans = find_spans(text, builder_for(definitions))
    calls = [call for span in spans if span.kind == "call" for call in span.calls]
    formats: list[str] = []
    for span in spans:
        if span.kind == "call" and span.source not in formats:
            formats.append(span.source)
    return Extraction(calls, tidy(prose(text, spans, 0, len(text))), formats, _reasoning(text, spans))


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, content), both stripped: the content is the text without its reasoning and
    special-token leftovers (call syntax stays; see `extract_tool_calls` for that). The same scan
    as the parser, so a `<think>` inside inline code or a call's argument is not reasoning."""
    spans = find_spans(text, builder_for(None))
    return _reasoning(text, spans), tidy(prose(text, spans, 0, len(text), drop=("reasoning", "noise")))


def _reasoning(text: str, spans: list[Found]) -> str:
    parts = (inner_text(text, s.start, s.end) for s in spans if s.kind == "reasoning")
    return "\n\n".join(p for p in parts if p)


def parse_tool_calls(text: str, definitions: list[dict[str, Any]] | None = None) -> list[ToolCall]:
    """The tool calls in a reply, in order. Each has `.name` and `.arguments` (normalized against
    the tool's schema) and `metadata["source"]`; a call that was meant but cannot be used carries
    `metadata["error"]`, a message for the model (never execute such a call)."""
    return extract_tool_calls(text, definitions).calls
