"""What keeps parsing linear: the bracket scanner agrees with a plain reference scanner, all bracket
scans of one reply together stay within a budget, and one reply yields at most Scan.MAX_CALLS calls
(the rest becomes one error call, so a runaway reply costs neither seconds nor the history)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bot.parsing import StreamFilter, extract_tool_calls, parse_tool_calls, tidy
from vllm_bot.parsing.core import Scan
from vllm_bot.parsing.jsonscan import Scanned, scan_value
from vllm_bot.parsing.walker import builder_for

LIMIT = Scan.MAX_CALLS
CLOSER = {"{": "}", "[": "]", "(": ")"}


def reference_scan(text: str, start: int) -> Scanned:
    """One character at a time: quotes (either kind, backslash escapes) hide brackets."""
    stack: list[str] = []
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= len(text):
                return Scanned(len(text), False, "".join(CLOSER[c] for c in reversed(stack)), ch)
            i = j + 1
            continue
        if ch in "{[(":
            stack.append(ch)
        elif ch in "}])":
            if not stack or CLOSER[stack.pop()] != ch:
                return Scanned(i, False)
            if not stack:
                return Scanned(i + 1, True)
        i += 1
    return Scanned(len(text), False, "".join(CLOSER[c] for c in reversed(stack)))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="{}[]()\"'\\ ab\n:,", max_size=60), st.integers(0, 59))
def test_scan_value_agrees_with_a_plain_scanner(text: str, start: int) -> None:
    start = min(start, len(text))
    opener = next((i for i in range(start, len(text)) if text[i] in "{[("), None)
    if opener is not None:
        assert scan_value(text, opener) == reference_scan(text, opener)


def test_a_scan_stops_where_the_budget_ends() -> None:
    text = '{"a": "' + "x" * 1000 + '"} {"b": 1}'
    scan = Scan(text, builder_for(None))
    scan.budget = 500
    assert scan.scan_json(0) == Scanned(len(text), False)  # as if it never closed
    assert scan.budget <= 0
    assert scan.scan_json(text.index('{"b"')) == Scanned(len(text), False)
    fresh = Scan(text, builder_for(None))
    assert fresh.scan_json(0).closed and fresh.budget > 0


def hermes(i: int) -> str:
    call = {"name": "read", "arguments": {"path": f"f{i}.py"}}
    return f"<tool_call>{json.dumps(call)}</tool_call>"


def assert_capped(calls: list, first_paths: list[str]) -> None:
    assert len(calls) == LIMIT + 1
    assert [c.arguments["path"] for c in calls[:LIMIT]] == first_paths
    assert all(c.error is None for c in calls[:LIMIT])
    last = calls[-1]
    assert last.metadata["source"] == "too_many_calls" and last.arguments == {}
    assert f"more than {LIMIT} tool calls" in (last.error or "")


def test_calls_past_the_cap_become_one_error_call() -> None:
    text = "Reading them all.\n" + "\n".join(hermes(i) for i in range(LIMIT + 6)) + "\nDone."
    extraction = extract_tool_calls(text)
    assert_capped(extraction.calls, [f"f{i}.py" for i in range(LIMIT)])
    assert hermes(LIMIT) in (extraction.calls[-1].error or "")
    assert extraction.content == "Reading them all."


def test_exactly_the_cap_keeps_every_call_and_the_prose() -> None:
    text = "\n".join(hermes(i) for i in range(LIMIT)) + "\nThat is all."
    extraction = extract_tool_calls(text)
    assert len(extraction.calls) == LIMIT and all(c.error is None for c in extraction.calls)
    assert extraction.content == "That is all."


def test_one_array_past_the_cap_is_cut_at_the_cap() -> None:
    items = [{"name": "read", "arguments": {"path": f"f{i}.py"}} for i in range(200)]
    calls = parse_tool_calls("[TOOL_CALLS]" + json.dumps(items))
    assert_capped(calls, [f"f{i}.py" for i in range(LIMIT)])


def test_a_whole_pythonic_message_past_the_cap_is_cut_at_the_cap() -> None:
    calls = parse_tool_calls("[" + ", ".join(f'read(path="f{i}.py")' for i in range(LIMIT + 1)) + "]")
    assert_capped(calls, [f"f{i}.py" for i in range(LIMIT)])


def test_a_runaway_reply_of_broken_calls_yields_the_cap_and_one_error() -> None:
    unit = '{"name": "read", "arguments": {"path": "a\n<tool_call>{\n`x ```\n[TOOL_CALLS]\n'
    calls = parse_tool_calls(unit * 13_000)
    assert len(calls) == LIMIT + 1 and calls[-1].metadata["source"] == "too_many_calls"


@pytest.mark.parametrize("count", [LIMIT, LIMIT + 3])
@pytest.mark.parametrize("step", [1, 9, 400])
def test_streaming_shows_what_the_capped_parse_keeps(count: int, step: int) -> None:
    text = "Reading.\n" + "\n".join(hermes(i) for i in range(count)) + "\nDone."
    f = StreamFilter()
    printed = "".join(f.feed(text[i : i + step]) for i in range(0, len(text), step)) + f.flush()
    assert tidy(printed) == extract_tool_calls(text).content
    assert ("Done." in printed) == (count == LIMIT)


def test_json_repair_is_rationed_per_reply() -> None:
    broken = "\n".join(
        f'TOOL_CALL: {{name: "read", args: {{path: "f{i}.py"}}}}' for i in range(Scan.MAX_REPAIRS + 4)
    )
    calls = parse_tool_calls(broken)
    assert [c.arguments.get("path") for c in calls[: Scan.MAX_REPAIRS]] == [
        f"f{i}.py" for i in range(Scan.MAX_REPAIRS)
    ]
    assert all(c.error is None for c in calls[: Scan.MAX_REPAIRS])
    assert all("too much to repair" in (c.error or "") for c in calls[Scan.MAX_REPAIRS :])
    assert len(calls) == Scan.MAX_REPAIRS + 4
