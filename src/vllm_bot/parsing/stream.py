"""What the terminal may print while a reply streams, so raw call syntax never shows as answer.

`StreamFilter` runs the same scan as `parse_tool_calls` over the text that is not decided yet,
in "partial" mode: anything that may still become a call (an open `<tool_call>`, a line that
starts like `{"name"`, a half-written marker such as `<tool_`) or a reasoning block is held back;
prose before it is released. Decided text is dropped from the buffer, and while something is held
the scan is repeated only after the held text grew by a sixteenth, so streaming stays linear.
The final calls always come from `parse_tool_calls` on the whole reply.
"""

from __future__ import annotations

import re
from typing import Any

from .core import Found, Scan
from .reasoning import CLOSE_RE, LONE_CLOSERS, PAIRS
from .walker import NOISE_TOKENS, builder_for, find_spans, prose

CALL_MARKERS = (
    "TOOL_CALL:", "<tool_call>", "<tool_calls>", "<longcat_tool_call>", "<|tool_call|>",
    "<|tool_call>", "<start_function_call>", "<function=", "<seed:tool_call>", "[TOOL_CALLS]",
    "<|python_tag|>", "<function_call>", "<|action_start|>", "functools[", "<|tools_prefix|>",
    "<|function_call|>", "function call<|role_sep|>", "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>", "<｜tool_calls_begin｜>", "<｜tool_call_begin｜>",
    "<|tool_calls_section_begin|>", "<|tool_call_section_begin|>", "<|tool_call_begin|>",
    "functions.", "to=functions.", "<minimax:tool_call>", "<dots_function_call>", "<function_calls>",
    "<｜DSML｜function_calls>", "<｜DSML｜tool_calls>", "<|tool_call_start|>", "<|python_start|>",
    "commentary to=functions.", "<|channel|>commentary to=functions.",
    "assistantcommentary to=functions.", "<|start|>assistant<|channel|>commentary to=functions.",
)  # fmt: skip
_CONTEXT = 200
_KIMI_PARTIAL = re.compile(r"functions\.[\w\-]*:?\Z")  # `functions.read:0` still being written
_LINE_MARKERS = ("```", "~~~", "diff --git ", "--- ", "@@ ")


def _prefixes(markers: tuple[str, ...]) -> frozenset[str]:
    return frozenset(m[:i] for m in markers for i in range(1, len(m)))


_MARKER_PREFIXES = _prefixes((*CALL_MARKERS, *PAIRS, *LONE_CLOSERS, *NOISE_TOKENS))
_LONGEST = max(len(p) for p in _MARKER_PREFIXES)


