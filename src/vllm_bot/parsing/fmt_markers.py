"""Formats built from special-token markers: DeepSeek V3/V3.1 and Step-3 (fullwidth `｜` bars,
`▁` or `_` joins), Kimi K2 sections (and their stripped `functions.read:0 {…}` leftovers), and
gpt-oss harmony (`<|channel|>commentary to=functions.read <|constrain|>json<|message|>{…}<|call|>`
and the stripped `commentary to=functions.read json{…}`).
"""

from __future__ import annotations

import re

from ..calls import ToolCall
from .core import Found, Scan
from .fmt_xml import invokes

_DEEPSEEK_OPEN = re.compile(r"<｜tool([▁_])calls?\1begin｜>")
_FENCE_HEAD = re.compile(r"\s*```[\w-]*\s*")
# Step-3's `<steptml:invoke`: after `function<sep>`, after `function<sep>NAME` (and a newline),
# or right after the call marker.
_STEP3_HEAD = re.compile(r"\s*(?:function\s*<｜tool_sep｜>\s*(?:[\w.\-]+\s*)?)?(?=<steptml:invoke)")


def _json_args(scan: Scan, at: int) -> tuple[object, int] | None:
    """The JSON object at `at` (after blanks) and where it ends; None if unfinished while
    streaming. Raises ValueError when it cannot be read."""
    at = scan.skip_space(at)
    if at >= scan.end or scan.text[at] not in "{[":
        if scan.partial and at >= scan.end:
            return None
        raise ValueError("expected a JSON object")
    scanned = scan.scan_json(at)
    if not scanned.closed and scan.partial:
        return None
    return scan.decode(scan.text[at : scanned.end]), scanned.end


def deepseek(scan: Scan, pos: int) -> Found | None:
    """`<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>…<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`."""
    m = _DEEPSEEK_OPEN.match(scan.text, pos, scan.end)
    if m is None:
        return None
    j = m.group(1)
    source = "deepseek" if j == "▁" else "step3"
    call_begin, call_end = f"<｜tool{j}call{j}begin｜>", f"<｜tool{j}call{j}end｜>"
    sep, calls_end = f"<｜tool{j}sep｜>", f"<｜tool{j}calls{j}end｜>"
    i = scan.skip_space(m.end()) if m.group().startswith(f"<｜tool{j}calls") else pos
    calls: list[ToolCall] = []
    while scan.text.startswith(call_begin, i):
        start = i + len(call_begin)
        stop = scan.find(call_end, start)
        if stop < 0 and scan.partial:
            return scan.pending(pos)
        limit = scan.end if stop < 0 else stop
        found = _deepseek_call(scan, start, limit, sep, source)
        if found is None:
            return scan.pending(pos)
        calls.extend(found)
        i = scan.skip_space(limit + len(call_end) if stop >= 0 else limit)
        if scan.text.startswith(sep, i):  # Step-3 may put a separator between two calls
            i = scan.skip_space(i + len(sep))
    if scan.text.startswith(calls_end, i):
        i += len(calls_end)
    elif scan.partial and (i < scan.end or m.group().startswith(f"<｜tool{j}calls")):
        return scan.pending(pos)  # more calls or the section end may follow
    if not calls:
        return scan.error_span(pos, max(i, m.end()), source, "expected a tool call between the markers")
    return scan.span(pos, i, source, calls)


def _deepseek_call(scan: Scan, start: int, limit: int, sep: str, source: str) -> list[ToolCall] | None:
    """The call(s) between one call's markers; None while streaming and not finished."""
    text = scan.text
    invoke = _STEP3_HEAD.match(text, start, limit) if source == "step3" else None
    if invoke is not None:
        return _step3_calls(scan, start, invoke.end(), limit, source)
    split = text.find(sep, start, limit)
    raw = text[start:limit]
    if split < 0:
        return [scan.builder.error(source, "missing the separator between name and arguments", raw)]
    head, body = text[start:split].strip(), split + len(sep)
    if head == "function":  # V3: function<sep>NAME\n```json\n{…}\n```
        nl = text.find("\n", body, limit)
        head, body = text[body : nl if nl >= 0 else limit].strip(), nl if nl >= 0 else limit
        fence = _FENCE_HEAD.match(text, body, limit)
        body = fence.end() if fence else body
    saved, scan.end = scan.end, limit
    try:
        parsed = _json_args(scan, body)
    except ValueError as exc:
        return [scan.builder.error(source, f"the arguments could not be read ({exc})", raw, head)]
    finally:
        scan.end = saved
    if parsed is None:
        return None
    return [scan.builder.call(head, parsed[0], source, raw)]


