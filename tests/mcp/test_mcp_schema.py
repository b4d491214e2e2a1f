"""MCP tool listings -> OpenAI tool definitions: what is sent, what is trimmed, what is skipped."""

import json

import pytest

from vllm_bot.mcp.names import NameTable
from vllm_bot.mcp.schema import (
    DESCRIPTION_LIMIT,
    PROPERTY_DESCRIPTION_LIMIT,
    ToolSkipped,
    compact,
    convert_listing,
    convert_tool,
    trim,
)
from vllm_bot.mcp.screen import screened
from vllm_bot.tools.validation import normalize_arguments

ISSUE_SCHEMA = {
    "type": "object",
    "title": "create_issueArguments",
    "$schema": "http://json-schema.org/draft-07/schema#",
    "properties": {
        "title": {"type": "string", "title": "Title", "description": "Issue title."},
        "labels": {"type": "array", "items": {"type": "string", "title": "Label"}},
        "repo": {"$ref": "#/$defs/Repo"},
    },
    "required": ["title", "repo"],
    "$defs": {"Repo": {"type": "object", "title": "Repo", "properties": {"owner": {"type": "string"}}}},
}


def convert(tool, server="github"):
    return convert_tool(server, tool, NameTable())


def test_definition_in_openai_format():
    tool = convert(
        {
            "name": "create_issue",
            "description": "Create an issue.\n\n   In a repository.",
            "inputSchema": ISSUE_SCHEMA,
            "annotations": {"destructiveHint": False, "title": "Create issue"},
        }
    )
    assert tool.public == "mcp__github__create_issue" and tool.name == "create_issue"
    assert tool.annotations == {"destructiveHint": False, "title": "Create issue"}
    fn = tool.definition["function"]
    assert tool.definition["type"] == "function"
    assert fn["name"] == "mcp__github__create_issue"
    assert fn["description"] == "Create an issue. In a repository."
    params = fn["parameters"]
    # Annotation keywords are gone; a parameter that is itself called "title" stays.
    assert "title" not in params and "$schema" not in params
    assert params["properties"]["title"] == {"type": "string", "description": "Issue title."}
    assert params["properties"]["labels"] == {"type": "array", "items": {"type": "string"}}
    assert params["$defs"]["Repo"] == {"type": "object", "properties": {"owner": {"type": "string"}}}
    assert params["required"] == ["title", "repo"]
    json.dumps(tool.definition)


def test_converted_schema_validates_arguments():
    tool = convert({"name": "create_issue", "inputSchema": ISSUE_SCHEMA})
    args = normalize_arguments(tool.definition, {"title": "Bug", "repo": {"owner": "me"}})
    assert args == {"title": "Bug", "repo": {"owner": "me"}}


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ({"description": "no name"}, "a tool without a name (description: no name)"),
        ({"name": "  ", "inputSchema": {"type": "object"}}, "a tool without a name"),
        (
            {"name": "t", "inputSchema": {"type": "array"}},
            't: its inputSchema has type "array", not "object"',
        ),
        ({"name": "t", "inputSchema": "string"}, "t: its inputSchema is not an object schema"),
        ({"name": "t"}, "t: it has no inputSchema (MCP requires one, even when empty)"),
        (
            {"name": "t", "inputSchema": {"type": "object", "default": {1, 2}}},
            "t: its inputSchema is not JSON",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "maximum": float("nan")}},
            "t: its inputSchema is not JSON",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}}},
            "t: its inputSchema refers to '#/$defs/Nope', which it does not contain",
        ),
        (
            {
                "name": "t",
                "inputSchema": {"type": "object", "properties": {"x": {"$ref": "https://x.io/s.json"}}},
            },
            "refers to 'https://x.io/s.json'",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "strng"}}}},
            "t: its inputSchema is not valid JSON Schema",
        ),
        ({"name": "t", "inputSchema": {"type": "object", "required": "x"}}, "not valid JSON Schema"),
        (
            {"name": "research", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            'research: it can only run as a task (execution.taskSupport "required"), which vllm-bot does not support',
        ),
    ],
)
def test_tools_that_cannot_be_sent_are_skipped(tool, reason):
    with pytest.raises(ToolSkipped) as info:
        convert(tool)
    assert reason in str(info.value)


