"""The single left-to-right pass that finds calls, reasoning, noise and masked text in a reply.

One regex made only of literal-led alternatives finds the next marker (so the C search can skip
ordinary text by its first character); the marker's handler then parses from there. Line-start
constructs (code fences, diffs, bare JSON) are found through the newline before them; whether a
marker sits in inline code, a quoted line or a table row is checked only when one is found. A
span is consumed whole, so markers inside it are never seen.
"""

from __future__ import annotations

import re
from typing import Any

from ..tools.definitions import TOOL_DEFINITIONS
from . import fmt_headers as fh
from . import fmt_json as fj
from . import fmt_keyvalue as fkv
from . import fmt_markers as fm
from . import fmt_minimax3 as fm3
from . import fmt_python as fp
from . import fmt_xml as fx
from . import masks
from .building import Builder
from .core import Found, Handler, Scan
from .reasoning import LONE_CLOSERS, OPEN_RE, PAIRS, block_end, leading_reasoning, quoted

NOISE_TOKENS = (
    "<|im_end|>", "<|im_start|>assistant", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<|return|>",
    "<|call|>", "<|endoftext|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|END_ACTION|>",
    "<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>",
    "<|start|>assistant", "<|channel|>final<|message|>",
    "<｜end▁of▁sentence｜>", "</tool_call>", "<|python_end|>", "<|tool_call_end|>",
    "<|action_end|>", "<|tools_suffix|>", "<end_of_turn>",
    # closing tags a format consumes when they follow its call; stray ones are junk too
    "</longcat_tool_call>", "</tool_calls>", "</seed:tool_call>", "</minimax:tool_call>",
    "</dots_function_call>", "</function_calls>", "</｜DSML｜function_calls>", "</｜DSML｜tool_calls>",
    "<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>", "<|tool_calls_section_end|>",
    "<|tool_call_section_end|>", "<end_function_call>", "<tool_call|>", "</function>",
    # newer families' framing: Inkling, PLaMo 3, MuseGlimmer, Nemotron, Qwen2.5-Coder, Pangu, CWM
    "<|content_text|>", "<|end_message|>", "<|content_model_end_sampling|>",
    "<|content_invoke_tool_text|>", "<|content_tool_error|>", "<|plamo:tag|>", "<|eom|>", "<|eot|>",
    "</TOOLCALL>", "</tools>", "[unused12]", "</tool>", "<|tool_call:end|>", "</iquestcoder_tool_call>",
    "</ifm|tool_calls>",
)  # fmt: skip


def think(scan: Scan, pos: int) -> Found:
    _, end = block_end(scan.text, pos, scan.end)
    return Found(pos, end, "reasoning", pending=scan.partial and end >= scan.end)


def noise(scan: Scan, pos: int) -> Found | None:
    """Special-token leftovers; a stray reasoning closer counts unless it is quoted."""
    token = next((t for t in (*LONE_CLOSERS, *NOISE_TOKENS) if scan.text.startswith(t, pos)), None)
    if token is None or (token in LONE_CLOSERS and quoted(scan.text, pos)):
        return None
    return Found(pos, pos + len(token), "noise")


_INTERNLM = re.compile(r"<\|action_start\|>\s*<\|plugin\|>\s*")
_GIGACHAT = re.compile(r"(?:<\|function_call\|>|function call<\|role_sep\|>)\s*")


def internlm(scan: Scan, pos: int) -> Found | None:
    m = _INTERNLM.match(scan.text, pos, scan.end)
    if m is None or fj.mentioned(scan, pos, m.end()):
        return None
    return fj.json_calls(scan, pos, m.end(), "internlm", "<|action_end|>", marker="<|action_start|>")


def gigachat(scan: Scan, pos: int) -> Found | None:
    m = _GIGACHAT.match(scan.text, pos, scan.end)
    if m is None or fj.mentioned(scan, pos, m.end()):
        return None
    return fj.json_calls(scan, pos, m.end(), "gigachat", marker="<|function_call|>")


