"""Reasoning markers: which text is the model thinking rather than answering.

Forms (vllm-protocol.md §4.3): `<think>…</think>`, a lone leading `…</think>` (templates that
pre-fill `<think>`), an empty `<think>\n\n</think>`, `<seed:think>`, `◁think▷…◁/think▷`,
`[THINK]…[/THINK]`, gpt-oss `<|channel|>analysis<|message|>…<|end|>` (and the special-token-stripped
`analysis…assistantfinal`), Gemma 4 `<|channel>thought…<channel|>`. An unterminated block at the
end is all reasoning.
"""

from __future__ import annotations

import re

PAIRS: dict[str, str] = {
    "<think>": "</think>",
    "<seed:think>": "</seed:think>",
    "◁think▷": "◁/think▷",
    "[THINK]": "[/THINK]",
    "<|channel|>analysis<|message|>": "<|end|>",
    "<|channel>thought": "<channel|>",
    "<|START_THINKING|>": "<|END_THINKING|>",
    "<mm:think>": "</mm:think>",  # MiniMax-M3
    "<|content_thinking|>": "<|end_message|>",  # Inkling
    "<|plamo:begin_think:plamo|>": "<|plamo:end_think:plamo|>",
    "to=self<|message|>": "<|eom|>",  # MuseGlimmer's reasoning channel
}
# Closers that may appear alone: the opener was part of the prompt (DeepSeek-R1, Qwen3-Thinking).
LONE_CLOSERS = (
    "</think>", "</seed:think>", "◁/think▷", "[/THINK]", "<|END_THINKING|>", "</mm:think>",
    "<|plamo:end_think:plamo|>",
)  # fmt: skip

OPEN_RE = re.compile("|".join(re.escape(o) for o in PAIRS))
CLOSE_RE = re.compile("|".join(re.escape(c) for c in LONE_CLOSERS))
_HARMONY_TAIL = re.compile(r"assistant(?:final)?\Z")
_HARMONY_DEGRADED = re.compile(r"\s*analysis(?=[^\W\d_])")  # `analysisThe user…`
_HARMONY_TURN = re.compile(r"assistant(?:final|(?=commentary))")


def block_end(text: str, open_start: int, limit: int) -> tuple[int, int]:
    """(end of the reasoning text, end of the block) for the opener at `open_start`."""
    opener = OPEN_RE.match(text, open_start)
    assert opener is not None
    closer = PAIRS[opener.group()]
    at = text.find(closer, opener.end(), limit)
    if at < 0:
        return limit, limit
    return at, at + len(closer)


def quoted(text: str, at: int) -> bool:
    """A marker inside a string literal or code span is not a real marker."""
    before = text[max(0, at - 2) : at]
    return before[-1:] in ('"', "'", "`") or (len(before) == 2 and before[0] == "\\")


def lone_close(text: str, start: int, limit: int) -> tuple[int, int] | None:
    """(reasoning end, content start) for a leading section with no opener (`…</think>`)."""
    m = CLOSE_RE.search(text, start, limit)
    while m is not None and quoted(text, m.start()):
        m = CLOSE_RE.search(text, m.end(), limit)
    if m is None or OPEN_RE.search(text, start, m.start()):
        return None
    return m.start(), m.end()


def harmony_analysis(text: str, start: int, limit: int) -> tuple[int, int] | None:
    """(reasoning end, content start) for a stripped gpt-oss reply `analysis…assistantfinal…`."""
    head = _HARMONY_DEGRADED.match(text, start, limit)
    turn = _HARMONY_TURN.search(text, head.end(), limit) if head else None
    if turn is None:
        return None
    return turn.start(), turn.end()


def leading_reasoning(text: str, start: int, limit: int) -> tuple[int, int] | None:
    """A reasoning section at the very start that has no opening marker (see the module doc)."""
    return lone_close(text, start, limit) or harmony_analysis(text, start, limit)


def inner_text(text: str, start: int, end: int) -> str:
    """The thinking inside a reasoning span found by the scan, without its markers."""
    body = text[start:end]
    opener = OPEN_RE.match(body)
    if opener is not None:
        closer = PAIRS[opener.group()]
        body = body[opener.end() :]
        return (body[: -len(closer)] if body.endswith(closer) else body).strip()
    closer_at = CLOSE_RE.search(body)
    if closer_at is not None and closer_at.end() == len(body):
        return body[: closer_at.start()].strip()
    body = _HARMONY_TAIL.sub("", body).strip()  # `analysis…assistantfinal`
    return body[len("analysis") :].strip() if body.startswith("analysis") else body
