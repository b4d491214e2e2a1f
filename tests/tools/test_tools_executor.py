"""ToolExecutor: the registry agrees with TOOL_DEFINITIONS; failures become error results."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path

import pytest

from vllm_bot.calls import ToolCall, ToolResult
from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolError, ToolExecutor
from vllm_bot.tools.definitions import TOOL_DEFINITIONS, find_definition
from vllm_bot.tools.executor import CONTEXT_PARAMS


@pytest.fixture
def ex(tmp_path: Path) -> ToolExecutor:
    return ToolExecutor(tmp_path, ToolsConfig())


@pytest.mark.parametrize("definition", TOOL_DEFINITIONS, ids=lambda d: d["function"]["name"])
def test_each_handler_matches_its_schema(ex: ToolExecutor, definition: dict) -> None:
    name = definition["function"]["name"]
    params = definition["function"]["parameters"]
    signature = inspect.signature(ex.handlers[name]).parameters.values()
    schema_args = [p for p in signature if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert [p.name for p in schema_args] == list(params["properties"])
    assert {p.name for p in schema_args if p.default is p.empty} == set(params["required"])
    extras = {p.name for p in signature if p.kind is p.KEYWORD_ONLY}
    assert extras <= set(CONTEXT_PARAMS)


def test_definitions_and_registry_cover_the_same_tools(ex: ToolExecutor) -> None:
    assert [d["function"]["name"] for d in ex.definitions] == ["read", "write", "edit", "exec"]
    assert set(ex.handlers) == {"read", "write", "edit", "exec"}


def test_unknown_tool_lists_what_exists(ex: ToolExecutor) -> None:
    r = ex.execute("Read", {"path": "x"}, call_id="c7")
    assert (r.tool_call_id, r.name, r.kind) == ("c7", "Read", "error")
    assert "unknown tool 'Read'. Did you mean 'read'? Available tools: read, write, edit, exec." in r.value


def test_bad_arguments_are_errors_that_show_the_expected_shape(ex: ToolExecutor) -> None:
    r = ex.execute("read", {"offset": 3})
    assert (
        r.kind == "error"
        and "'path' is a required property" in r.value
        and "read(path, offset?, limit?)" in r.value
    )
    r = ex.execute("exec", {"command": "true", "timeout": "soon"})
    assert r.kind == "error" and "'timeout'" in r.value
    r = ex.execute("write", "not an object")  # type: ignore[arg-type]
    assert r.kind == "error" and "JSON object" in r.value


def test_execute_call_uses_the_call_and_skips_broken_ones(ex: ToolExecutor, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hi\n")
    ok = ex.execute_call(ToolCall("call_1", "read", {"file_path": "f.txt"}))
    assert (ok.tool_call_id, ok.name, ok.kind) == ("call_1", "read", "text")
    broken = ToolCall(
        "call_2", "write", {"path": "g.txt"}, metadata={"error": "arguments were not valid JSON"}
    )
    r = ex.execute_call(broken)
    assert (r.tool_call_id, r.kind, r.value) == ("call_2", "error", "arguments were not valid JSON")
    assert not (tmp_path / "g.txt").exists()


def test_exec_gets_live_output_and_cancel_through_execute_call(ex: ToolExecutor) -> None:
    chunks: list[str] = []
    r = ex.execute_call(
        ToolCall("c", "exec", {"cmd": "echo live"}), on_output=chunks.append, cancel=threading.Event()
    )
    assert r.kind == "text" and chunks == ["live\n"]


def test_registered_tools_run_with_ids_filled_in(ex: ToolExecutor) -> None:
    definition = {
        "type": "function",
        "function": {
            "name": "shout",
            "description": "Upper-case a text.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
    }
    seen: dict[str, object] = {}

    def shout(text: str, *, on_output=None) -> ToolResult:
        seen["on_output"] = on_output
        if text == "fail":
            raise ToolError("cannot shout 'fail'; send other text")
        return ToolResult("", "", "text", text.upper())

    ex.register(definition, shout)
    assert find_definition(ex.definitions, "shout") is definition
    r = ex.execute("shout", {"text": "hi"}, call_id="s1", on_output=print)
    assert (r.tool_call_id, r.name, r.kind, r.value) == ("s1", "shout", "text", "HI")
    assert seen["on_output"] is print
    assert ex.execute("shout", {"text": "fail"}).value == "cannot shout 'fail'; send other text"
    assert ex.execute("shout", {}).kind == "error"
    with pytest.raises(ValueError, match="already registered"):
        ex.register(definition, shout)


def test_a_subset_of_definitions_serves_only_those_tools(tmp_path: Path) -> None:
    read_only = [d for d in TOOL_DEFINITIONS if d["function"]["name"] == "read"]
    ex = ToolExecutor(tmp_path, ToolsConfig(), definitions=read_only)
    assert list(ex.handlers) == ["read"]
    r = ex.execute("exec", {"command": "true"})
    assert r.kind == "error" and "Available tools: read." in r.value


def test_preview_is_none_for_read_exec_and_failures(ex: ToolExecutor) -> None:
    assert ex.preview(ToolCall("p", "read", {"path": "."})) is None
    assert ex.preview(ToolCall("p", "exec", {"command": "rm -rf /"})) is None
    assert ex.preview(ToolCall("p", "edit", {"path": "missing.txt", "oldText": "a", "newText": "b"})) is None
    assert ex.preview(ToolCall("p", "write", {"content": "no path"})) is None
    assert ex.preview(ToolCall("p", "nope", {})) is None


def test_os_errors_become_actionable_messages(ex: ToolExecutor, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    r = ex.execute("read", {"path": "plain/child.txt"})
    assert r.kind == "error" and "plain is a file, not a directory" in r.value
    r = ex.execute("write", {"path": "plain/child.txt", "content": "x"})
    assert r.kind == "error" and "a component of plain is a file, not a directory" in r.value


class CancelHandler:
    """A handler that declares only `cancel` among the extras a handler may take."""

    def __init__(self) -> None:
        self.cancels: list[object] = []

    def __call__(self, *, cancel=None) -> ToolResult:
        self.cancels.append(cancel)
        return ToolResult("", "", "text", "ok")


def test_a_handler_gets_the_extras_it_declares(ex: ToolExecutor) -> None:
    definition = {"type": "function", "function": {"name": "tick", "description": "Tick.", "parameters": {}}}
    handler = CancelHandler()
    ex.register(definition, handler)
    stop = threading.Event()
    for _ in range(3):
        assert ex.execute("tick", {}, cancel=stop, on_output=print).value == "ok"
    assert handler.cancels == [stop, stop, stop]