def python_tag(scan: Scan, pos: int) -> Found | None:
    """Llama 3 `<|python_tag|>{"name": …, "parameters": …}; {…}` (or a pythonic call)."""
    body = scan.skip_space(pos + len("<|python_tag|>"))
    if fj.mentioned(scan, pos, body):
        return None
    if body < scan.end and scan.text[body] not in "{[":
        found = fp.pythonic_span(scan, pos, body, "llama_json")
        if found is not None:
            return found
    return fj.json_calls(scan, pos, body, "llama_json", marker="<|python_tag|>")


_LFM2 = fp.tagged_pythonic("<|tool_call_start|>", "<|tool_call_end|>", "lfm2")


def lfm2_or_pangu(scan: Scan, pos: int) -> Found | None:
    """`<|tool_call_start|>` holds a pythonic list (LFM2) or a JSON array of calls (openPangu)."""
    body = scan.skip_space(pos + len("<|tool_call_start|>"))
    if body < scan.end and scan.text[body] in "{[" and not fp.looks_pythonic(scan.text, body):
        return fj.json_calls(scan, pos, body, "pangu", "<|tool_call_end|>", marker="<|tool_call_start|>")
    return _LFM2(scan, pos)


def phi4(scan: Scan, pos: int) -> Found | None:
    return fj.json_calls(scan, pos, pos + len("functools"), "phi4", marker="functools[")


# (the marker's alternatives, each starting with a literal character; its handler), in order.
# Kept flat: the combined regex then lets the C search skip text by its first character.
TRIGGERS: list[tuple[tuple[str, ...], Handler]] = [
    (tuple(re.escape(o) for o in PAIRS), think),
    (tuple(re.escape(t) for t in (*LONE_CLOSERS, *NOISE_TOKENS)), noise),
    ((r"TOOL_CALL\s*:",), fj.tool_call_block),
    ((r"<tool_call>",), fx.tool_call_tag),
    ((r"<tool_calls>",), fj.tool_calls),
    ((r"<longcat_tool_call>",), fj.tagged("<longcat_tool_call>", "</longcat_tool_call>", "longcat")),
    ((r"<\|tool_call\|>",), fj.tagged("<|tool_call|>", None, "granite")),
    ((r"<\|tool_call>", r"<start_function_call>"), fp.gemma),
    ((r"<function\s*=",), fx.bare_function),
    ((r"<function\s+name\s*=",), fx.minicpm),
    ((r"<\|open\|>\s*tools\s*<\|sep\|>",), fm.kimi_k3),
    ((r"<\|START_ACTION\|>",), fj.tagged("<|START_ACTION|>", "<|END_ACTION|>", "cohere")),
    ((r"<seed:tool_call>",), fx.seed),
    ((r"\[TOOL_CALLS\]",), fj.mistral),
    ((r"<\|python_tag\|>",), python_tag),
    ((r"<function_call>",), fj.tagged("<function_call>", None, "granite_20b")),
    ((r"<\|action_start\|>",), internlm),
    ((r"functools\[",), phi4),
    ((r"<\|tools_prefix\|>",), fj.tagged("<|tools_prefix|>", "<|tools_suffix|>", "apertus", fj.keyed)),
    ((r"<\|function_call\|>", r"function call<\|role_sep\|>"), gigachat),
    ((r"<｜tool[▁_]calls?[▁_]begin｜>",), fm.deepseek),
    ((r"<\|tool_calls?_section_begin\|>", r"<\|tool_call_begin\|>"), fm.kimi),
    ((r"functions\.[\w\-]+:\d",), fm.kimi_bare),
    ((r"to=functions\.",), fm.harmony),
    ((r"to=",), fh.muse_header),
    ((r"<minimax:tool_call>", r"<dots_function_call>", r"<function_calls>", r"<｜DSML｜function_calls>",
      r"<｜DSML｜tool_calls>", r"<｜DSML｜ calls>", r"<｜GCML｜tool_calls>", r"<atem:function_calls>"),
     fx.invoke_wrapper),
    ((r"<\|tool_call_start\|>",), lfm2_or_pangu),
    ((r"\[unused11\]",), fj.tagged("[unused11]", "[unused12]", "pangu")),
    ((r"<TOOLCALL>",), fj.tagged("<TOOLCALL>", "</TOOLCALL>", "nemotron")),
    ((r"<tools>",), fj.tagged("<tools>", "</tools>", "qwen25_coder")),
    ((r"<\|tool_call:start\|>", r"<iquestcoder_tool_call>", r"<ifm\|tool_calls?>"), fkv.handler),
    ((r"\]<\]minimax\[>\[<tool_call>",), fm3.tool_call),
    ((r"<\|content_invoke_tool_json\|>",), fh.inkling),
    ((r"<\|message_model\|>",), fh.inkling_header),
    ((r"<\|plamo:begin_tool_requests:plamo\|>",), fh.plamo),
    ((r"-> tool/function_call",), fh.hyperclovax),
    ((r"<tool:",), fh.cwm),
    ((r"\*\*Tool Call:\*\*",), fh.rwkv),
    ((r"<\|python_start\|>",), fp.tagged_pythonic("<|python_start|>", "<|python_end|>", "pythonic")),
    # on one line, so the stream filter can hold the `{"na` being written (stream.CALL_MARKERS)
    ((r"\{[ \t]*\"(?:name|action|tool_name)\"[ \t]*:", r"\[[ \t]*\{[ \t]*\"name\"[ \t]*:"), fj.inline_json),
]  # fmt: skip