def _step3_calls(scan: Scan, start: int, at: int, limit: int, source: str) -> list[ToolCall] | None:
    """The `<steptml:invoke>` blocks of one call (several may share it); the invoke names the
    tool, whatever name came after the separator."""
    saved, scan.end = scan.end, limit
    try:
        found = invokes(scan, start, at, "steptml:", source, "")
    finally:
        scan.end = saved
    return None if found.pending else found.calls


# -- Kimi K2 -----------------------------------------------------------------------------------

_KIMI_OPEN = re.compile(r"<\|tool_calls?_section_begin\|>")
_KIMI_CALL = re.compile(r"\s*<\|tool_call_begin\|>\s*([^<]*?)\s*<\|tool_call_argument_begin\|>")
_KIMI_END = re.compile(r"\s*<\|tool_call_end\|>")
_KIMI_SECTION_END = re.compile(r"\s*<\|tool_calls?_section_end\|>")
_KIMI_BARE = re.compile(r"functions\.([\w\-]+):\d+\s*")
_KIMI_ID = re.compile(r"(?:functions\.)?(.+?):\d+")


def kimi(scan: Scan, pos: int) -> Found | None:
    text = scan.text
    section = _KIMI_OPEN.match(text, pos, scan.end)
    i = section.end() if section else pos
    if scan.partial:  # nothing is decided before the section (or the lone call) is closed
        closer = _KIMI_SECTION_END if section else _KIMI_END
        if closer.search(text, i, scan.end) is None:
            return scan.pending(pos)
    calls: list[ToolCall] = []
    while (head := _KIMI_CALL.match(text, i, scan.end)) is not None:
        try:
            parsed = _json_args(scan, head.end())
        except ValueError as exc:
            stop = scan.find("<|tool_call_end|>", head.end())
            end = scan.end if stop < 0 else stop
            calls.append(scan.builder.error("kimi", f"the arguments could not be read ({exc})", text[i:end]))
            i = end
        else:
            if parsed is None:
                return scan.pending(pos)
            calls.append(_kimi_call(scan, head.group(1), parsed[0], text[head.start() : parsed[1]]))
            i = parsed[1]
        close = _KIMI_END.match(text, i, scan.end)
        i = close.end() if close else i
    end_section = _KIMI_SECTION_END.match(text, i, scan.end)
    if end_section is not None:
        i = end_section.end()
    elif scan.partial and scan.only_space_after(i):
        return scan.pending(pos)
    if not calls:
        if scan.partial and scan.only_space_after(i):
            return scan.pending(pos)
        return scan.error_span(pos, max(i, pos + 1), "kimi", "expected <|tool_call_begin|>functions.NAME:0")
    return scan.span(pos, i, "kimi", calls)


def _kimi_call(scan: Scan, call_id: str, args: object, raw: str) -> ToolCall:
    """The call a Kimi id names: `functions.NAME:N` or `NAME:N`; a bare counter (`0`,
    `functions.0`) names the one offered tool, and is an unknown tool when several are offered.
    An id without its `:N` counter (`functions.read`, `invalid.0`) is an error for the model,
    never run: vLLM's parser does not take such a call either."""
    named = _KIMI_ID.fullmatch(call_id)
    if named is not None:
        return scan.builder.call(named.group(1), args, "kimi", raw)
    if call_id.removeprefix("functions.").isdigit():
        return scan.builder.call(call_id, args, "kimi", raw)
    problem = f"the call id {call_id!r} is missing its ':N' counter; write functions.NAME:0"
    return scan.builder.error("kimi", problem, raw, scan.builder.resolve(call_id) or call_id)


def kimi_bare(scan: Scan, pos: int) -> Found | None:
    """`functions.read:0 {"path": …}`: a Kimi call whose marker tokens were stripped."""
    head = _KIMI_BARE.match(scan.text, pos, scan.end)
    if head is None:
        return None
    return _named_json(scan, pos, head.end(), head.group(1), "kimi")


