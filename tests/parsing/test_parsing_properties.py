"""Properties of parse_tool_calls: it never raises, its output is always usable, and it stays
linear on inputs built to make a naive parser backtrack or rescan (no timings asserted)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_bot.parsing import extract_tool_calls, parse_tool_calls, split_reasoning
from vllm_bot.parsing.stream import CALL_MARKERS
from vllm_bot.tools.definitions import TOOL_DEFINITIONS, tool_names

NAMES = set(tool_names(TOOL_DEFINITIONS))
FRAGMENTS = (
    *CALL_MARKERS,
    '{"name": "read", "arguments": {"path": "a.py"}}',
    '{"name": "exec", "args": {"command": "ls"', '"arguments": ', '{"path": ', "\\", '\\"', "'",
    "{", "}", "[", "]", "(", ")", ",", ":", ";", '"', "`", "```", "```json\n", "\n", " ", "> ", "| ",
    "</tool_call>", "</function>", "<parameter=path>", "</parameter>", "<arg_key>", "<arg_value>",
    "<think>", "</think>", "[ARGS]", "read", "exec", "True", "None", "x", "日本語", "+", "@@ -1 +1 @@\n",
)  # fmt: skip


def check(text: str) -> None:
    extraction = extract_tool_calls(text)
    for call in extraction.calls:
        json.dumps(call.arguments)  # history must carry valid JSON
        assert isinstance(call.arguments, dict)
        assert call.metadata["source"]
        if call.error is None:
            assert call.name in NAMES
        else:
            assert call.error.strip()
    assert isinstance(extraction.content, str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    check(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_never_raises_on_fragments_of_call_syntax(parts: list[str]) -> None:
    check("".join(parts))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_split_reasoning_never_raises(parts: list[str]) -> None:
    reasoning, content = split_reasoning("".join(parts))
    assert isinstance(reasoning, str) and isinstance(content, str)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12), st.integers(200, 2000))
def test_long_repetitive_input_is_handled(parts: list[str], times: int) -> None:
    check("".join(parts) * times)


ADVERSARIAL = {
    "unclosed objects": '{"name": "read", "arguments": {"path": "a\n' * 4000,
    "unclosed tags": "<tool_call>{" * 8000,
    "unclosed XML values": "<tool_call><function=read><parameter=path>x" * 3000,
    "unclosed strings": 'TOOL_CALL: {"name": "' * 5000,
    "backticks": "` `` ``` TOOL_CALL: x " * 5000,
    "brackets": "[" * 100_000,
    "braces": "{" * 100_000,
    "parens": "[read(" * 20_000,
    "quotes": '"' * 100_000,
    "newlines and pipes": "\n|\n>\n" * 30_000,
    "think": "<think>" * 20_000,
    "long line of markers": "to=functions.x functions.y:1 <function= " * 5000,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_inputs_finish(text: str) -> None:
    check(text)


def test_deeply_nested_json_is_an_error_not_a_crash() -> None:
    (call,) = parse_tool_calls('TOOL_CALL: {"name": "read", "args": ' + "[" * 50_000 + "]" * 50_000 + "}")
    assert call.error is not None


def test_parsing_is_deterministic() -> None:
    text = 'Hi.\n<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>\nBye.'
    first, second = extract_tool_calls(text), extract_tool_calls(text)
    assert [(c.name, c.arguments) for c in first.calls] == [(c.name, c.arguments) for c in second.calls]
    assert first.content == second.content