# Constructs that only count at the start of a line.
LINE_TRIGGERS: list[tuple[str, Handler]] = [
    (r"[ \t]{0,3}(?:```|~~~)", masks.fence_handler),
    (r"diff --git |--- |@@ ", masks.diff_handler),
    (r"[ \t]*[\{\[]", fj.bare_json),
    (r"[ \t]*[A-Za-z_][\w.\-]*(?:\[ARGS\]|\[CALL_ID\]|\{)", fj.mistral_bare),
    (r"[ \t]*[A-Za-z_][\w.\-]*\(", fp.line_call),
]

_EVENTS = re.compile(
    "|".join(alt for alts, _ in TRIGGERS for alt in alts)
    + r"|\n(?:"
    + "|".join(p for p, _ in LINE_TRIGGERS)
    + ")"
)
_BY_CHAR: dict[str, list[tuple[re.Pattern[str], Handler]]] = {}
for _alts, _handler in TRIGGERS:
    for _alt in _alts:
        _first = _alt[1] if _alt.startswith("\\") else _alt[0]
        _BY_CHAR.setdefault(_first, []).append((re.compile(_alt), _handler))
_LINE = [(re.compile(p), h) for p, h in LINE_TRIGGERS]


def _try(scan: Scan, pos: int, table: list[tuple[re.Pattern[str], Handler]]) -> Found | None:
    matched = False
    for pattern, handler in table:
        if pattern.match(scan.text, pos, scan.end):
            matched = True
            found = handler(scan, pos)
            if found is not None:
                return found
    if matched and scan.partial and scan.line_end(pos) >= scan.end:
        return scan.pending(pos)  # a marker whose line is still being written may yet parse
    return None