class StreamFilter:
    """Feed content deltas; print what `feed` returns, then what `flush` returns at the end.

    `in_reasoning=True` is for models whose template pre-fills `<think>` (the reply starts in the
    middle of reasoning): text is held until the closing marker. If none ever comes, `flush`
    releases the text as the answer rather than hiding it."""

    def __init__(self, definitions: list[dict[str, Any]] | None = None, *, in_reasoning: bool = False):
        self._builder = builder_for(definitions)
        self._line_prefixes = _prefixes(
            (*_LINE_MARKERS, *(n + s for n in self._builder.names for s in ("{", "[ARGS]", "[CALL_ID]")))
        )
        self._tail = ""  # decided text of the current line (context for line-start rules)
        self._chunks: list[str] = []
        self._size = 0
        self._held = 0  # undecided size after the last scan
        self._started = False  # prose or a call has been decided (no longer the message start)
        self._fence: re.Pattern[str] | None = None
        self._code_floor = 0  # in the buffer: where the last span on the current line ended
        self._in_reasoning = in_reasoning
        self._calls_left = Scan.MAX_CALLS  # the final parse's cap, counted over decided spans

    def feed(self, delta: str) -> str:
        """Text that is safe to print now."""
        if not delta:
            return ""
        self._chunks.append(delta)
        self._size += len(delta)
        if self._size <= self._held + self._held // 16:
            return ""
        return self._decide(final=False)

    def flush(self) -> str:
        """At the end of the stream: the remaining prose (never call syntax)."""
        return self._decide(final=True)

    def _decide(self, final: bool) -> str:
        text = self._tail + "".join(self._chunks)
        pos = len(self._tail)
        out: list[str] = []
        if self._in_reasoning:
            close = CLOSE_RE.search(text, pos)
            if close is None and not final:
                return self._keep(text, pos, "")
            self._in_reasoning = False
            pos = close.end() if close else pos
        if self._fence is not None:
            pos = self._through_fence(text, pos, final, out)
            if self._fence is not None:
                return self._keep(text, pos, "".join(out))
        spans = find_spans(
            text,
            self._builder,
            partial=not final,
            start=pos,
            message_start=not self._started,
            code_floor=self._code_floor,
            calls_left=self._calls_left,
        )
        cut = len(text) if final else self._cut(text, pos, spans)
        self._calls_left -= sum(len(s.calls) for s in spans if s.kind == "call" and s.end <= cut)
        out.append(prose(text, spans, pos, cut))
        if any(s.kind != "reasoning" and s.end <= cut and s.start < cut for s in spans) or out[-1].strip():
            self._started = True
        self._code_floor = max([self._code_floor, *(s.end for s in spans if s.end <= cut and not s.pending)])
        return self._keep(text, cut, "".join(out))

    def _through_fence(self, text: str, pos: int, final: bool, out: list[str]) -> int:
        """Inside a shown code block every complete line is printed; find where it closes."""
        assert self._fence is not None
        # the closing pattern starts with the newline before the fence line
        m = self._fence.search(text, pos - 1) if pos > 0 else self._fence.search("\n" + text)
        end = -1 if m is None else m.end() - (pos == 0)
        if end > 0 and (final or text[end - 1] == "\n"):
            out.append(text[pos:end])
            self._fence = None
            return end
        stop = len(text) if final else max(pos, text.rfind("\n", pos) + 1)
        out.append(text[pos:stop])
        return stop

    def _cut(self, text: str, pos: int, spans: list[Found]) -> int:
        """Where printing must stop: the first pending span or a half-written marker."""
        cut = len(text)
        for span in spans:
            if span.pending:
                cut = span.start
                break
            if span.resume is not None:
                self._fence = span.resume
        if self._fence is None:
            cut = min(cut, self._marker_hold(text, pos))
        for span in spans:
            if span.start < cut < span.end:
                cut = span.start
        return max(cut, pos)

    def _marker_hold(self, text: str, pos: int) -> int:
        """Start of a trailing piece that may be the beginning of a marker."""
        hold = len(text)
        for size in range(min(_LONGEST, len(text) - pos), 0, -1):
            if text[-size:] in _MARKER_PREFIXES:
                hold = len(text) - size
                break
        kimi = _KIMI_PARTIAL.search(text, max(pos, len(text) - 80))
        if kimi is not None:
            hold = min(hold, kimi.start())
        line = max(text.rfind("\n", pos) + 1, pos)
        if line > pos or pos == 0 or text[pos - 1] == "\n":
            head = text[line:].lstrip(" \t")
            if not head or head in self._line_prefixes:
                hold = min(hold, line)
        return hold

    def _keep(self, text: str, cut: int, printed: str) -> str:
        """Drop the decided text, keep the rest for the next scan."""
        if cut > 0:  # keep the decided part of the current line: markers look back to its start
            line = text.rfind("\n", 0, cut) + 1
            start = max(line, cut - _CONTEXT)
            self._tail = text[start:cut]
            self._code_floor = max(0, self._code_floor - start)
        rest = text[cut:]
        self._chunks = [rest] if rest else []
        self._size = self._held = len(rest)
        return printed
