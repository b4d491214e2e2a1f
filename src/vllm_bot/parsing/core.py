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
from typing import Literal

from ..calls import ToolCall
from .building import Builder

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

    AMBIGUOUS_BUDGET_FACTOR = 4

    def __init__(self, text: str, builder: Builder, partial: bool = False) -> None:
        self.text = text
        self.builder = builder
        self.partial = partial
        self.end = len(text)
        self.floor = 0  # nothing before this may be claimed (it belongs to an earlier span)
        # Bare-JSON guesses may scan ahead and fail; their total work is capped to stay linear.
        self.budget = self.AMBIGUOUS_BUDGET_FACTOR * len(text) + 100_000
        self._line_cache = (-1, -1)
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

    def find(self, needle: str, start: int, limit: int | None = None) -> int:
        return self.text.find(needle, start, self.end if limit is None else limit)

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

    def pending(self, start: int) -> Found:
        return Found(start, self.end, "call", "", [], pending=True)


Handler = Callable[[Scan, int], "Found | None"]
