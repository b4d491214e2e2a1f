"""Key/value formats whose tags are the model's own sentinels: a call tag holding the tool's
name, then key/value pairs whose values are raw text typed by the tool's schema.

- Solar Open2: `<|tool_call:start|>NAME\\n<|tool_arg:start|>K<|tool_arg:value|>V<|tool_arg:end|>\\n
  <|tool_call:end|>`, one block per call;
- iQuest Coder V2: `<iquestcoder_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>
  </iquestcoder_tool_call>` (GLM's body in its own tag);
- K2 Horizon (IFM): `<ifm|tool_calls><ifm|tool_call>NAME<ifm|arg_key>K</ifm|arg_key>
  [<ifm|arg_type>T</ifm|arg_type>]<ifm|arg_value>V</ifm|arg_value></ifm|tool_call></ifm|tool_calls>`,
  or a JSON `{"name": N, "arguments": {…}}` inside `<ifm|tool_call>`.

A value ends at its closing tag followed by the next tag of the structure (`fmt_xml.value_end`),
so a file's content may itself hold the closing tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..calls import ToolCall
from .core import Found, Scan
from .fmt_json import json_calls, mentioned
from .fmt_xml import value_end

_NAME = re.compile(r"[ \t]*([^\s<>{}\[\]]+)[ \t]*")


@dataclass(frozen=True)
class KeyValue:
    """The tags of one key/value family. `key` matches from a key's opening tag to where its
    value starts (group 1 the key); `wrapper` is a tag around all calls, if the family has one."""

    source: str
    call_open: str
    call_close: str
    key_open: str
    key: re.Pattern[str]
    value_close: str
    wrapper: tuple[str, str] | None = None
    name_ends_line: bool = False  # Solar: the name is the rest of the opening line
    sentinels: bool = False  # Solar: tags are special tokens, so a value ends at the first one


def _key(open_: str, close: str, typed: tuple[str, str] | None, value: str) -> re.Pattern[str]:
    kind = rf"(?:{re.escape(typed[0])}[^<]*{re.escape(typed[1])}\s*)?" if typed else ""
    return re.compile(rf"\s*{re.escape(open_)}\s*([^<\n]*?)\s*{re.escape(close)}\s*{kind}{re.escape(value)}")


SOLAR = KeyValue(
    "solar_open2",
    "<|tool_call:start|>",
    "<|tool_call:end|>",
    "<|tool_arg:start|>",
    re.compile(r"\s*<\|tool_arg:start\|>\s*([^<\n]*?)\s*<\|tool_arg:value\|>"),
    "<|tool_arg:end|>",
    name_ends_line=True,
    sentinels=True,
)
IQUEST = KeyValue(
    "iquest_coder_v2",
    "<iquestcoder_tool_call>",
    "</iquestcoder_tool_call>",
    "<arg_key>",
    _key("<arg_key>", "</arg_key>", None, "<arg_value>"),
    "</arg_value>",
)
K2_HORIZON = KeyValue(
    "k2_horizon",
    "<ifm|tool_call>",
    "</ifm|tool_call>",
    "<ifm|arg_key>",
    _key("<ifm|arg_key>", "</ifm|arg_key>", ("<ifm|arg_type>", "</ifm|arg_type>"), "<ifm|arg_value>"),
    "</ifm|arg_value>",
    wrapper=("<ifm|tool_calls>", "</ifm|tool_calls>"),
)
FAMILIES = {f.call_open: f for f in (SOLAR, IQUEST, K2_HORIZON)}
WRAPPERS = {f.wrapper[0]: f for f in FAMILIES.values() if f.wrapper}


def handler(scan: Scan, pos: int) -> Found | None:
    """A block of one of the families above, starting at its call tag or wrapper tag."""
    family = next((f for o, f in {**FAMILIES, **WRAPPERS}.items() if scan.text.startswith(o, pos)), None)
    if family is None:
        return None
    at = pos
    if family.wrapper and scan.text.startswith(family.wrapper[0], pos):
        at = scan.skip_space(pos + len(family.wrapper[0]))
        if not scan.text.startswith(family.call_open, at):
            return scan.pending(pos) if scan.partial and scan.only_space_after(at) else None
    body = at + len(family.call_open)
    if mentioned(scan, at, scan.skip_space(body)):
        return None  # "…Solar opens a call with <|tool_call:start|> and…": talk about the tag
    if scan.find(family.call_close, body) < 0:
        if scan.partial:
            return scan.pending(pos)
        if scan.find(family.key_open, body, min(scan.end, body + 200)) < 0:
            return None  # an opening tag with neither arguments nor an end: not a block
        problem = f"the call was cut off before {family.call_close}"
        return scan.error_span(pos, scan.end, family.source, problem)
    calls: list[ToolCall] = []
    i = at
    while scan.text.startswith(family.call_open, i):
        found = _one_call(scan, i, family)
        if found is None:
            return scan.pending(pos)
        calls.extend(found.calls)
        i = scan.skip_space(found.end)
    end = i
    if family.wrapper and scan.text.startswith(family.wrapper[1], i):
        end = i + len(family.wrapper[1])
    elif scan.partial and scan.only_space_after(i):
        return scan.pending(pos)  # another call or the wrapper's end may follow
    return scan.span(pos, end, family.source, calls)


def _one_call(scan: Scan, pos: int, family: KeyValue) -> Found | None:
    """One call tag from `pos` to after its closing tag; None while streaming and unfinished."""
    text = scan.text
    body = pos + len(family.call_open)
    first = scan.skip_space(body)
    if text.startswith("{", first):
        found = json_calls(scan, pos, first, family.source, family.call_close, marker=family.call_open)
        return None if found.pending else found
    name = _NAME.match(text, body, scan.end)
    if name is None or (family.name_ends_line and not text.startswith("\n", name.end())):
        abandoned = _abandoned(scan, family, body)
        if abandoned is not None:
            return scan.span(pos, abandoned, family.source, [])
        if text.startswith(family.call_close, first):
            return scan.error_span(pos, first + len(family.call_close), family.source, "the call has no name")
        end = scan.error_end(body, family.call_close)
        if end is None:
            return None
        return scan.error_span(pos, end, family.source, "expected the tool name after the tag")
    values: dict[str, str] = {}
    i = name.end()
    while (key := family.key.match(text, i, scan.end)) is not None:
        followers = (family.key_open, family.call_close, family.call_open)
        if family.sentinels:
            bounds = _sentinel_end(scan, key.end(), (family.value_close, *followers))
        else:
            bounds = value_end(scan, key.end(), family.value_close, followers)
        if bounds is None:
            return None
        values.setdefault(key.group(1), text[key.end() : bounds[0]])  # the first value wins
        i = bounds[1]
    after = scan.skip_space(i)
    if text.startswith(family.call_close, after):
        i = after + len(family.call_close)
    elif scan.partial:
        return None
    if not values and scan.builder.known(name.group(1)) is None and _next_call(scan, family, i):
        return scan.span(pos, i, family.source, [])  # `get_weat` or `oops`, then the real call
    call = scan.builder.typed(name.group(1), values, family.source, text[pos:i])
    return scan.span(pos, i, family.source, [call])


def _next_call(scan: Scan, family: KeyValue, pos: int) -> bool:
    """Whether another call tag of the family follows `pos`, after spaces (and after the end of
    one wrapper and the start of the next)."""
    at = scan.skip_space(pos)
    if family.wrapper and scan.text.startswith(family.wrapper[1], at):
        at = scan.skip_space(at + len(family.wrapper[1]))
    if family.wrapper and scan.text.startswith(family.wrapper[0], at):
        at = scan.skip_space(at + len(family.wrapper[0]))
    return scan.text.startswith(family.call_open, at)


def _abandoned(scan: Scan, family: KeyValue, body: int) -> int | None:
    """Where a call tag's body that holds no name line and no argument ends, when another call
    tag follows it: the model restarted the call (`<tag>get_weat<tag>get_weather…`) or left an
    empty block before the real one (`<tag>oops<close><tag>…`). vLLM drops such a fragment;
    an error call for it would shadow the call that follows. None when it is not abandoned."""
    stops = [family.call_open, family.call_close, family.key_open, *(family.wrapper or ())[:1]]
    found = [(at, stop) for stop in stops if (at := scan.find(stop, body)) >= 0]
    if not found:
        return None
    at, stop = min(found)
    if stop == family.key_open:
        return None
    if stop == family.call_close:
        at += len(stop)
        return at if _next_call(scan, family, at) else None
    return at


def _sentinel_end(scan: Scan, start: int, stops: tuple[str, ...]) -> tuple[int, int] | None:
    """(value end, position after it) where the first of `stops` begins; the value's own closer
    (`stops[0]`) is consumed, another tag is left for the next step. None while streaming and
    no tag has come yet."""
    found = [(at, stop) for stop in stops if (at := scan.find(stop, start)) >= 0]
    if not found:
        return None if scan.partial else (scan.end, scan.end)
    at, stop = min(found)
    return at, at + len(stop) if stop == stops[0] else at
