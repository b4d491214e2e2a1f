"""Formats whose calls are JSON objects: our `TOOL_CALL:` block, Hermes/Qwen `<tool_call>{…}`,
Mistral `[TOOL_CALLS]`, Llama 3 JSON, the tagged relatives (jamba, granite, internlm, phi-4,
apertus, gigachat, longcat) and bare JSON objects or arrays on a line of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..calls import ToolCall
from .building import NO_CALL
from .core import Found, Scan
from .fmt_python import pythonic_span
from .masks import fence_at
from .reasoning import LONE_CLOSERS

ToCalls = Callable[[Scan, Any, str, str], list[ToolCall]]
_TOOL_CALL = re.compile(r"TOOL_CALL\s*:(?:\*\*|__)?\s*")
_SEPARATOR = re.compile(r"[\s,;]*")
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
_QUICK_CALL_OBJECT = re.compile(r"""\{\s*["']?(?:name|function|tool|tool_name|type|action)["']?\s*:""")
_QUICK_CALL_ARRAY = re.compile(r"""\[\s*\{\s*["']?(?:name|function|tool|tool_name|type|action)["']?\s*:""")


def objects_to_calls(scan: Scan, value: Any, source: str, raw: str) -> list[ToolCall]:
    """Calls from an explicit format's decoded value: one object or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not items:
        return [scan.builder.error(source, "the call list is empty", raw)]
    items = items[: max(scan.calls_left, 0) + 1]  # one past the cap is enough for `Scan.count`
    calls = [scan.builder.from_object(item, source, raw) for item in items]
    return [c for c in calls if c is not None]


def keyed(scan: Scan, value: Any, source: str, raw: str) -> list[ToolCall]:
    """Apertus writes `[{"read": {"path": …}}]`: the name is the only key."""
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if isinstance(item, dict) and len(item) == 1 and "name" not in item:
            ((name, args),) = item.items()
            calls.append(scan.builder.call(name, args, source, raw))
        else:
            calls.extend(objects_to_calls(scan, item, source, raw))
    return calls


def json_calls(
    scan: Scan,
    start: int,
    body: int,
    source: str,
    close: str | None = None,
    to_calls: ToCalls = objects_to_calls,
    marker: str | None = None,
) -> Found:
    """The JSON value(s) at `body` (after a marker starting at `start`) as a call span, ending
    after `close` when that follows. Unterminated JSON runs to the first `close` (or the next
    `marker`, or the end) and is repaired; what cannot be read becomes an error call."""
    text = scan.text
    if body >= scan.end:
        return (
            scan.pending(start)
            if scan.partial
            else scan.error_span(start, scan.end, source, "no JSON after the marker")
        )
    if text[body] not in "{[":
        end = scan.error_end(body, close)
        if end is None:
            return scan.pending(start)
        return scan.error_span(start, end, source, "expected a JSON object after the marker")
    collected = _json_values(scan, body, close, marker)
    if collected is None:
        return scan.pending(start)
    values, i = collected
    end = _close_after(scan, i, close)
    if end is None and close and scan.unfinished(i, (close,)):
        return scan.pending(start)
    end = end or i
    raw = text[start:end]
    calls: list[ToolCall] = []
    for chunk in values:
        try:
            decoded = scan.decode(chunk)
        except ValueError as exc:
            calls.append(scan.builder.error(source, f"the JSON could not be read ({exc})", raw))
            continue
        calls.extend(to_calls(scan, decoded, source, raw))
    return scan.span(start, end, source, calls)


def _json_values(
    scan: Scan, body: int, close: str | None, marker: str | None
) -> tuple[list[str], int] | None:
    """The JSON value texts from `body` (several may follow each other) and where they end;
    None while streaming and they may not be complete."""
    text = scan.text
    values: list[str] = []
    i = body
    while i < scan.end and text[i] in "{[":
        scanned = scan.scan_json(i)
        if not scanned.closed:
            limit = _fallback_limit(scan, i, close, marker)
            if limit is None:
                return None
            values.append(text[i:limit])
            return values, limit
        values.append(text[i : scanned.end])
        i = scanned.end
        nxt = _SEPARATOR.match(text, i, scan.end)
        if nxt is not None and nxt.end() >= scan.end and nxt.end() > i and scan.partial:
            return None  # a separator at the end: another value may follow
        if nxt is None or nxt.end() >= scan.end or text[nxt.end()] not in "{[":
            break
        if close and text.startswith(close, nxt.end()):
            break  # Pangu's `[unused12]` closer looks like an array
        i = nxt.end()
    return values, i


def _close_after(scan: Scan, pos: int, close: str | None) -> int | None:
    """End of `close` if it follows `pos` (after blanks, or after junk up to the next opener)."""
    if not close:
        return None
    at = scan.skip_space(pos)
    if scan.text.startswith(close, at):
        return at + len(close)
    found = scan.find(close, pos, scan.line_end(pos))
    return found + len(close) if found >= 0 else None


def _fallback_limit(scan: Scan, pos: int, close: str | None, marker: str | None) -> int | None:
    """Where a body whose brackets never close ends: the closing tag, the next marker, the end.
    None while streaming: the brackets may still close (a marker seen now may be inside a string)."""
    if scan.partial:
        return None
    for needle in (close, marker):
        if needle:
            found = scan.find(needle, pos + 1)
            if found >= 0:
                return found
    return scan.end


# -- the handlers ------------------------------------------------------------------------------


def tool_call_block(scan: Scan, pos: int) -> Found | None:
    """Our own `TOOL_CALL: {"name": …, "args": {…}}`, optionally in a code fence, or
    `TOOL_CALL: read(path="a.py")`."""
    m = _TOOL_CALL.match(scan.text, pos, scan.end)
    if m is None:
        return None
    body = m.end()
    if NO_CALL.match(scan.text, body, scan.end):
        return None  # "TOOL_CALL: none needed, the answer is 42."
    if pos - 2 >= scan.floor and scan.text.startswith(("**", "__"), pos - 2):
        pos -= 2  # **TOOL_CALL:** in Markdown bold: the marker is all of it
    fence = fence_at(scan, body) if scan.text.startswith(("```", "~~~"), body) else None
    if fence is not None:
        if not fence.closed and scan.partial:
            return scan.pending(pos)
        inner = scan.skip_space(fence.body_start)
        found = json_calls(scan, pos, inner, "tool_call_block", marker="TOOL_CALL")
        return scan.span(pos, max(found.end, fence.end), "tool_call_block", found.calls)
    if _NAME.match(scan.text, body) and not scan.text.startswith(("{", "["), body):
        found_py = pythonic_span(scan, pos, body, "tool_call_block")
        if found_py is not None:
            return found_py
        if not _at_line_start(scan, pos):
            return None  # "…reply with TOOL_CALL: and then…": talk about the format, not a call
    return json_calls(scan, pos, body, "tool_call_block", marker="TOOL_CALL")


def _at_line_start(scan: Scan, pos: int) -> bool:
    line, _ = scan.line_bounds(pos)
    return pos - line < 8 and not scan.text[line:pos].strip(" \t*>-")


def mentioned(scan: Scan, pos: int, body: int) -> bool:
    """A marker named in a sentence (`Llama 3 emits <|python_tag|> before its JSON`): words on
    both sides of it, no call after it."""
    if body >= scan.end or scan.text[body] in "{[<" or not scan.text[body - 1].isspace():
        return False
    line, _ = scan.line_bounds(pos)
    return bool(scan.text[line:pos].strip())


def tagged(marker: str, close: str | None, source: str, to_calls: ToCalls = objects_to_calls) -> Callable:
    """A handler for `MARKER {json}… CLOSE` formats."""

    def handler(scan: Scan, pos: int) -> Found | None:
        if not scan.text.startswith(marker, pos):
            return None
        body = scan.skip_space(pos + len(marker))
        if mentioned(scan, pos, body):
            return None
        return json_calls(scan, pos, body, source, close, to_calls, marker)

    return handler


def tool_calls(scan: Scan, pos: int) -> Found | None:
    """`<tool_calls>[{…}]</tool_calls>` (Jamba, Hunyuan-A13B), one JSON object per line (MiniMax-M1),
    or a wrapper around `<tool_call>` tags (Hunyuan v3/v4): then only the opener is dropped here."""
    body = scan.skip_space(pos + len("<tool_calls>"))
    if scan.text.startswith("<tool_call>", body):
        return Found(pos, body, "noise")
    if scan.partial and scan.end - body < len("<tool_call>") and "<tool_call>".startswith(scan.text[body:]):
        return scan.pending(pos)
    return json_calls(scan, pos, body, "jamba", "</tool_calls>", marker="<tool_calls>")


def inline_json(scan: Scan, pos: int) -> Found | None:
    """A call object inside a line of prose (`Here it is: {"name": "read", …} Want more?`), or a
    `;`-separated Llama 3 list, or an xLAM array right after `</think>`: known tools only."""
    line, _ = scan.line_bounds(pos)
    if scan.at_line_start(pos):
        return None  # the line-start rule has already decided
    before = scan.text[max(line, pos - 200) : pos]
    if (scan.text[pos] == "[" or before.rstrip().endswith(("[", ","))) and not before.rstrip().endswith(
        LONE_CLOSERS
    ):
        return None  # an array in a sentence is talk about one (xLAM's come after </think>)
    if _EXAMPLE_CUE.search(before):
        return None  # "…looks like {"name": …}", "the last call was {…}": not a call now
    return bare_json(scan, pos)


_EXAMPLE_CUE = re.compile(
    r"\b(?:e\.g\.|i\.e\.|for example|for instance|such as|format|formats|example|syntax|"
    r"schema|shape|looks?|written as|writes?|emits?|outputs?|returns?|is not|"
    r"was|were|previous|previously|earlier|already)(?!\w)[^.!?]*\Z",
    re.I,
)


def hermes_json(scan: Scan, pos: int, body: int) -> Found:
    return json_calls(scan, pos, body, "hermes", "</tool_call>", marker="<tool_call>")


def mistral(scan: Scan, pos: int) -> Found | None:
    """`[TOOL_CALLS][{…}]` (before v11) or `[TOOL_CALLS]name[ARGS]{…}` / `[TOOL_CALLS]name{…}`."""
    body = scan.skip_space(pos + len("[TOOL_CALLS]"))
    if body < scan.end and scan.text[body] in "{[":
        return json_calls(scan, pos, body, "mistral", marker="[TOOL_CALLS]")
    stray = _STRAY.match(scan.text, body, scan.end)
    if stray is not None and not mentioned(scan, pos, body) and _EXAMPLE_CUE.search(stray.group()) is None:
        return json_calls(scan, pos, stray.end(), "mistral", marker="[TOOL_CALLS]")
    return _named_args(scan, pos, body, "mistral", explicit=True)


# A stray word or two between `[TOOL_CALLS]` and its call list (`[TOOL_CALLS] junk [{"name": …`).
_WORD = r"[^\s\[\]{}]{1,24}"
_STRAY = re.compile(
    _WORD + r"(?:[ \t]+" + _WORD + r"){0,2}[ \t]*\n?[ \t]*(?=" + _QUICK_CALL_ARRAY.pattern + ")"
)


_CALL_ID = re.compile(r"\s*\[CALL_ID\]\s*\w*")
_ARGS = re.compile(r"\s*(?:\[ARGS\])?\s*")


def _named_args(scan: Scan, pos: int, at: int, source: str, explicit: bool) -> Found | None:
    """`name[ARGS]{…}` / `name{…}` starting at `at`; in a bare (ambiguous) spot the name must be
    a known tool and the arguments must be a JSON object."""
    text = scan.text
    name = _NAME.match(text, at, scan.end)
    if name is None:
        if scan.partial and scan.only_space_after(at):
            return scan.pending(pos)
        if explicit and (scan.only_space_after(at) or text.startswith("[ARGS]", at)):
            return scan.error_span(pos, scan.line_end(at), source, "expected a tool name after [TOOL_CALLS]")
        return _junk_marker(scan, pos, at, explicit)
    if not explicit and scan.builder.known(name.group()) is None:
        return None
    i = name.end()
    call_id = _CALL_ID.match(text, i, scan.end)
    i = call_id.end() if call_id else i
    marked = _ARGS.match(text, i, scan.end)
    i = marked.end()  # type: ignore[union-attr]
    if i >= scan.end or text[i] != "{":
        if scan.partial and (i >= scan.end or scan.line_end(i) >= scan.end):
            return scan.pending(pos)  # `[ARGS]{` or the rest of the line may still come
        meant = call_id is not None or "[ARGS]" in marked.group()  # type: ignore[union-attr]
        if not explicit or not (meant or _alone(scan, name.end(), name.group())):
            return _junk_marker(scan, pos, at, explicit)
        return scan.error_span(
            pos, scan.line_end(i), source, "expected JSON arguments after the name", name.group()
        )
    scanned = scan.scan_json(i)
    if not scanned.closed and scan.partial:
        return scan.pending(pos)
    end = scanned.end if scanned.closed else _fallback_limit(scan, i, None, "[TOOL_CALLS]") or scan.end
    raw = text[pos:end]
    try:
        args = scan.decode(text[i:end])
    except ValueError as exc:
        if not explicit:
            return None
        return scan.error_span(pos, end, source, f"the JSON could not be read ({exc})", name.group())
    return scan.span(pos, end, source, [scan.builder.call(name.group(), args, source, raw)])


def _alone(scan: Scan, end: int, name: str) -> bool:
    """`[TOOL_CALLS]read` and nothing after it on the line: a call whose arguments are missing."""
    return scan.builder.known(name) is not None and not scan.text[end : scan.line_end(end)].strip()


def _junk_marker(scan: Scan, pos: int, at: int, explicit: bool) -> Found | None:
    """`[TOOL_CALLS]` followed by words, not a call: the token is dropped and the words stay."""
    return Found(pos, at, "noise") if explicit else None


def mistral_bare(scan: Scan, pos: int) -> Found | None:
    """The Mistral form with its control tokens stripped: `read{"path": …}` on its own line."""
    return _named_args(scan, pos, scan.skip_space(pos), "mistral", explicit=False)


def bare_json(scan: Scan, pos: int) -> Found | None:
    """A line that starts a JSON object or array of call objects naming known tools: Llama 3
    JSON, Hermes with its tags stripped, Mistral/xLAM arrays. Several objects may follow each
    other, separated by `;` (Llama) or newlines."""
    text = scan.text
    at = scan.skip_space(pos)
    if at >= scan.end:
        return None
    quick = _QUICK_CALL_OBJECT if text[at] == "{" else _QUICK_CALL_ARRAY
    if quick.match(text, at, scan.end) is None:
        unfinished = scan.partial and scan.end - at < 40  # `{\n  "na` may still become a call
        return scan.pending(pos) if unfinished and _could_become(text[at : scan.end]) else None
    calls: list[ToolCall] = []
    span_end = pos
    source = "json_array" if text[at] == "[" else "llama_json"
    while True:
        scanned = scan.scan_json(at)
        if not scanned.closed:
            if scan.partial and scanned.end >= scan.end:
                return scan.pending(pos)
            break
        found = _bare_calls(scan, text[at : scanned.end], source)
        if found is None:
            break
        calls.extend(found)
        span_end = scanned.end
        at = _LLAMA_SEPARATOR.match(text, span_end, scan.end).end()  # type: ignore[union-attr]
        if at >= scan.end and scan.partial:
            return scan.pending(pos)  # another `; {…}` may follow
        if at >= scan.end or text[at] != "{":
            break
    return scan.span(pos, span_end, source, calls) if calls else None


_LLAMA_SEPARATOR = re.compile(r"[ \t]*;?\s*")
_CALL_KEYS = ("name", "function", "tool", "tool_name", "type", "action")
_CALL_HEADS = tuple(o + q + k + q + ":" for o in ("{", "[{") for q in "\"'" for k in _CALL_KEYS)


def _could_become(head: str) -> bool:
    """A short unfinished line like `{"na` might still become a call object."""
    squeezed = re.sub(r"\s+", "", head)
    return any(h.startswith(squeezed) for h in _CALL_HEADS)


def _bare_calls(scan: Scan, body: str, source: str) -> list[ToolCall] | None:
    """Calls when every object in the value names a known tool with arguments, else None."""
    try:
        value = scan.decode(body)
    except ValueError:
        return None
    items = value if isinstance(value, list) else [value]
    calls = [scan.builder.from_object(item, source, body, explicit=False) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]
