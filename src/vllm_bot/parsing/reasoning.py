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
}
# Closers that may appear alone: the opener was part of the prompt (DeepSeek-R1, Qwen3-Thinking).
LONE_CLOSERS = ("</think>", "</seed:think>", "◁/think▷", "[/THINK]")

OPEN_RE = re.compile("|".join(re.escape(o) for o in PAIRS))
CLOSE_RE = re.compile("|".join(re.escape(c) for c in LONE_CLOSERS))
_HARMONY_FRAMING = re.compile(r"<\|start\|>assistant|<\|channel\|>final<\|message\|>|<\|return\|>|<\|end\|>")
_HARMONY_DEGRADED = re.compile(r"\s*analysis(?=\S)")
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


def _quoted(text: str, at: int) -> bool:
    """A marker inside a string literal or code span is not a real marker."""
    before = text[max(0, at - 2) : at]
    return before[-1:] in ('"', "'", "`") or (len(before) == 2 and before[0] == "\\")


def lone_close(text: str, start: int, limit: int) -> tuple[int, int] | None:
    """(reasoning end, content start) for a leading section with no opener (`…</think>`)."""
    m = CLOSE_RE.search(text, start, limit)
    while m is not None and _quoted(text, m.start()):
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


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, content): every reasoning block removed from the content, both stripped."""
    reasoning: list[str] = []
    content: list[str] = []
    pos = 0
    lead = leading_reasoning(text, 0, len(text))
    if lead is not None:
        head = text[: lead[0]]
        stripped = head.lstrip()
        if text.startswith("assistant", lead[0]) and stripped.startswith("analysis"):
            head = stripped[len("analysis") :]  # gpt-oss channel name, not reasoning
        reasoning.append(head)
        pos = lead[1]
    while True:
        m = OPEN_RE.search(text, pos)
        if m is None:
            content.append(text[pos:])
            break
        content.append(text[pos : m.start()])
        inner_end, pos = block_end(text, m.start(), len(text))
        reasoning.append(text[m.end() : inner_end])
    answer = _HARMONY_FRAMING.sub("", "".join(content))
    return "\n\n".join(r.strip() for r in reasoning if r.strip()), answer.strip()
