"""Formats where a header of special tokens (or a fixed line) introduces the call:

- Inkling: `<|message_model|>NAME<|content_invoke_tool_json|>{"name": N, "args": {…}}<|end_message|>`
  (with special tokens stripped only `NAME<|content_invoke_tool_json|>{…}` is left);
- PLaMo 3: `<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>
  <|plamo:begin_tool_name:plamo|>N<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>
  <|plamo:constrain|>json<|plamo:msg|>{…}<|plamo:end_tool_arguments:plamo|>
  <|plamo:end_tool_request:plamo|>…<|plamo:end_tool_requests:plamo|>`;
- HyperCLOVA X SEED Think 14B: `<|im_start|>assistant -> tool/function_call\\n[{…}]<|im_end|>`;
- Step-Audio 2: `<tool_call>function\\nNAME\\n{…}</tool_call>` (read from `fmt_xml.tool_call_tag`);
- CWM: `<tool: LABEL>\\nNAME ARGS\\n</tool>`, ARGS a JSON object or else the tool's `command`;
- MuseGlimmer channel headers `<|start|>assistant to=NAME<|message|>` (the ATEM call after them is
  read by `fmt_xml`), `to=self` being reasoning (`reasoning.PAIRS`);
- RWKV: `**Tool Call:**` before a json fence holding the call.
"""

from __future__ import annotations

import json
import re

from ..calls import ToolCall
from .core import Found, Scan
from .fmt_json import json_calls, mentioned
from .masks import fence_handler

_INKLING_HEAD = re.compile(r"(?:<\|message_model\|>)?[ \t]*([\w.\-]*)[ \t]*\Z")
_INKLING_TOOL = "<|content_invoke_tool_json|>"


def inkling(scan: Scan, pos: int) -> Found | None:
    """`<|content_invoke_tool_json|>` and the `<|message_model|>NAME` header before it."""
    before = _INKLING_HEAD.search(scan.text, max(scan.floor, pos - 120), pos)
    start = before.start() if before and before.group() else pos
    body = scan.skip_space(pos + len(_INKLING_TOOL))
    if mentioned(scan, start, body):
        return None
    return json_calls(scan, start, body, "inkling", "<|end_message|>", marker=_INKLING_TOOL)


_INKLING_MODEL = re.compile(r"<\|message_model\|>[ \t]*[\w.\-]*[ \t]*")


def inkling_header(scan: Scan, pos: int) -> Found | None:
    """`<|message_model|>NAME` opens a block: a call when the tool-JSON token follows, else
    framing (the name in a header is metadata, never shown)."""
    head = _INKLING_MODEL.match(scan.text, pos, scan.end)
    if head is None:
        return None
    if scan.text.startswith(_INKLING_TOOL, head.end()):
        return inkling(scan, head.end())
    rest = scan.text[head.end() : head.end() + len(_INKLING_TOOL)]
    if scan.partial and (head.end() >= scan.end or _INKLING_TOOL.startswith(rest)):
        return scan.pending(pos)
    return Found(pos, head.end(), "noise")


_P = "<|plamo:"
_PLAMO_OPEN = _P + "begin_tool_requests:plamo|>"
_PLAMO_CLOSE = _P + "end_tool_requests:plamo|>"
_PLAMO_HEAD = re.compile(
    r"\s*<\|plamo:begin_tool_request:plamo\|>\s*<\|plamo:begin_tool_name:plamo\|>\s*([^<]*?)\s*"
    r"<\|plamo:end_tool_name:plamo\|>\s*<\|plamo:begin_tool_arguments:plamo\|>"
    r"(?:<\|plamo:constrain\|>\s*json\s*<\|plamo:msg\|>)?\s*"
)
_PLAMO_ARGS_END = _P + "end_tool_arguments:plamo|>"
_PLAMO_CALL_END = re.compile(r"\s*(?:<\|plamo:end_tool_request:plamo\|>)?")


def plamo(scan: Scan, pos: int) -> Found | None:
    """PLaMo 3's tool requests: a name and JSON arguments per request."""
    text = scan.text
    if scan.partial and scan.find(_PLAMO_CLOSE, pos) < 0:
        return scan.pending(pos)
    calls: list[ToolCall] = []
    i = pos + len(_PLAMO_OPEN)
    while (head := _PLAMO_HEAD.match(text, i, scan.end)) is not None:
        stop = scan.find(_PLAMO_ARGS_END, head.end())
        limit = scan.end if stop < 0 else stop
        raw, body = text[head.start() : limit], text[head.end() : limit].strip() or "{}"
        try:
            calls.append(scan.builder.call(head.group(1), scan.decode(body), "plamo3", raw))
        except ValueError as exc:
            calls.append(
                scan.builder.error("plamo3", f"the arguments could not be read ({exc})", raw, head.group(1))
            )
        after_args = limit + (len(_PLAMO_ARGS_END) if stop >= 0 else 0)
        i = _PLAMO_CALL_END.match(text, after_args).end()  # type: ignore[union-attr]
    after = scan.skip_space(i)
    end = after + len(_PLAMO_CLOSE) if text.startswith(_PLAMO_CLOSE, after) else i
    if not calls:
        return scan.error_span(
            pos, max(end, scan.line_end(pos)), "plamo3", "expected a tool request in the block"
        )
    return scan.span(pos, end, "plamo3", calls)


