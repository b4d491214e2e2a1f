"""The shared state of one scan over a reply, and what a format parser reports back (`Found`).

A format parser (a "handler") is called at the position where its marker starts and returns a
`Found` span, or None when the text there is not what it parses. Spans are consumed left to right,
so whatever lies inside one (a `<tool_call>` inside a write's content, a marker inside a code
block) is never looked at again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..calls import ToolCall
from .building import Builder
from .jsonscan import REPAIR_LIMIT, Scanned, loads_fast, loads_repaired, scan_value

Kind = Literal["call", "reasoning", "noise", "mask"]
_NON_SPACE = re.compile(r"\S")
_SPACE = re.compile(r"\s*")


@dataclass
class Found:
    """A span of the reply. Calls and reasoning and noise are removed from the prose; a mask (code,
    quotes, tables, diffs) stays in the prose but nothing inside it is a call. `pending` (partial
    scans only) means the span may still grow or change as more text arrives; `resume` marks an
    unclosed shown code block (the pattern of its closing fence)."""

    start: int
    end: int
    kind: Kind = "call"
    source: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    pending: bool = False
    resume: re.Pattern[str] | None = None


class Scan:
    """One pass over `text`. `partial` is True while the reply is still streaming: a construct
    that runs into the end of the text is then reported as pending instead of being decided."""

    SCAN_BUDGET_FACTOR = 1
    # Calls read from one reply. More is a runaway reply, not a plan; and without a cap a reply
    # made of thousands of broken calls would cost seconds to read and flood the history.
    MAX_CALLS = 64
    # Broken bodies handed to json-repair per reply: each costs about a millisecond, and a reply
    # with more broken calls than this is a runaway, not a plan worth repairing call by call.
    MAX_REPAIRS = 16

    def __init__(self, text: str, builder: Builder, partial: bool = False) -> None:
        self.text = text
        self.builder = builder
        self.partial = partial
        self.end = len(text)
        self.floor = 0  # nothing before this may be claimed (it belongs to an earlier span)
        self.code_floor = 0  # inline code pairs from here: the end of the last span
        self.in_fence = False  # walking the inside of a fenced block
        # Bracket scans that run into the end of the text are capped in total to stay linear.
        self.budget = self.SCAN_BUDGET_FACTOR * len(text) + 100_000
        self.repair_budget = REPAIR_LIMIT  # characters json-repair may be given in this scan
        self.repairs_left = self.MAX_REPAIRS
        self.calls_left = self.MAX_CALLS
        self._line_cache = (-1, -1)
        self._line_start_cache = (-1, -1)
        self._found: dict[tuple[str, int], tuple[int, int]] = {}
        self.code_state: list[int] = [-1, -1, -1, -1, -1]  # see masks._code_span_at
        self.walk: Callable[[int, int], list[Found]] = lambda start, end: []

    # -- small text helpers shared by the format parsers -------------------------------------
    def skip_space(self, pos: int) -> int:
        m = _SPACE.match(self.text, pos, self.end)
        return m.end() if m else pos

    def only_space_after(self, pos: int) -> bool:
        return _NON_SPACE.search(self.text, pos, self.end) is None

    def unfinished(self, pos: int, tokens: tuple[str, ...]) -> bool:
        """While streaming: the text from `pos` is empty or one of `tokens` still being written
        (`<param` of `<parameter=`, or `<parameter=pa` before its `>`)."""
        if not self.partial:
            return False
        at = self.skip_space(pos)
        rest = self.text[at : min(self.end, at + 80)]
        if at + 80 < self.end or ">" in rest:
            return not rest
        return not rest or any(t.startswith(rest) or rest.startswith(t) for t in tokens)

    def error_end(self, pos: int, close: str | None) -> int | None:
        """Where a block that cannot be read ends: after its closing tag, else at the end of the
        line. None while streaming and the closing tag has not come yet."""
        found = self.find(close, pos) if close else -1
        if found >= 0:
            return found + len(close or "")
        return None if self.partial and close else self.line_end(pos)

    def line_end(self, pos: int) -> int:
        """Index of the newline ending the line that holds `pos` (or the scan end); cached so
        many markers on one long line stay linear."""
        start, end = self._line_cache
        if start <= pos < end:
            return end
        nl = self.text.find("\n", pos, self.end)
        end = self.end if nl < 0 else nl
        self._line_cache = (pos, end)
        return end

    def at_line_start(self, pos: int) -> bool:
        return pos == 0 or self.text[pos - 1] == "\n"

    def line_bounds(self, pos: int) -> tuple[int, int]:
        """(start, end) of the line holding `pos`; cached like `line_end`."""
        end = self.line_end(pos)
        start, cached_end = self._line_start_cache
        if cached_end != end or start > pos:
            start = self.text.rfind("\n", 0, pos) + 1
            self._line_start_cache = (start, end)
        return start, end

    def find(self, needle: str, start: int, limit: int | None = None) -> int:
        """str.find, remembering the last answer per needle so that repeated searches for a
        closing tag that never comes stay linear."""
        if limit is not None:
            return self.text.find(needle, start, limit)
        key = (needle, self.end)
        lo, at = self._found.get(key, (len(self.text) + 1, -1))
        if lo <= start and (at < 0 or start <= at):
            return at
        at = self.text.find(needle, start, self.end)
        self._found[key] = (start, at)
        return at

    def scan_json(self, pos: int) -> Scanned:
        """`scan_value` from `pos`, charged to the budget. Once the budget is spent (text full of
        brackets that never close), values count as unterminated and parsers fall back to their
        closing tags, which keeps the whole scan linear. One scan never runs past what is left,
        so all of them together read at most the budget."""
        if self.budget <= 0:
            return Scanned(self.end, False)
        limit = min(self.end, pos + self.budget)
        scanned = scan_value(self.text, pos, limit)
        self.budget -= scanned.end - pos
        if limit < self.end and not scanned.closed and scanned.end >= limit:
            return Scanned(self.end, False)  # stopped by the budget: as if it never closed
        return scanned

    def value(self, raw: str) -> Any:
        """A parameter's value: its JSON when it is JSON, else the text as it stands."""
        try:
            return self.decode(raw)
        except ValueError:
            return raw

    def decode(self, body: str) -> Any:
        """`loads_lenient` with json-repair (slow) rationed per scan: a reply full of broken
        JSON gets error calls instead of seconds of repair work."""
        try:
            return loads_fast(body)
        except ValueError:
            if len(body) > self.repair_budget or self.repairs_left <= 0:
                raise ValueError("malformed JSON (too much to repair in one reply)") from None
            self.repair_budget -= len(body)
            self.repairs_left -= 1
            return loads_repaired(body)

    def spend(self, chars: int) -> bool:
        """Charge an ambiguous guess; False once the budget is gone."""
        self.budget -= chars
        return self.budget > 0

    # -- results ----------------------------------------------------------------------------
    def span(self, start: int, end: int, source: str, calls: list[ToolCall]) -> Found:
        return Found(start, end, "call", source, calls)

    def error_span(self, start: int, end: int, source: str, problem: str, name: str | None = None) -> Found:
        call = self.builder.error(source, problem, self.text[start:end], name)
        return Found(start, end, "call", source, [call])

    def count(self, found: Found, end: int) -> Found:
        """Charge a call span to `calls_left`. Past the cap, the calls over it are dropped and
        the rest of the text (to `end`) becomes one span whose error call says so."""
        if len(found.calls) <= self.calls_left:
            self.calls_left -= len(found.calls)
            return found
        kept = found.calls[: max(self.calls_left, 0)]
        self.calls_left = -1
        rest = self.builder.too_many(self.text[found.start : end], self.MAX_CALLS)
        return Found(found.start, end, "call", found.source, [*kept, rest], self.partial)

    def pending(self, start: int) -> Found:
        return Found(start, self.end, "call", "", [], pending=True)


Handler = Callable[[Scan, int], "Found | None"]
