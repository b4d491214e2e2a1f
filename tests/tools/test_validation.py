"""Argument validation: a list or object given for a string argument is an error for the model
(only write's content takes it as JSON text), and the expected shape shows numbers as numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_bot.agent.dispatch import check_turn
from vllm_bot.calls import AssistantTurn, ToolCall
from vllm_bot.config import ToolsConfig
from vllm_bot.parsing import parse_tool_calls
from vllm_bot.prompts import message
from vllm_bot.tools import ToolExecutor
from vllm_bot.tools.definitions import TOOL_DEFINITIONS, find_definition
from vllm_bot.tools.validation import ArgumentError, expected_shape, normalize_arguments


@pytest.fixture
def ex(tmp_path: Path) -> ToolExecutor:
    return ToolExecutor(tmp_path, ToolsConfig())


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".vllm-bot" not in p.parts)


def test_a_list_for_a_path_creates_no_file_and_says_what_to_send(ex: ToolExecutor, tmp_path: Path) -> None:
    r = ex.execute("write", {"path": ["a.py"], "content": "print(1)\n"})
    assert r.kind == "error"
    assert "'path': expected a string, got a list [\"a.py\"]" in r.value
    assert 'send the string itself: "path": "a.py"' in r.value
    assert files(tmp_path) == []


def test_a_command_given_as_argv_is_not_run(ex: ToolExecutor, tmp_path: Path) -> None:
    r = ex.execute("exec", {"command": ["touch", "made"]})
    assert r.kind == "error" and "'command': expected a string, got a list" in r.value
    assert "send a single string value" in r.value and "exec(command, timeout?)" in r.value
    assert files(tmp_path) == []


def test_an_object_for_a_path_is_an_error(ex: ToolExecutor, tmp_path: Path) -> None:
    r = ex.execute("read", {"path": {"file": "a.py"}})
    assert r.kind == "error" and "'path': expected a string, got an object" in r.value


def test_write_content_given_as_json_is_written_as_json_text(ex: ToolExecutor, tmp_path: Path) -> None:
    r = ex.execute("write", {"path": "package.json", "content": {"name": "demo", "tags": ["a"]}})
    assert r.kind != "error", r.value
    text = (tmp_path / "package.json").read_text()
    assert json.loads(text) == {"name": "demo", "tags": ["a"]} and text.endswith("}\n")


@pytest.mark.parametrize("field", ["oldText", "newText"])
def test_edit_fragments_must_be_text(ex: ToolExecutor, tmp_path: Path, field: str) -> None:
    (tmp_path / "c.json").write_text('{\n  "a": 1\n}\n')
    args = {"path": "c.json", "oldText": '"a": 1', "newText": '"a": 2'}
    args[field] = {"a": 2}
    r = ex.execute("edit", args)
    assert r.kind == "error" and f"'{field}': expected a string, got an object" in r.value
    assert (tmp_path / "c.json").read_text() == '{\n  "a": 1\n}\n'


def test_other_tools_string_fields_take_no_json_either() -> None:
    definition = {
        "type": "function",
        "function": {
            "name": "mcp__notes__add",
            "parameters": {"type": "object", "properties": {"content": {"type": "string"}}},
        },
    }
    with pytest.raises(ArgumentError, match="'content': expected a string, got a list"):
        normalize_arguments(definition, {"content": ["x"]})
    assert normalize_arguments(definition, {"content": 12}) == {"content": "12"}


def test_json_repaired_to_an_empty_list_is_an_error_not_a_path() -> None:
    (call,) = parse_tool_calls('TOOL_CALL: {"name": "read", "args": {"path": [[[}}')
    assert call.error is not None
    assert "'path': expected a string, got a list []" in call.error


def test_expected_shape_shows_numbers_unquoted() -> None:
    read = find_definition(TOOL_DEFINITIONS, "read")
    assert read is not None
    assert expected_shape(read) == (
        "read(path, offset?, limit?), arguments like "
        '{"path": "<string>", "offset": <integer>, "limit": <integer>}'
    )
    edit = find_definition(TOOL_DEFINITIONS, "edit")
    assert edit is not None and '"replace_all": <boolean>}' in expected_shape(edit)


def test_truncated_call_message_ends_one_sentence_once() -> None:
    call = ToolCall("c1", "write", {"path": "a"}, {"error": message("truncated_call")})
    bare = ToolCall("c2", "write", {}, {"error": "the JSON could not be read"})
    truncated, unreadable = check_turn(AssistantTurn("", [call, bare]), TOOL_DEFINITIONS)
    assert ".." not in truncated and "rest with edit). Expected write(path, content)" in truncated
    assert "could not be read. Expected write" in unreadable


def test_a_tool_without_parameters_takes_an_empty_object() -> None:
    bare = {"type": "function", "function": {"name": "ping", "description": "Ping."}}
    assert normalize_arguments(bare, {}) == {}