_HCX = re.compile(r"(?:<\|im_start\|>)?[ \t]*(?:assistant)?[ \t]*\Z")
_HCX_MARK = "-> tool/function_call"


def hyperclovax(scan: Scan, pos: int) -> Found | None:
    """`assistant -> tool/function_call` then a JSON array of calls, up to `<|im_end|>`."""
    before = _HCX.search(scan.text, max(scan.floor, pos - 40), pos)
    start = before.start() if before and before.group().strip() else pos
    body = scan.skip_space(pos + len(_HCX_MARK))
    if mentioned(scan, start, body) or (body < scan.end and scan.text[body] not in "{["):
        return None
    return json_calls(scan, start, body, "hyperclovax", "<|im_end|>", marker=_HCX_MARK)


_STEP_AUDIO = re.compile(r"function[ \t]*\n[ \t]*([^\s<{]+)[ \t]*\n\s*(?=\{)")


def step_audio(scan: Scan, pos: int, at: int) -> Found | None:
    """Step-Audio 2's body `function\\nNAME\\n{…}` inside `<tool_call>`; None for other bodies."""
    head = _STEP_AUDIO.match(scan.text, at, scan.end)
    if head is None:
        return None
    name = head.group(1)

    def to_calls(scan: Scan, value: object, source: str, raw: str) -> list[ToolCall]:
        return [scan.builder.call(name, value, source, raw)]

    return json_calls(scan, pos, head.end(), "step_audio_2", "</tool_call>", to_calls, "<tool_call>")


_CWM = re.compile(r"<tool:[ \t]*[^>\s]+[ \t]*>")
_CWM_CLOSE = "</tool>"


def cwm(scan: Scan, pos: int) -> Found | None:
    """`<tool: function>\\nNAME ARGS\\n</tool>`: the first word names the tool."""
    head = _CWM.match(scan.text, pos, scan.end)
    if head is None or mentioned(scan, pos, scan.skip_space(head.end())):
        return None
    close = scan.find(_CWM_CLOSE, head.end())
    if close < 0:
        return scan.pending(pos) if scan.partial else None  # no end tag: talk about the tag
    end = close + len(_CWM_CLOSE)
    body = scan.text[head.end() : close].strip()
    first, _, more = body.partition("\n")
    name, _, rest = first.strip().partition(" ")
    rest = "\n".join(part for part in (rest.strip(), more.strip()) if part)
    raw = scan.text[pos:end]
    if not name:
        return scan.error_span(pos, end, "cwm", "the block names no tool")
    args: object = {"command": rest}
    if rest.startswith(("{", "[")):
        try:
            args = json.loads(rest)
        except ValueError:
            pass
    return scan.span(pos, end, "cwm", [scan.builder.call(name, args, "cwm", raw)])


_MUSE = re.compile(r"to=(?!functions\.)[\w.\-]+[ \t]*<\|message\|>")


def muse_header(scan: Scan, pos: int) -> Found | None:
    """A MuseGlimmer message header (`to=read<|message|>`, `to=user<|message|>`): framing only."""
    head = _MUSE.match(scan.text, pos, scan.end)
    return Found(pos, head.end(), "noise") if head else None


_RWKV = "**Tool Call:**"


def rwkv(scan: Scan, pos: int) -> Found | None:
    """`**Tool Call:**` followed by a json fence holding the call: the marker belongs to it."""
    at = scan.skip_space(pos + len(_RWKV))
    if at >= scan.end:
        return scan.pending(pos) if scan.partial else None
    if scan.partial and scan.line_end(at) >= scan.end:
        return scan.pending(pos)  # the fence line is still being written
    if not scan.text.startswith(("```", "~~~"), at) or not scan.at_line_start(at):
        return None
    found = fence_handler(scan, at)
    if found is not None and found.pending:
        return scan.pending(pos)
    if found is None or found.kind != "call":
        return None
    return Found(pos, found.end, "call", found.source, found.calls)