def walk(scan: Scan, start: int, end: int) -> list[Found]:
    """Spans in [start, end) in order; stops after the first pending one (streaming)."""
    text = scan.text
    spans: list[Found] = []
    pos, line_tried = start, -1
    scan.floor = start
    while pos < end:
        found = None
        if pos != line_tried and scan.at_line_start(pos):
            line_tried = pos
            found = _try(scan, pos, _LINE)
        if found is None:
            m = _EVENTS.search(text, pos, end)
            if m is None:
                break
            at = m.start()
            if text[at] == "\n":
                line_tried = at + 1
                found = _try(scan, at + 1, _LINE)
            else:
                found = masks.enclosing(scan, at) or _try(scan, at, _BY_CHAR.get(text[at], []))
            if found is None:
                pos = at + 1
                continue
        if found.kind == "call" and found.calls:
            found = _without_explanations(found)
        if scan.partial and found.kind in ("call", "reasoning") and scan.only_space_after(found.end):
            found.pending, found.end = True, scan.end
        if found.kind == "call" and not scan.in_fence and not found.pending:
            found = scan.count(found, end)
        spans.append(found)
        scan.floor = scan.code_floor = found.end
        if found.pending or found.resume is not None:
            break
        pos = max(found.end, pos + 1)
    return spans


def _without_explanations(found: Found) -> Found:
    """Calls the builder marked as not a call (a placeholder name, a tool's schema) are dropped;
    a span left with none is an explanation of a format: shown as text, never run."""
    calls = [c for c in found.calls if c.error is None or c.error.kind != "not_a_call"]
    if len(calls) == len(found.calls):
        return found
    if calls:
        return Found(found.start, found.end, "call", found.source, calls, found.pending, found.resume)
    return Found(found.start, found.end, "mask", pending=found.pending)


def find_spans(
    text: str,
    builder: Builder,
    *,
    partial: bool = False,
    start: int = 0,
    message_start: bool = True,
    code_floor: int | None = None,
    calls_left: int | None = None,
) -> list[Found]:
    """All spans of `text` from `start`. At the start of a message, a leading unopened reasoning
    section and a whole-message pythonic call list are recognized first. `code_floor` (streaming)
    is where the last span on the current line ended, if that lies before `start`; `calls_left`
    (streaming) what remains of `Scan.MAX_CALLS` after the calls before `start`."""
    scan = Scan(text, builder, partial)
    if calls_left is not None:
        scan.calls_left = calls_left
    scan.code_floor = start if code_floor is None else code_floor
    scan.walk = lambda s, e: walk(scan, s, e)
    spans: list[Found] = []
    pos = start
    if message_start:
        lead = leading_reasoning(text, start, len(text))
        if lead is not None:
            spans.append(Found(start, lead[1], "reasoning"))
            pos = lead[1]
        while (opener := OPEN_RE.match(text, scan.skip_space(pos))) is not None:
            spans.append(think(scan, opener.start()))
            pos = spans[-1].end
            if spans[-1].pending:
                return spans
        if partial and _maybe_harmony_analysis(text, scan.skip_space(pos)):
            return [*spans, scan.pending(pos)]
        whole = fp.whole_message(scan, pos)
        if whole is not None:
            return [*spans, scan.count(whole, len(text))]
    if spans:
        scan.code_floor = max(scan.code_floor, pos)
    return spans + walk(scan, pos, len(text))


def _maybe_harmony_analysis(text: str, at: int) -> bool:
    """A reply starting `analysis…` may be gpt-oss reasoning whose `assistantfinal` is to come."""
    head = text[at : at + 9]
    if len(head) < 9:
        return "analysis".startswith(head)
    return head.startswith("analysis") and head[8].isalpha()


def builder_for(definitions: list[dict[str, Any]] | None) -> Builder:
    if definitions is None:
        definitions = TOOL_DEFINITIONS
    return Builder(definitions)


def prose(
    text: str,
    spans: list[Found],
    start: int,
    end: int,
    drop: tuple[str, ...] = ("call", "reasoning", "noise"),
) -> str:
    """The text in [start, end) outside the spans of the kinds in `drop` (masks are prose)."""
    pieces: list[str] = []
    pos = start
    for span in spans:
        if span.kind not in drop or span.end <= pos or span.start >= end:
            continue
        pieces.append(text[pos : max(pos, span.start)])
        pos = max(pos, span.end)
    if pos < end:
        pieces.append(text[pos:end])
    return "".join(pieces)
