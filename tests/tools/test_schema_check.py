"""schema_check gives jsonschema's answers on the schemas it covers (issue 22): the same errors, with
the same messages, fields and paths, for generated schemas and arguments; schemas with any other
keyword are left to jsonschema; and a call to a built-in tool never imports jsonschema."""

import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bot.tools import schema_check
from vllm_bot.tools.definitions import TOOL_DEFINITIONS
from vllm_bot.tools.validation import ArgumentError, normalize_arguments

ROOT = Path(__file__).resolve().parents[2]
NAMES = st.sampled_from(["path", "offset", "limit", "content", "replace_all", "x"])
TYPE_NAMES = st.sampled_from(sorted(schema_check.TYPES))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=8,
)


def _schemas(inner: Any) -> Any:
    keywords = st.fixed_dictionaries(
        {},
        optional={
            "type": TYPE_NAMES | st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True),
            "properties": st.dictionaries(NAMES, inner, max_size=4),
            "required": st.lists(NAMES, max_size=3, unique=True),
            "additionalProperties": st.booleans() | inner,
            "minimum": st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False),
            "description": st.text(max_size=5),
        },
    )
    return keywords


schemas = st.recursive(_schemas(st.just({})), _schemas, max_leaves=6)


def fields(errors: Any) -> list[tuple[Any, ...]]:
    key = sorted(errors, key=lambda e: (len(e.absolute_path), str(e.message)))
    return [
        (e.message, e.validator, repr(e.validator_value), repr(e.instance), tuple(e.absolute_path))
        for e in key
    ]


@settings(max_examples=600, deadline=None)
@given(schema=schemas, instance=json_values)
def test_the_same_errors_as_jsonschema(schema, instance):
    assert schema_check.covers(schema)
    ours = fields(schema_check.iter_errors(schema, instance))
    theirs = fields(jsonschema.Draft202012Validator(schema).iter_errors(instance))
    assert sorted(ours) == sorted(theirs)
    assert [o[0] for o in ours] == [t[0] for t in theirs]  # the order the model reads them in


def test_the_built_in_tools_are_covered_and_other_keywords_are_not():
    assert all(schema_check.covers(d["function"]["parameters"]) for d in TOOL_DEFINITIONS)
    for other in (
        {"type": "string", "enum": ["a", "b"]},
        {"type": "array", "items": {"type": "string"}},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"$ref": "#/$defs/x"},
        {"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}},
        {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
        {"type": "custom"},
        {"type": "number", "minimum": "0"},
        {"type": "object", "properties": {"p": False}},
        True,
    ):
        assert not schema_check.covers(other), other


def test_a_schema_it_does_not_cover_is_still_checked_by_jsonschema():
    definition = {
        "type": "function",
        "function": {
            "name": "pick",
            "parameters": {
                "type": "object",
                "properties": {"c": {"type": "string", "enum": ["red", "blue"]}},
            },
        },
    }
    assert normalize_arguments(definition, {"c": "red"}) == {"c": "red"}
    try:
        normalize_arguments(definition, {"c": "green"})
    except ArgumentError as e:
        assert "'green' is not one of ['red', 'blue']" in str(e)
    else:
        raise AssertionError("an enum violation passed")


CALLS = """
import sys
sys.path.insert(0, {src!r})
from vllm_bot.tools.definitions import TOOL_DEFINITIONS
from vllm_bot.tools.validation import ArgumentError, normalize_arguments
read = next(d for d in TOOL_DEFINITIONS if d["function"]["name"] == "read")
print(normalize_arguments(read, {{"path": "a.txt", "offset": "3"}}))
try:
    normalize_arguments(read, {{"path": ["a.txt"], "bogus": 1}})
except ArgumentError as e:
    print(e)
print("jsonschema" in sys.modules)
"""


def test_built_in_calls_are_checked_without_importing_jsonschema():
    code = CALLS.format(src=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    first, error, imported = out.stdout.splitlines()
    assert first == "{'path': 'a.txt', 'offset': 3}"
    assert "unknown argument(s) ('bogus' was unexpected)" in error
    assert 'send the string itself: "path": "a.txt"' in error
    assert imported == "False"
