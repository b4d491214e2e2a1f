"""StreamFilter: any chunking of a reply prints exactly its prose, never call syntax."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parsing_cases import CASES, tools_of

from vllm_bot.parsing import StreamFilter, extract_tool_calls
from vllm_bot.parsing.stream import CALL_MARKERS

# Replies whose reasoning has no opening marker: the start streams before `</think>` shows it was
# reasoning, unless the caller says the reply starts in reasoning (tested separately below).
LONE_CLOSE = {
    "deepseek-r1-lone-think-close",
    "lone-think-close-hides-calls-before",
    "ernie45-after-lone-think",
    "xlam-array-right-after-lone-think",
    "hyperclovax-seed-think-glm-layout",
}
STREAMABLE = [c for c in CASES if c["id"] not in LONE_CLOSE]


def tidy(text: str) -> str:
    from vllm_bot.parsing import tidy as _tidy

    return _tidy(text)


def stream(text: str, cuts: list[int], **kwargs: Any) -> tuple[str, list[str]]:
    """Feed `text` split at `cuts`; return everything printed and the pieces printed per feed."""
    f = StreamFilter(**kwargs)
    pieces = []
    last = 0
    for cut in [*sorted(set(cuts)), len(text)]:
        pieces.append(f.feed(text[last:cut]))
        last = cut
    pieces.append(f.flush())
    return "".join(pieces), pieces


@pytest.mark.parametrize("case", STREAMABLE, ids=[c["id"] for c in STREAMABLE])
def test_token_by_token_prints_the_prose(case: dict[str, Any]) -> None:
    text, tools = case["text"], tools_of(case)
    printed, _ = stream(text, list(range(1, len(text))), definitions=tools)
    assert tidy(printed) == extract_tool_calls(text, tools).content


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(STREAMABLE), st.lists(st.floats(0, 1), max_size=12))
def test_any_chunking_prints_the_same(case: dict[str, Any], fractions: list[float]) -> None:
    text, tools = case["text"], tools_of(case)
    whole, _ = stream(text, [], definitions=tools)
    chunked, _ = stream(text, [int(f * len(text)) for f in fractions], definitions=tools)
    assert chunked == whole
    assert tidy(whole) == extract_tool_calls(text, tools).content


def test_prose_before_a_call_is_printed_before_the_call_ends() -> None:
    f = StreamFilter()
    assert f.feed("Let me check the file.\n") == "Let me check the file.\n"
    assert f.feed("<tool_call>\n") == ""
    assert f.feed('{"name": "read", "arguments": {"path": "a.py"}}\n') == ""
    assert f.feed("</tool_call>") == ""
    assert f.feed("\n") == ""  # a call at the very end may still grow (`; {…}`, a closing tag)
    assert f.feed("Done") == "\nDone"
    assert f.feed(" reading.") + f.flush() == " reading."


def test_a_half_written_marker_is_held_then_released() -> None:
    f = StreamFilter()
    assert f.feed("a <tool_") == "a "
    assert f.feed("tip> is fine") == "<tool_tip> is fine"


def test_a_shown_code_block_streams_line_by_line() -> None:
    f = StreamFilter()
    out = f.feed("Example:\n```python\n")
    out += f.feed("x = '<tool_call>'\n")
    assert out == "Example:\n```python\nx = '<tool_call>'\n"
    assert f.feed("```\nok") + f.flush() == "```\nok"


def test_a_json_fence_is_held_until_it_closes() -> None:
    f = StreamFilter()
    out = f.feed('Run:\n```json\n{"name": "exec", "arguments": {"command": "ls"}}\n')
    assert out == "Run:\n"
    assert f.feed("```\n") + f.flush() == ""


def test_reasoning_is_never_printed() -> None:
    f = StreamFilter()
    out = f.feed("<think>\nI should call TOOL_CALL: maybe")
    out += f.feed(" not.\n</think>\n\nThe answer is 4.")
    assert tidy(out + f.flush()) == "The answer is 4."


def test_prefilled_think_with_in_reasoning() -> None:
    case = next(c for c in CASES if c["id"] == "deepseek-r1-lone-think-close")
    text = case["text"]
    printed, _ = stream(text, list(range(1, len(text), 3)), in_reasoning=True)
    assert tidy(printed) == case["content"]


def test_in_reasoning_without_a_close_releases_at_flush() -> None:
    f = StreamFilter(in_reasoning=True)
    assert f.feed("Plain answer, the template had thinking off.") == ""
    assert f.flush() == "Plain answer, the template had thinking off."


def test_whole_message_pythonic_is_held_to_the_end() -> None:
    f = StreamFilter()
    assert f.feed("[read(path=") == ""
    assert f.feed('"a.py")]') == ""
    assert f.flush() == ""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from((*CALL_MARKERS, "\n", " ", "{", "}", "x", '"', "`", "```\n")), max_size=30))
def test_marker_soup_never_raises_and_is_chunk_invariant(parts: list[str]) -> None:
    text = "".join(parts)
    whole, _ = stream(text, [])
    chunked, _ = stream(text, list(range(0, len(text), 2)))
    assert chunked == whole


def test_long_call_streamed_in_tiny_deltas_is_never_printed() -> None:
    body = "x = 1\\n" * 20_000
    call = '{"name": "write", "args": {"path": "big.py", "content": "' + body + '"}}'
    text = "Writing.\nTOOL_CALL: " + call + "\nDone."
    printed, pieces = stream(text, list(range(1, len(text), 7)))
    assert tidy(printed) == "Writing.\n\nDone."
    assert "".join(pieces[:3]).startswith("Writing.")  # printed as it came, not at the end


def pieces(text: str, step: int, **kwargs: Any) -> list[tuple[str, str]]:
    f = StreamFilter(**kwargs)
    out = [p for i in range(0, len(text), step) for p in f.feed_pieces(text[i : i + step])]
    return out + f.flush_pieces()


def joined(parts: list[tuple[str, str]], kind: str) -> str:
    return "".join(text for k, text in parts if k == kind)


def words(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("case", STREAMABLE, ids=[c["id"] for c in STREAMABLE])
@pytest.mark.parametrize("step", [1, 5])
def test_pieces_split_reasoning_from_content_as_the_final_parse_does(case: dict[str, Any], step: int) -> None:
    text = case["text"]
    parts = pieces(text, step)
    final = extract_tool_calls(text)
    assert joined(parts, "content") == stream(text, list(range(step, len(text), step)))[0]
    assert tidy(joined(parts, "content")) == final.content
    assert words(joined(parts, "reasoning")) == words(final.reasoning)


@pytest.mark.parametrize(
    ("opener", "closer"),
    [
        ("<think>", "</think>"),
        ("<seed:think>", "</seed:think>"),
        ("[THINK]", "[/THINK]"),
        ("◁think▷", "◁/think▷"),
    ],
)
def test_an_opened_reasoning_block_streams_as_reasoning_while_it_grows(opener: str, closer: str) -> None:
    f = StreamFilter()
    assert f.feed_pieces(opener + "\nFirst I") == [("reasoning", "\nFirst I")]
    assert f.feed_pieces(" read the file.") == [("reasoning", " read the file.")]
    assert f.feed_pieces(" Done" + closer[:3]) == [("reasoning", " Done")]  # may be the closer
    assert f.feed_pieces(closer[3:]) == []
    rest = f.feed_pieces("\n\nThe answer is 4.") + f.flush_pieces()
    assert tidy(joined(rest, "content")) == "The answer is 4." and joined(rest, "reasoning") == ""


def test_a_closer_lookalike_inside_the_block_is_reasoning() -> None:
    f = StreamFilter()
    parts = f.feed_pieces("<think>a </thi") + f.feed_pieces("s is not it</think>ok") + f.flush_pieces()
    assert joined(parts, "reasoning") == "a </this is not it" and joined(parts, "content") == "ok"


def test_a_reasoning_tag_in_inline_code_is_content() -> None:
    text = "Wrap it in `<think>` tags, then answer.\nThat is all."
    parts = pieces(text, 2)
    assert joined(parts, "reasoning") == "" and joined(parts, "content") == text


def test_a_long_block_streams_in_small_pieces_not_at_the_end() -> None:
    f = StreamFilter()
    sizes = [len(joined(f.feed_pieces(d), "reasoning")) for d in ["<think>", *["word " * 4] * 2000]]
    assert sizes[1:] == [20] * 2000
    assert f.feed_pieces("</think>") == []
    assert f.feed_pieces("Answer follows") == [("content", "Answer follows")]  # not held behind the block


def test_prefilled_reasoning_is_a_reasoning_piece_once_it_closes() -> None:
    f = StreamFilter(in_reasoning=True)
    assert f.feed_pieces("The user wants") == []
    parts = f.feed_pieces(" a list.</think>\n\nHere it is.") + f.flush_pieces()
    assert joined(parts, "reasoning") == "The user wants a list."
    assert tidy(joined(parts, "content")) == "Here it is."


NEW_FORMATS = {
    "kimi_k3": '<|open|>tools<|sep|><|open|>call tool="exec" index="1"<|sep|><|open|>argument key="command" '
    'type="string"<|sep|>ls<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
    "minicpm5": '<function name="exec"><param name="command">ls</param></function>',
    "cohere": '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "exec", "parameters": {"command": "ls"}}]'
    "<|END_ACTION|>",
    "hy_v3": "<tool_calls><tool_call>exec<tool_sep><arg_key>command</arg_key><arg_value>ls</arg_value>"
    "</tool_call></tool_calls>",
    "json in prose": '{"name": "exec", "parameters": {"command": "ls"}} and then I will report back.',
    "bold marker": '**TOOL_CALL:** {"name": "exec", "args": {"command": "ls"}}',
    "langchain lines": '{\n  "action": "exec",\n  "action_input": {"command": "ls"}\n}',
}


@pytest.mark.parametrize("call", NEW_FORMATS.values(), ids=NEW_FORMATS.keys())
@pytest.mark.parametrize("step", [1, 3])
def test_new_formats_never_print_call_syntax(call: str, step: int) -> None:
    text = "Listing the folder now.\n" + call
    printed, pieces = stream(text, list(range(step, len(text), step)))
    assert "Listing the folder now." in "".join(pieces[:-1])  # shown before the call is complete
    assert "ls" not in printed.replace("Listing the folder now.", "")
    assert tidy(printed) == extract_tool_calls(text).content


def test_a_bracketed_note_at_the_start_is_released_at_its_line_end() -> None:
    # `[TODO(alice)]` opens like a pythonic call list naming no offered tool; once its line goes
    # on with words it cannot become one, so the lines after it stream.
    f = StreamFilter()
    out = f.feed("[TODO(alice)] fix the login page\n")
    out += f.feed("and the signup form")
    assert out == "[TODO(alice)] fix the login page\nand the signup form"
    assert f.flush() == ""


def test_a_call_list_opening_with_a_tool_not_offered_is_held() -> None:
    f = StreamFilter()
    text = "[bad(x=b'z'),\n read(path='a.py')]"
    assert "".join(f.feed(ch) for ch in text) + f.flush() == ""
