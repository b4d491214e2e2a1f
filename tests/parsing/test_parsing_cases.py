"""The table of realistic replies in tests/data/parsing_cases.yaml, each with its expected calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_parsing_schema import tool_definition

from vllm_bot.parsing import extract_tool_calls, parse_tool_calls

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "parsing_cases.yaml").read_text(encoding="utf-8")
)

_STRING = {"type": "string"}
_WEATHER = tool_definition("get_weather", {"city": _STRING, "unit": _STRING}, ["city"])
# The tools a case offers (its `tools:` key); the built-in tools when it names none.
TOOL_SETS: dict[str, list[dict[str, Any]]] = {
    "weather": [_WEATHER],
    "weather_time": [_WEATHER, tool_definition("get_time", {"timezone": _STRING}, ["timezone"])],
    "typed": [
        tool_definition(
            "edit_file",
            {
                "old_string": _STRING,
                "new_string": _STRING,
                "indent": {"type": "integer"},
                "scale": {"type": "number"},
                "enabled": {"type": "boolean"},
            },
            ["old_string"],
        )
    ],
}


def tools_of(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    return TOOL_SETS[case["tools"]] if "tools" in case else None


def test_the_table_is_big_and_varied() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(CASES) >= 150
    assert sum(1 for c in CASES if not c.get("calls")) >= 15
    assert sum(1 for c in CASES if len(c.get("calls") or []) >= 2) >= 20


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    extraction = extract_tool_calls(case["text"], tools_of(case))
    expected = case.get("calls") or []
    got = extraction.calls
    assert len(got) == len(expected), [(c.name, c.arguments, c.metadata) for c in got]
    for call, want in zip(got, expected, strict=True):
        json.dumps(call.arguments)  # history must carry valid JSON arguments
        assert call.id.startswith("call_")
        if "error" in want:
            assert call.error is not None, (call.name, call.arguments)
            assert want["error"] in call.error
            if "name" in want:
                assert call.name == want["name"]
        else:
            assert call.error is None, call.error
            assert (call.name, call.arguments) == (want["name"], want["args"])
        if "source" in case:
            assert call.metadata["source"] == case["source"]
    if "content" in case:
        assert extraction.content == case["content"]


def test_parse_tool_calls_is_extract_calls() -> None:
    text = 'TOOL_CALL: {"name": "read", "args": {"path": "a"}}'
    assert [(c.name, c.arguments) for c in parse_tool_calls(text)] == [("read", {"path": "a"})]


def test_ids_are_unique() -> None:
    text = "\n".join(f'TOOL_CALL: {{"name": "read", "args": {{"path": "{i}"}}}}' for i in range(20))
    assert len({c.id for c in parse_tool_calls(text)}) == 20


def test_error_messages_show_the_format() -> None:
    (call,) = parse_tool_calls("<tool_call>\nnot json at all\n</tool_call>")
    assert call.error is not None
    assert "not json at all" in call.error
    assert 'TOOL_CALL: {"name": ' in call.error


def test_unknown_tool_error_lists_the_tools() -> None:
    (call,) = parse_tool_calls('TOOL_CALL: {"name": "grep", "args": {"pattern": "x"}}')
    assert call.error is not None
    assert "read, write, edit, exec" in call.error


def test_formats_in_order() -> None:
    text = (
        '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>\n'
        'TOOL_CALL: {"name": "read", "args": {"path": "b"}}\n'
        '<tool_call>{"name": "read", "arguments": {"path": "c"}}</tool_call>'
    )
    assert extract_tool_calls(text).formats == ["hermes", "tool_call_block"]


def test_custom_definitions_drive_names_and_types() -> None:
    definitions = [
        {
            "type": "function",
            "function": {
                "name": "search",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "maxResults": {"type": "integer"}},
                    "required": ["query"],
                },
            },
        }
    ]
    text = (
        "<tool_call>\n<function=search>\n<parameter=query>\nx\n</parameter>\n"
        "<parameter=max_results>\n5\n</parameter>\n</function>\n</tool_call>"
    )
    (call,) = parse_tool_calls(text, definitions)
    assert (call.name, call.arguments) == ("search", {"query": "x", "maxResults": 5})
    (bare,) = parse_tool_calls('{"name": "search", "arguments": {"query": "y"}}', definitions)
    assert bare.name == "search"
    assert parse_tool_calls('{"name": "read", "arguments": {"path": "y"}}', definitions) == []