def _named_json(scan: Scan, pos: int, at: int, name: str, source: str, tail: str = "") -> Found | None:
    try:
        parsed = _json_args(scan, at)
    except ValueError as exc:
        return scan.error_span(
            pos, scan.line_end(at), source, f"the arguments could not be read ({exc})", name
        )
    if parsed is None:
        return scan.pending(pos)
    end = parsed[1]
    if tail and scan.text.startswith(tail, scan.skip_space(end)):
        end = scan.skip_space(end) + len(tail)
    return scan.span(pos, end, source, [scan.builder.call(name, parsed[0], source, scan.text[pos:end])])


# -- gpt-oss harmony -----------------------------------------------------------------------------

_HARMONY = re.compile(
    r"to=functions\.([\w\-]+)\s*(?:<\|channel\|>\s*commentary)?\s*(?:<\|constrain\|>\s*)?"
    r"(?:json)?\s*(?:<\|message\|>)?"
)
_HARMONY_BEFORE = re.compile(r"(?:<\|start\|>\s*)?(?:assistant\s*)?(?:<\|channel\|>\s*)?(?:commentary\s*)?\Z")


def harmony(scan: Scan, pos: int) -> Found | None:
    window = max(scan.floor, pos - 80)
    before = _HARMONY_BEFORE.search(scan.text, window, pos)
    start = before.start() if before else pos
    head = _HARMONY.match(scan.text, pos, scan.end)
    if head is None:
        return scan.pending(start) if scan.unfinished(pos, ("to=functions.",)) else None
    at = scan.skip_space(head.end())
    tokens = "<|" in scan.text[start : head.end()]
    if not tokens and not scan.partial and not scan.text.startswith(("{", "["), at):
        return None  # "gpt-oss puts to=functions.read in the header": no special tokens, no JSON
    return _named_json(scan, start, head.end(), head.group(1), "harmony", tail="<|call|>")


# -- Kimi K3 (XTML channels) ---------------------------------------------------------------------
# <|open|>tools<|sep|><|open|>call tool="read" index="1"<|sep|>
#   <|open|>argument key="path" type="string"<|sep|>a.py<|close|>argument<|sep|>
# <|close|>call<|sep|><|close|>tools<|sep|>   (string values are raw, other types JSON)

_K3_CALL = re.compile(r"\s*<\|open\|>\s*call\b([^<]*)<\|sep\|>")
_K3_ARG = re.compile(r"\s*<\|open\|>\s*argument\b([^<]*)<\|sep\|>")
_K3_CALL_END = re.compile(r"\s*<\|close\|>\s*call\s*<\|sep\|>")
_K3_TOOLS_END = re.compile(r"\s*<\|close\|>\s*tools\s*<\|sep\|>")
_K3_ARG_END = "<|close|>argument<|sep|>"
_ATTR = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


def _attrs(text: str) -> dict[str, str]:
    return {k: v.replace("&quot;", '"').replace("&amp;", "&") for k, v in _ATTR.findall(text)}


def kimi_k3(scan: Scan, pos: int) -> Found | None:
    text = scan.text
    i = text.index("<|sep|>", pos) + len("<|sep|>")
    if scan.partial and _K3_TOOLS_END.search(text, i, scan.end) is None:
        return scan.pending(pos)
    calls: list[ToolCall] = []
    while (call := _K3_CALL.match(text, i, scan.end)) is not None:
        i, args = call.end(), {}
        while (arg := _K3_ARG.match(text, i, scan.end)) is not None:
            stop = scan.find(_K3_ARG_END, arg.end())
            value_end = scan.end if stop < 0 else stop
            attrs, raw = _attrs(arg.group(1)), text[arg.end() : value_end]
            string = attrs.get("type", "string") == "string"
            args[attrs.get("key", "")] = raw if string else scan.value(raw)
            i = value_end + (len(_K3_ARG_END) if stop >= 0 else 0)
        close = _K3_CALL_END.match(text, i, scan.end)
        i = close.end() if close else i
        name = _attrs(call.group(1)).get("tool", "")
        calls.append(scan.builder.call(name, args, "kimi_k3", text[call.start() : i]))
    end = _K3_TOOLS_END.match(text, i, scan.end)
    i = end.end() if end else i
    if not calls:
        problem = 'expected <|open|>call tool="NAME"'
        return scan.error_span(pos, max(i, scan.line_end(pos)), "kimi_k3", problem)
    return scan.span(pos, i, "kimi_k3", calls)
