"""JSON-aware scanning and forgiving decoding of the JSON that models write.

The scanner knows strings and escapes, so a `</tool_call>` or `}` inside a string value never ends a
block, and it runs in C-speed regex steps (a 1 MB string is one step). Decoding tries, in order:
strict JSON (raw newlines allowed), the same with the missing closers appended, a one-pass
token fix (trailing commas, Python literals, single-quoted strings), and finally `json-repair`
for what is left (it is thorough but slow, so only for bodies of modest size).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_DQ_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SQ_STRING = re.compile(r"'[^'\\]*(?:\\.[^'\\]*)*'", re.S)
# Text without brackets, and whole quoted strings, in one C-speed step: the scan loop then runs
# once per bracket, not once per string (several times faster on text full of short strings).
_NEUTRAL = re.compile(r"(?:[^\"'{}\[\]()]+|" + _DQ_STRING.pattern + "|" + _SQ_STRING.pattern + ")*", re.S)
_CLOSER = {"{": "}", "[": "]", "(": ")"}

# json-repair is a pure-Python character loop (several seconds per MB); larger bodies get the
# fast repairs only.
REPAIR_LIMIT = 200_000


@dataclass
class Scanned:
    """Where a bracketed value starting at `start` ends. `closed` is False when the text ran out
    (then `end` is the limit and `closers` is what would close it) or a bracket did not match."""

    end: int
    closed: bool
    closers: str = ""
    in_string: str = ""  # the quote character of a string still open at the end


def scan_value(text: str, start: int, limit: int | None = None) -> Scanned:
    """Find the end of the `{…}`, `[…]` or `(…)` value at `start`, skipping quoted strings."""
    stop = len(text) if limit is None else limit
    stack: list[str] = []
    neutral = _NEUTRAL.match
    i = start
    while True:
        i = neutral(text, i, stop).end()  # type: ignore[union-attr]  # it matches the empty string
        if i >= stop:
            return Scanned(stop, False, "".join(_CLOSER[c] for c in reversed(stack)))
        ch = text[i]
        if ch in "{[(":
            stack.append(ch)
        elif ch in "\"'":  # a quote _NEUTRAL could not skip: the string never closes
            closers = "".join(_CLOSER[c] for c in reversed(stack))
            return Scanned(stop, False, closers, in_string=ch)
        elif not stack or _CLOSER[stack.pop()] != ch:
            return Scanned(i, False)
        i += 1
        if not stack:
            return Scanned(i, True)


_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'  # JSON string: kept as is
    r"|'[^'\\]*(?:\\.[^'\\]*)*'"  # Python string: re-quoted
    r"|,(?=\s*[}\]])"  # trailing comma: dropped
    r"|\b(?:True|False|None)\b",  # Python literal: translated
    re.S,
)
_PY_LITERAL = {"True": "true", "False": "false", "None": "null"}


def _fix_token(m: re.Match[str]) -> str:
    tok = m.group()
    if tok[0] == '"':
        return tok
    if tok[0] == "'":
        inner = tok[1:-1].replace("\\'", "'").replace('"', '\\"')
        return '"' + inner + '"'
    if tok == ",":
        return ""
    return _PY_LITERAL[tok]


def fix_tokens(body: str) -> str:
    """One JSON-aware pass: drop trailing commas, translate True/False/None, re-quote '…' strings."""
    return _TOKEN.sub(_fix_token, body)


def _strict(body: str) -> Any:
    return json.loads(body, strict=False)


def loads_lenient(body: str) -> Any:
    """Decode model-written JSON, repairing what a forgiving reader can; ValueError if hopeless."""
    try:
        return loads_fast(body)
    except ValueError:
        return loads_repaired(body)


def loads_fast(body: str) -> Any:
    """The cheap stages of `loads_lenient` (all C-speed); ValueError when they are not enough."""
    text = body.strip()
    if not text:
        raise ValueError("empty")
    try:
        return _strict(text)
    except ValueError:
        pass
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    attempts = [text]
    if text[0] in "{[":
        scanned = scan_value(text, 0)
        if scanned.closed and scanned.end < len(text):
            attempts.insert(0, text[: scanned.end])  # trailing junk after a complete value
        elif not scanned.closed and scanned.end == len(text):
            attempts.append(text + scanned.in_string + scanned.closers)
    for attempt in attempts:
        for candidate in (attempt, fix_tokens(attempt)):
            try:
                return _strict(candidate)
            except ValueError:
                continue
            except RecursionError as exc:
                raise ValueError("nested too deeply") from exc
    raise ValueError("not valid JSON")


def loads_repaired(body: str) -> Any:
    """json-repair's reading of `body` (slow: used after `loads_fast` failed)."""
    text = body.strip()
    if len(text) > REPAIR_LIMIT:
        raise ValueError(f"malformed JSON too large to repair ({len(text)} characters)")
    import json_repair  # deferred: only needed for broken output

    try:
        value = json_repair.loads(text)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    if value == "" or value is None:
        raise ValueError("no JSON value found")
    return value
