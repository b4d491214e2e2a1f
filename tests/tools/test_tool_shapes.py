"""Compact schema shapes for the text-mode prompt and argument-error hints (tools/shapes.py)."""

import pytest

from vllm_bot.tools.definitions import TOOL_DEFINITIONS, find_definition, signature
from vllm_bot.tools.shapes import SIGNATURE_BUDGET, example_arguments, shape, typed_signature
from vllm_bot.tools.validation import ArgumentError, normalize_arguments


def tool(name, properties, required=(), **extra):
    parameters = {"type": "object", "properties": properties, "required": list(required), **extra}
    return {"type": "function", "function": {"name": name, "description": "", "parameters": parameters}}


ENTITIES = tool(
    "mcp__memory__create_entities",
    {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "entityType": {"type": "string"},
                    "observations": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "entityType", "observations"],
            },
        }
    },
    ["entities"],
)


def test_built_in_tools_show_their_types():
    assert [signature(d) for d in TOOL_DEFINITIONS] == [
        "read(path: string, offset?: integer, limit?: integer)",
        "write(path: string, content: string)",
        "edit(path: string, oldText: string, newText: string, replace_all?: boolean)",
        "exec(command: string, timeout?: integer)",
    ]
    assert signature(find_definition(TOOL_DEFINITIONS, "read"), typed=False) == "read(path, offset?, limit?)"


def test_nested_arrays_of_objects_show_their_keys_and_item_types():
    assert typed_signature(ENTITIES) == (
        "mcp__memory__create_entities(entities: [{name: string, entityType: string, observations: [string]}])"
    )


@pytest.mark.parametrize(
    ("schema", "drawn"),
    [
        ({"type": "string", "enum": ["Text", "Blob"]}, '"Text"|"Blob"'),
        ({"enum": list(range(10))}, "0|1|2|3|4|5|6|7|…"),
        ({"const": "x"}, '"x"'),
        ({"type": ["string", "null"]}, "string|null"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "string|null"),
        (
            {"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
            "integer|[integer]",
        ),
        ({"type": "object", "additionalProperties": {"type": "number"}}, "{string: number}"),
        ({"type": "object"}, "object"),
        ({"type": "array"}, "[any]"),
        ({"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}, "[number, number]"),
        ({}, "any"),
        ({"properties": {"a.b": {"type": "boolean"}}, "required": ["a.b"]}, '{"a.b": boolean}'),
        (
            {
                "allOf": [
                    {"properties": {"a": {"type": "string"}}},
                    {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
                ]
            },
            "{a?: string, b: integer}",
        ),
    ],
)
def test_shapes(schema, drawn):
    assert shape(schema) == drawn


def test_refs_resolve_and_recursion_stops():
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
    }
    assert shape(tree) == "{root?: {id?: string, kids?: [{id?: string, kids?: array}]}}"
    assert shape({"$ref": "#/nowhere"}, {}) == "any"


def test_a_signature_past_its_budget_is_drawn_shallower():
    wide = {
        f"field_{i}": {"type": "object", "properties": {f"k{j}": {"type": "string"} for j in range(6)}}
        for i in range(8)
    }
    text = typed_signature(tool("wide", wide))
    assert len(text) <= SIGNATURE_BUDGET
    assert text.startswith("wide(field_0?: object, field_1?: object")  # every parameter, shallower


def test_a_signature_that_cannot_fit_keeps_the_names():
    many = {f"parameter_number_{i}": {"type": "string"} for i in range(40)}
    text = typed_signature(tool("many", many, ["parameter_number_0"]))
    assert text.startswith("many(parameter_number_0, parameter_number_1?, ")


def test_error_hints_show_the_nested_shape_not_a_bare_array():
    assert example_arguments(ENTITIES["function"]["parameters"]) == (
        '{"entities": [{"name": "<string>", "entityType": "<string>", "observations": ["<string>"]}]}'
    )
    with pytest.raises(ArgumentError) as e:
        normalize_arguments(ENTITIES, {"entities": "Alice"})
    message = str(e.value)
    assert "<array>" not in message
    assert message.endswith(
        'Expected mcp__memory__create_entities(entities), arguments like {"entities": [{"name": "<string>", '
        '"entityType": "<string>", "observations": ["<string>"]}]}'
    )
