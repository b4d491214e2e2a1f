"""What the terminal may print while a reply streams, so raw call syntax never shows as answer.

`StreamFilter` runs the same scan as `parse_tool_calls` over the text that is not decided yet,
in "partial" mode: anything that may still become a call (an open `<tool_call>`, a line that
starts like `{"name"`, a half-written marker such as `<tool_`) or a reasoning block is held back;
prose before it is released. Decided text is dropped from the buffer, and while something is held
the scan is repeated only after the held text grew by a sixteenth, so streaming stays linear.
The final calls always come from `parse_tool_calls` on the whole reply.

`feed_pieces`/`flush_pieces` also return the reasoning the same scan finds, as ("reasoning", text)
pieces between the ("content", text) ones: an opened reasoning block (`<think>`, `<seed:think>`,
`[THINK]`, …) streams as it grows, while the scan still holds it and decides it once it closes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from .core import Found, Scan
from .reasoning import CLOSE_RE, LONE_CLOSERS, OPEN_RE, PAIRS, block_end, inner_text
from .walker import NOISE_TOKENS, builder_for, find_spans

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
    "<function name=", "<|open|>tools<|sep|>", "<|START_ACTION|>", '{"name":', '{"name" :',
    '{"action":', '{"tool_name":', '[{"name":', "<tool_calls><tool_call>", "**TOOL_CALL:", "__TOOL_CALL:",
    "<｜DSML｜ calls>", "<｜GCML｜tool_calls>", "<atem:function_calls>", "[unused11]", "<TOOLCALL>",
    "<tools>", "<|tool_call:start|>", "<iquestcoder_tool_call>", "<ifm|tool_calls>", "<ifm|tool_call>",
    "]<]minimax[>[<tool_call>", "<|content_invoke_tool_json|>", "<|message_model|>",
    "<|plamo:begin_tool_requests:plamo|>", "-> tool/function_call", "<tool:", "**Tool Call:**", "to=",
)  # fmt: skip
_CONTEXT = 200
_KIMI_PARTIAL = re.compile(r"functions\.[\w\-]*:?\Z")  # `functions.read:0` still being written
_LINE_MARKERS = ("```", "~~~", "diff --git ", "--- ", "@@ ")


def _prefixes(markers: tuple[str, ...]) -> frozenset[str]:
    return frozenset(m[:i] for m in markers for i in range(1, len(m)))


Piece = tuple[Literal["reasoning", "content"], str]


@dataclass
class _Thinking:
    """An opened reasoning block at the start of the held text, partly shown already."""

    closer: str
    sent: int  # held characters accounted for: the opener and the reasoning shown
    live: bool = True  # the closer has not arrived: new text is reasoning as soon as it comes
    rest: str = ""  # unshown end of the held text that may be the start of the closer


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def _add(out: list[Piece], kind: Literal["reasoning", "content"], text: str) -> None:
    if not text:
        return
    if out and out[-1][0] == kind:
        out[-1] = (kind, out[-1][1] + text)
    else:
        out.append((kind, text))


_MARKER_PREFIXES = _prefixes((*CALL_MARKERS, *PAIRS, *LONE_CLOSERS, *NOISE_TOKENS))
_LONGEST = max(len(p) for p in _MARKER_PREFIXES)


class StreamFilter:
    """Feed content deltas; print what `feed` returns, then what `flush` returns at the end.

    `in_reasoning=True` is for models whose template pre-fills `<think>` (the reply starts in the
    middle of reasoning): text is held until the closing marker, then given as one reasoning piece.
    If none ever comes, `flush` releases the text as the answer rather than hiding it. (Nothing sets
    it yet: a profile key saying the template pre-fills the opener would, via `consume`.)"""

    def __init__(self, definitions: list[dict[str, Any]] | None = None, *, in_reasoning: bool = False):
        self._builder = builder_for(definitions)
        # Inkling with special tokens stripped: `read<|content_invoke_tool_json|>{…}`
        self._name_prefixes = frozenset(  # from the whole name on: a lone "r" stays prose
            n + t for n in self._builder.names for t in _prefixes(("<|content_invoke_tool_json|>",)) | {""}
        )
        self._longest = max(_LONGEST, *map(len, self._name_prefixes), 0)
        self._line_prefixes = _prefixes(
            (*_LINE_MARKERS, *(n + s for n in self._builder.names for s in ("{", "[ARGS]", "[CALL_ID]", "(")))
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
        self._thinking: _Thinking | None = None

    def feed(self, delta: str) -> str:
        """Text that is safe to print now."""
        return _content(self.feed_pieces(delta))

    def flush(self) -> str:
        """At the end of the stream: the remaining prose (never call syntax)."""
        return _content(self.flush_pieces())

    def feed_pieces(self, delta: str) -> list[Piece]:
        """What is decided now, in order: ("reasoning", text) to show as thinking, ("content",
        text) to print as the answer (what `feed` returns)."""
        if not delta:
            return []
        self._chunks.append(delta)
        self._size += len(delta)
        if self._thinking is not None and self._thinking.live:
            return self._think_more(self._thinking, delta)
        if self._size <= self._held + self._held // 16:
            return []
        return self._decide(final=False)

    def flush_pieces(self) -> list[Piece]:
        """At the end of the stream: the remaining pieces (content is what `flush` returns)."""
        return self._decide(final=True)

    def _think_more(self, think: _Thinking, delta: str) -> list[Piece]:
        """Inside an opened reasoning block: show new text at once; scan again once the closer came."""
        probe = think.rest + delta
        if think.closer in probe:
            think.live = False
            return self._decide(final=False)
        keep = _partial_suffix(probe, think.closer)
        shown, think.rest = probe[: len(probe) - keep], probe[len(probe) - keep :]
        think.sent += len(shown)
        return [("reasoning", shown)] if shown else []

    def _decide(self, final: bool) -> list[Piece]:
        text = self._tail + "".join(self._chunks)
        pos = len(self._tail)
        think, self._thinking = self._thinking, None  # a block being shown starts at `pos`
        out: list[Piece] = []
        if self._in_reasoning:
            close = CLOSE_RE.search(text, pos)
            if close is None and not final:
                return self._keep(text, pos, out)
            self._in_reasoning = False
            if close:
                _add(out, "reasoning", text[pos : close.start()])
                pos = close.end()
        if self._fence is not None:
            shown: list[str] = []
            pos = self._through_fence(text, pos, final, shown)
            _add(out, "content", "".join(shown))
            if self._fence is not None:
                return self._keep(text, pos, out)
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
        decided = _pieces(text, spans, pos, cut, think)
        spoke = any(s.kind != "reasoning" and s.start < cut and s.end <= cut for s in spans)
        if spoke or _content(decided).strip():
            self._started = True
        self._code_floor = max([self._code_floor, *(s.end for s in spans if s.end <= cut and not s.pending)])
        for kind, piece in decided:
            _add(out, kind, piece)
        self._show_open_block(text, spans, cut, think if cut == pos else None, out)
        self._keep(text, cut, out)
        if self._thinking is not None and not self._thinking.live:
            self._held = 0  # the block closed: decide it with the next text, however long it was
        return out

    def _show_open_block(
        self, text: str, spans: list[Found], cut: int, think: _Thinking | None, out: list[Piece]
    ) -> None:
        """A reasoning block opened at `cut` and still held: show what it holds so far."""
        span = next((s for s in spans if s.pending), None)
        if span is None or span.kind != "reasoning" or span.start != cut:
            return
        opener = OPEN_RE.match(text, cut)
        if opener is None:
            return
        closer = PAIRS[opener.group()]
        sent = cut + (think.sent if think is not None else opener.end() - cut)
        inner_end, _ = block_end(text, cut, len(text))
        closed = inner_end < len(text)
        upto = max(sent, inner_end if closed else len(text) - _partial_suffix(text, closer))
        _add(out, "reasoning", text[sent:upto])
        self._thinking = _Thinking(closer, upto - cut, live=not closed, rest="" if closed else text[upto:])

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
        if not self._started and not text[pos:cut].strip():
            cut = pos  # whitespace at the message start may be the head of a call (` <|…|>`): wait
        return max(cut, pos)

    def _marker_hold(self, text: str, pos: int) -> int:
        """Start of a trailing piece that may be the beginning of a marker."""
        hold = len(text)
        for size in range(min(self._longest, len(text) - pos), 0, -1):
            if text[-size:] in _MARKER_PREFIXES or text[-size:] in self._name_prefixes:
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

    def _keep(self, text: str, cut: int, pieces: list[Piece]) -> list[Piece]:
        """Drop the decided text, keep the rest for the next scan."""
        if cut > 0:  # keep the decided part of the current line: markers look back to its start
            line = text.rfind("\n", 0, cut) + 1
            start = max(line, cut - _CONTEXT)
            self._tail = text[start:cut]
            self._code_floor = max(0, self._code_floor - start)
        rest = text[cut:]
        self._chunks = [rest] if rest else []
        self._size = self._held = len(rest)
        return pieces


def _content(pieces: list[Piece]) -> str:
    return "".join(text for kind, text in pieces if kind == "content")


def _pieces(text: str, spans: list[Found], pos: int, cut: int, think: _Thinking | None) -> list[Piece]:
    """[pos, cut) without calls and noise: reasoning spans as reasoning, the prose as content."""
    out: list[Piece] = []
    at = pos
    for span in spans:
        if span.kind not in ("call", "reasoning", "noise") or span.end <= at or span.start >= cut:
            continue
        _add(out, "content", text[at : max(at, span.start)])
        if span.kind == "reasoning" and span.end <= cut:
            _add(out, "reasoning", _reasoning(text, span, think if span.start == pos else None))
        at = max(at, span.end)
    _add(out, "content", text[at:cut])
    return out


def _reasoning(text: str, span: Found, think: _Thinking | None) -> str:
    """The thinking of a decided reasoning span, without what was shown while it streamed."""
    opener = OPEN_RE.match(text, span.start)
    if opener is None:
        return inner_text(text, span.start, span.end)
    inner_end, _ = block_end(text, span.start, span.end)
    sent = think.sent if think is not None else opener.end() - span.start
    return text[span.start + sent : inner_end]
