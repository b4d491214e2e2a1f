"""Formats whose argument values are raw text between tags, typed by the tool's schema:
Qwen3-Coder `<function=N><parameter=K>…`, Seed-OSS, GLM `<arg_key>/<arg_value>`, and the
`<invoke name=…><parameter name=…>` family (MiniMax-M2, dots, `<function_calls>`, DeepSeek DSML
and V4.1's spaced DSML, GigaChat 3.5's GCML, MuseGlimmer's ATEM, Step-3). Also the `<tool_call>`
dispatcher, since that tag carries JSON, XML, GLM or Step-Audio 2 bodies.

A value ends at the closing tag that is followed by the next tag of the structure, so a raw
value (a file's content) may itself contain `</tool_call>` or even `</parameter>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..calls import ToolCall
from .core import Found, Scan
from .fmt_headers import step_audio
from .fmt_json import hermes_json, json_calls
from .fmt_python import tagged_pythonic

_FUNCTION = re.compile(r"\s*<function(?:\s*=\s*|\s+)[\"']?([^>\n<=\s\"']*?)[\"']?\s*>")
_PARAMETER = re.compile(r"\s*<parameter\s*=\s*([^>\n<]*?)\s*>")
# `<parameter=command=str_replace</parameter>`: a tag missing its `>`, read as command=str_replace
_BROKEN_PARAMETER = re.compile(r"\s*<parameter\s*=\s*([^>\n<=]+?)\s*=\s*([^<\n]*?)\s*</parameter>")
_GLM_NAME = re.compile(r"\s*([^\s<{]+)\s*(?:<tool_sep>\s*)?")
_NOT_A_BODY = (
    'the <tool_call> block holds neither a JSON object {"name": …, "arguments": {…}} nor <function=…>'
)
_GLM_OPEN_KEY = re.compile(r"\s*<arg_key>[^<\n]*(?:</?a?r?g?_?k?e?y?>?\s*(?:<a?r?g?_?v?a?l?u?e?)?)?\Z")
_GLM_KEY = re.compile(r"\s*<arg_key>\s*([^<\n]*?)\s*</arg_key>\s*<arg_value>")


def value_end(scan: Scan, start: int, closer: str, followers: tuple[str, ...]) -> tuple[int, int] | None:
    """(value end, position after the closer) for a raw value at `start`. None while streaming
    and the value is not closed yet."""
    text = scan.text
    at = scan.find(closer, start)
    first = at
    while at >= 0:
        after = scan.skip_space(at + len(closer))
        if after >= scan.end or text.startswith(followers, after):
            return at, at + len(closer)
        at = scan.find(closer, at + 1)
    if scan.partial:
        return None
    if first >= 0:
        return first, first + len(closer)
    stops = [i for i in (scan.find(f, start) for f in followers if f) if i >= 0]
    if stops:
        return min(stops), min(stops)  # the model forgot the closer
    return scan.end, scan.end


def _one_newline(value: str) -> str:
    """Qwen3-Coder puts the value on its own lines; exactly one newline each side is layout
    (`\r\n` from a model trained on Windows text counts as one)."""
    value = value[2:] if value.startswith("\r\n") else value[1:] if value.startswith("\n") else value
    return value[:-2] if value.endswith("\r\n") else value[:-1] if value.endswith("\n") else value


@dataclass(frozen=True)
class Shape:
    """The tags of one XML-style family: a call tag naming the tool (group 1) holding parameter
    tags (group 1 the name; an optional group 2 is DSML's `string="…"` flag)."""

    call: re.Pattern[str]
    parameter: re.Pattern[str]
    call_open: str
    call_close: str
    param_open: str
    param_close: str
    layout_newlines: bool = False  # Qwen3-Coder: one newline each side of a value is layout
    broken: re.Pattern[str] | None = None  # a malformed parameter tag that can still be read
    trim: bool = False  # MiniCPM5: blanks around a one-line value are layout


QWEN = Shape(
    _FUNCTION, _PARAMETER, "<function", "</function>", "<parameter", "</parameter>", True, _BROKEN_PARAMETER
)


# MiniCPM5: <function name="N"><param name="K">V</param></function>, no wrapper
MINICPM = Shape(
    re.compile(r"\s*<function\s+name\s*=\s*[\"']?([^\"'>]*)[\"']?[^>]*>"),
    re.compile(r"\s*<param\s+name\s*=\s*[\"']?([^\"'>]*)[\"']?\s*>"),
    "<function",
    "</function>",
    "<param",
    "</param>",
    trim=True,
)


def xml_calls(scan: Scan, pos: int, at: int, shape: Shape, source: str, close: str) -> Found:
    """Call tags from `at`, repeated, each with its parameters, then `close` (if any)."""
    text = scan.text
    calls: list[ToolCall] = []
    i = at
    while (call := shape.call.match(text, i, scan.end)) is not None:
        i = call.end()
        values: dict[str, Any] = {}
        while True:
            parameter = shape.parameter.match(text, i, scan.end)
            if parameter is None:
                broken = shape.broken.match(text, i, scan.end) if shape.broken else None
                if broken is None:
                    break
                _keep_broken(scan, call.group(1), broken, values)
                i = broken.end()
                continue
            followers = (shape.param_open, shape.call_close, close)
            bounds = value_end(scan, parameter.end(), shape.param_close, tuple(f for f in followers if f))
            if bounds is None:
                return scan.pending(pos)
            raw = text[parameter.end() : bounds[0]]
            flag = parameter.group(2) if shape.parameter.groups >= 2 else None
            value = _one_newline(raw) if shape.layout_newlines else raw
            if shape.trim and "\n" not in raw.strip():
                value = raw.strip()
            values[parameter.group(1).strip("\"'")] = scan.value(raw) if flag == "false" else value
            i = bounds[1]
        after = scan.skip_space(i)
        if text.startswith(shape.call_close, after):
            i = after + len(shape.call_close)
        elif scan.unfinished(after, (shape.param_open, shape.call_close)):
            return scan.pending(pos)
        calls.append(scan.builder.typed(call.group(1), values, source, text[call.start() : i]))
    if scan.unfinished(i, (shape.call_open, close) if close else (shape.call_open,)):
        return scan.pending(pos)
    return _closed(scan, pos, i, close, source, calls, f"{shape.call_open}…>")


def _keep_broken(scan: Scan, tool: str, broken: re.Match[str], values: dict[str, Any]) -> None:
    """A malformed `<parameter=K=V</parameter>` counts only when K is a parameter of the tool
    (Step-3.5's parser does the same); either way the next parameter is read on its own."""
    name = scan.builder.resolve(tool)
    props = scan.builder.schema(name).get("properties") or {} if name else {}
    if broken.group(1) in props:
        values[broken.group(1)] = broken.group(2)


def _closed(
    scan: Scan, pos: int, i: int, close: str, source: str, calls: list[ToolCall], shape: str
) -> Found:
    """Finish a span at `close` (if it follows); a block with no call in it is an error call."""
    if not calls:
        stop = None if scan.partial and scan.only_space_after(i) else scan.error_end(i, close)
        if stop is None:
            return scan.pending(pos)
        return scan.error_span(pos, stop, source, f"expected {shape} inside the block")
    after = scan.skip_space(i)
    end = after + len(close) if close and scan.text.startswith(close, after) else i
    return scan.span(pos, end, source, calls)


def glm(scan: Scan, pos: int, at: int) -> Found | None:
    """GLM-4.5/4.7: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>`
    (no arguments is allowed); `<tool_call>NAME {json}</tool_call>` is read too."""
    text = scan.text
    name = _GLM_NAME.match(text, at, scan.end)
    if name is None:
        return _closed(scan, pos, at, "</tool_call>", "glm", [], "NAME<arg_key>…")
    i = name.end()
    if text.startswith("{", i):
        found = json_calls(scan, pos, i, "glm", "</tool_call>", _named(name.group(1)))
        return found
    if not _GLM_KEY.match(text, i, scan.end) and not text.startswith("</tool_call>", scan.skip_space(i)):
        if _glm_unfinished(scan, i):
            return scan.pending(pos)
        closed = scan.find("</tool_call>", i) >= 0
        if not scan.partial and not closed and scan.builder.known(name.group(1)) is None:
            return None  # "…wrap the JSON in <tool_call> tags": talk about the tag, no block
        end = scan.error_end(i, "</tool_call>")
        if end is None:
            return scan.pending(pos)
        return scan.error_span(pos, end, "hermes", _NOT_A_BODY)
    values: dict[str, str] = {}
    while (key := _GLM_KEY.match(text, i, scan.end)) is not None:
        bounds = value_end(scan, key.end(), "</arg_value>", ("<arg_key>", "</tool_call>"))
        if bounds is None:
            return scan.pending(pos)
        values[key.group(1)] = text[key.end() : bounds[0]]
        i = bounds[1]
    after = scan.skip_space(i)
    if not text.startswith("</tool_call>", after):
        if _glm_unfinished(scan, after):
            return scan.pending(pos)
        if not values:
            return _closed(scan, pos, i, "</tool_call>", "glm", [], "NAME<arg_key>…")
    call = scan.builder.typed(name.group(1), values, "glm", text[pos:i])
    return _closed(scan, pos, i, "</tool_call>", "glm", [call], "")


def _glm_unfinished(scan: Scan, pos: int) -> bool:
    unfinished = scan.unfinished(pos, ("<arg_key>", "</tool_call>"))
    return unfinished or (scan.partial and _GLM_OPEN_KEY.match(scan.text, pos, scan.end) is not None)


def _named(name: str):
    def to_calls(scan: Scan, value: object, source: str, raw: str) -> list[ToolCall]:
        return [scan.builder.call(name, value, source, raw)]

    return to_calls


def tool_call_tag(scan: Scan, pos: int) -> Found | None:
    """`<tool_call>`: Hermes JSON, granite-3.1 JSON array, Qwen3-Coder XML or GLM key/values."""
    at = scan.skip_space(pos + len("<tool_call>"))
    if at >= scan.end:
        return scan.pending(pos) if scan.partial else scan.error_span(pos, at, "hermes", "the block is empty")
    if scan.text[at] in "{[":
        return hermes_json(scan, pos, at)
    if MINICPM.call.match(scan.text, at, scan.end):
        return xml_calls(scan, pos, at, MINICPM, "minicpm5", "</tool_call>")
    if scan.text.startswith("<function", at):
        return xml_calls(scan, pos, at, QWEN, "qwen3_xml", "</tool_call>")
    if scan.text.startswith("<invoke", at):
        return invokes(scan, pos, at, "", "minimax", "</tool_call>")
    if scan.text.startswith("</tool_call>", at):
        return scan.error_span(pos, at + len("</tool_call>"), "hermes", "the block is empty")
    return step_audio(scan, pos, at) or glm(scan, pos, at)


def bare_function(scan: Scan, pos: int) -> Found | None:
    """Qwen3-Coder `<function=N>…</function>` without the `<tool_call>` wrapper."""
    return xml_calls(scan, pos, pos, QWEN, "qwen3_xml", "</tool_call>")


def minicpm(scan: Scan, pos: int) -> Found | None:
    """MiniCPM5 `<function name="N">…</function>` blocks."""
    return xml_calls(scan, pos, pos, MINICPM, "minicpm5", "")


def seed(scan: Scan, pos: int) -> Found | None:
    at = pos + len("<seed:tool_call>")
    return xml_calls(scan, pos, at, QWEN, "seed_oss", "</seed:tool_call>")


# -- <invoke name="N"><parameter name="P">V</parameter></invoke> ------------------------------

_INVOKE_WRAPPERS = {  # opening tag -> (closing tag, tag prefix, source)
    "<minimax:tool_call>": ("</minimax:tool_call>", "", "minimax"),
    "<dots_function_call>": ("</dots_function_call>", "", "dots"),
    "<function_calls>": ("</function_calls>", "", "function_calls"),
    "<｜DSML｜function_calls>": ("</｜DSML｜function_calls>", "｜DSML｜", "deepseek_dsml"),
    "<｜DSML｜tool_calls>": ("</｜DSML｜tool_calls>", "｜DSML｜", "deepseek_dsml"),
    "<｜DSML｜ calls>": ("</｜DSML｜ calls>", "｜DSML｜ ", "deepseek_dsml"),  # V4.1: spaced tags
    "<｜GCML｜tool_calls>": ("</｜GCML｜tool_calls>", "｜GCML｜", "gigachat35"),
    "<atem:function_calls>": ("</atem:function_calls>", "atem:", "muse_glimmer"),
}
_olmo = tagged_pythonic("<function_calls>", "</function_calls>", "olmo3")


def _invoke_shape(prefix: str) -> Shape:
    p = re.escape(prefix)
    invoke = re.compile(r"\s*<" + p + r"invoke\s+name\s*=\s*[\"']?([^\"'>]*)[\"']?\s*>")
    parameter = re.compile(
        r"\s*<" + p + r"parameter\s+name\s*=\s*[\"']?([^\"'>\s]*)[\"']?"
        r"(?:\s+string\s*=\s*[\"']?(\w+)[\"']?)?\s*>"
    )
    return Shape(
        invoke,
        parameter,
        f"<{prefix}invoke",
        f"</{prefix}invoke>",
        f"<{prefix}parameter",
        f"</{prefix}parameter>",
    )


_SHAPES = {
    prefix: _invoke_shape(prefix) for prefix in ("", "｜DSML｜", "｜DSML｜ ", "｜GCML｜", "atem:", "steptml:")
}


def invoke_wrapper(scan: Scan, pos: int) -> Found | None:
    opener = next((o for o in _INVOKE_WRAPPERS if scan.text.startswith(o, pos)), None)
    if opener is None:
        return None
    close, prefix, source = _INVOKE_WRAPPERS[opener]
    at = scan.skip_space(pos + len(opener))
    if opener == "<function_calls>" and not scan.text.startswith("<invoke", at):
        if scan.partial and at >= scan.end:
            return scan.pending(pos)
        return _olmo(scan, pos)
    return invokes(scan, pos, at, prefix, source, close)


def invokes(scan: Scan, pos: int, at: int, prefix: str, source: str, close: str) -> Found:
    """One or more `<invoke name=…>` blocks (tag names may carry a prefix such as `｜DSML｜`)."""
    return xml_calls(scan, pos, at, _SHAPES[prefix], source, close)