@pytest.mark.parametrize(
    "ref",
    ["#", "#/properties/a", "#/$defs/a~1b", "#/$defs/with%20space", "#/$defs/list/items", "#node"],
)
def test_local_refs_that_resolve_are_kept(ref):
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "r": {"$ref": ref}},
        "$defs": {
            "a/b": {"type": "integer"},
            "with space": {},
            "list": {"items": {}},
            "n": {"$anchor": "node"},
        },
    }
    tool = convert({"name": "t", "inputSchema": schema})
    assert tool.definition["function"]["parameters"]["properties"]["r"] == {"$ref": ref}


def test_missing_type_means_object():
    params = convert({"name": "t", "inputSchema": {"properties": {}}}).definition["function"]["parameters"]
    assert params["type"] == "object"


def test_description_falls_back_to_title_then_name_and_is_trimmed():
    bare = {"name": "t", "inputSchema": {"type": "object"}}
    assert convert({**bare, "title": "Nice title"}).definition["function"]["description"] == "Nice title"
    assert convert(bare).definition["function"]["description"] == "t"
    long = "Does things. " * 100
    description = convert({**bare, "description": long}).definition["function"]["description"]
    assert len(description) <= DESCRIPTION_LIMIT and description.endswith("Does things.")


def test_property_descriptions_are_trimmed():
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "word " * 100}}}
    params = convert({"name": "t", "inputSchema": schema}).definition["function"]["parameters"]
    assert len(params["properties"]["q"]["description"]) <= PROPERTY_DESCRIPTION_LIMIT


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("  spaced \n\n out  ", 20, "spaced out"),
        ("First sentence. Second sentence goes on.", 28, "First sentence."),
        ("First sentence. Second sentence goes on.", 30, "First sentence. Second…"),
        ("one two three four five six", 15, "one two three…"),
        ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),
    ],
)
def test_trim(text, limit, expected):
    assert trim(text, limit) == expected
    assert len(trim(text, limit)) <= limit


def test_compact_walks_every_subschema_position():
    schema = {
        "title": "x",
        "anyOf": [{"title": "a", "type": "string"}],
        "items": [{"title": "b"}],
        "additionalProperties": {"title": "c", "type": "integer"},
        "not": {"title": "d"},
        "enum": [{"title": "an enum value stays"}],
        "default": {"title": "a default stays"},
    }
    assert compact(schema) == {
        "anyOf": [{"type": "string"}],
        "items": [{}],
        "additionalProperties": {"type": "integer"},
        "not": {},
        "enum": [{"title": "an enum value stays"}],
        "default": {"title": "a default stays"},
    }


def test_listing_keeps_order_skips_bad_tools_and_gives_clean_names_priority():
    listing = [
        {"name": "get.issue", "inputSchema": {"type": "object"}},
        {"name": "broken", "inputSchema": {"type": "array"}},
        {"name": "get_issue", "inputSchema": {"type": "object"}},
    ]
    tools, skipped = convert_listing("gh", listing, NameTable())
    assert [t.name for t in tools] == ["get.issue", "get_issue"]
    assert tools[1].public == "mcp__gh__get_issue"
    assert (
        tools[0].public.startswith("mcp__gh__get_issue_")
        and len(tools[0].public) == len("mcp__gh__get_issue_") + 8
    )
    assert skipped == ['broken: its inputSchema has type "array", not "object"']


@pytest.mark.parametrize("support", ["forbidden", "optional"])
def test_tools_that_may_run_without_a_task_are_kept(support):
    assert convert({"name": "t", "inputSchema": {"type": "object"}, "execution": {"taskSupport": support}})


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_screen_takes_out_only_the_tools_the_sdk_cannot_read(version):
    good = {"name": "good", "inputSchema": {"type": "object"}}
    bad = {"name": "bad", "inputSchema": {"type": "string"}}
    result = {"tools": [good, bad, {"inputSchema": {"type": "object"}}], "nextCursor": "2"}
    kept, rejected = screened(result, version)
    # Fields the result as a whole lacks for this version are the SDK's to report, not a tool's fault.
    assert kept == {"tools": [good], "nextCursor": "2"}
    assert [(r.tool, r.problem) for r in rejected] == [
        (bad, "inputSchema.type: Input should be 'object'"),
        ({"inputSchema": {"type": "object"}}, "name: Field required"),
    ]
    assert screened({"tools": [good]}, version) == ({"tools": [good]}, [])
    assert screened({"tools": "none"}, version) == ({"tools": "none"}, [])
