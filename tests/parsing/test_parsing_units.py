"""The parts under parse_tool_calls: reasoning split, JSON scanning and repair, names, values."""

from __future__ import annotations

import pytest

from vllm_bot.parsing import extract_tool_calls, parse_tool_calls, split_reasoning
from vllm_bot.parsing.building import clean_name, jsonable
from vllm_bot.parsing.fmt_python import parse_pythonic
from vllm_bot.parsing.jsonscan import fix_tokens, loads_fast, loads_lenient, scan_value

REASONING = [
    ("<think>plan</think>answer", "plan", "answer"),
    ("<think>\n\n</think>\n\nanswer", "", "answer"),
    ("I should read a.py first.\n</think>\n\nanswer", "I should read a.py first.", "answer"),
    ("<seed:think>plan</seed:think>answer", "plan", "answer"),
    ("◁think▷plan◁/think▷answer", "plan", "answer"),
    ("[THINK]plan[/THINK]answer", "plan", "answer"),
    ("<think>still thinking about it", "still thinking about it", ""),
    ("a<think>x</think>b<think>y</think>c", "x\n\ny", "abc"),
    ("<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>final<|message|>answer<|return|>",
     "plan", "answer"),
    ("analysisThe user greets.assistantfinalHello!", "The user greets.", "Hello!"),
    ("<|channel>thought plan<channel|>answer", "plan", "answer"),
    ("no reasoning here", "", "no reasoning here"),
    ('the string "</think>" is just text', "", 'the string "</think>" is just text'),
    ("analysis of the logs shows a leak", "", "analysis of the logs shows a leak"),
    ("Wrap thoughts in `<think>` tags.", "", "Wrap thoughts in `<think>` tags."),
    ('TOOL_CALL: {"name": "write", "args": {"path": "t", "content": "<think>x"}}', "",
     'TOOL_CALL: {"name": "write", "args": {"path": "t", "content": "<think>x"}}'),
    ("<think>a</think>answer<|im_end|>", "a", "answer"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "reasoning", "content"), REASONING)
def test_split_reasoning(text: str, reasoning: str, content: str) -> None:
    assert split_reasoning(text) == (reasoning, content)


def test_extraction_carries_the_reasoning() -> None:
    extraction = extract_tool_calls(
        '<think>read it first</think>TOOL_CALL: {"name": "read", "args": {"path": "a"}}'
    )
    assert (extraction.reasoning, extraction.content, len(extraction.calls)) == ("read it first", "", 1)


@pytest.mark.parametrize(
    ("text", "start", "end", "closed"),
    [
        ('{"a": "}"} tail', 0, 10, True),
        ('{"a": "\\"}"} x', 0, 12, True),
        ("{'a': '}'}", 0, 10, True),
        ('[{"a": [1, {"b": "]"}]}]', 0, 24, True),
        ('x = {"a": 1}', 4, 12, True),
        ('{"a": {"b": 1}', 0, 14, False),
        ('{"a": "unterminated', 0, 19, False),
        ("{]", 0, 1, False),
        ('read(path="a)b")', 4, 16, True),
    ],
)
def test_scan_value(text: str, start: int, end: int, closed: bool) -> None:
    scanned = scan_value(text, start)
    assert (scanned.end, scanned.closed) == (end, closed)


def test_scan_value_reports_what_would_close() -> None:
    scanned = scan_value('{"a": [1, {"b": "x', 0)
    assert (scanned.in_string, scanned.closers) == ('"', "}]}")


@pytest.mark.parametrize(
    ("body", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": "line1\nline2"}', {"a": "line1\nline2"}),
        ('{"a": [1, 2,], }', {"a": [1, 2]}),
        ("{'a': True, 'b': None, 'c': False}", {"a": True, "b": None, "c": False}),
        ("{'a': 'it\\'s'}", {"a": "it's"}),
        ("{'a': 'say \"hi\"'}", {"a": 'say "hi"'}),
        ('{"a": {"b": 1}', {"a": {"b": 1}}),
        ('{"a": "x', {"a": "x"}),
        ('{"a": 1} trailing prose', {"a": 1}),
        ('{"a": "True stays"}', {"a": "True stays"}),
    ],
)
def test_loads_fast_repairs(body: str, value: object) -> None:
    assert loads_fast(body) == value


def test_loads_lenient_falls_back_to_json_repair() -> None:
    assert loads_lenient('{"content": "print("hi")", "path": "a"}') == {"content": 'print("hi")', "path": "a"}
    assert loads_lenient("{name: 'read'}") == {"name": "read"}
    with pytest.raises(ValueError):
        loads_lenient("just words")
    with pytest.raises(ValueError):
        loads_lenient("")


def test_fix_tokens_leaves_strings_alone() -> None:
    assert fix_tokens('{"a": "True, None,]", "b": True,}') == '{"a": "True, None,]", "b": true}'


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("functions.read", "read"),
        ("functions.read:3", "read"),
        ("read<|channel|>commentary", "read"),
        (' "exec" ', "exec"),
        ("default_api.write", "write"),
        ("`edit`", "edit"),
    ],
)
def test_clean_name(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


def test_jsonable() -> None:
    assert jsonable({"a": (1, 2), 3: [None]}) == {"a": [1, 2], "3": [None]}
    with pytest.raises(ValueError):
        jsonable({"a": b"bytes"})
    with pytest.raises(ValueError):
        jsonable({"a": float("nan")})


def test_parse_pythonic_takes_literals_only() -> None:
    assert parse_pythonic('[a(x=1, y=[1, "2"]), b.c(z={"k": None})]') == [
        ("a", {"x": 1, "y": [1, "2"]}, ()),
        ("b.c", {"z": {"k": None}}, ()),
    ]
    assert parse_pythonic("a(1, -2.5)\nb(flag=true)") == [("a", {}, (1, -2.5)), ("b", {"flag": True}, ())]
    for bad in ("a(x=open('f'))", "a(**kw)", "x = 1", "a(x=1) + 1", "[a(x=1), 2]", ""):
        with pytest.raises(ValueError):
            parse_pythonic(bad)


def test_python_values_that_json_cannot_carry_are_errors() -> None:
    (call,) = parse_tool_calls("TOOL_CALL: write(path='a', content=b'bytes')")
    assert call.error is not None and "bytes" in call.error


def test_null_for_an_optional_argument_means_not_given() -> None:
    (call,) = parse_tool_calls('TOOL_CALL: {"name": "read", "args": {"path": "a", "offset": null}}')
    assert (call.arguments, call.error) == ({"path": "a"}, None)
    (call,) = parse_tool_calls('TOOL_CALL: {"name": "read", "args": {"path": null}}')
    assert call.error is not None and "'path'" in call.error


def test_xml_values_are_typed_by_the_schema() -> None:
    text = (
        "<tool_call>\n<function=write>\n<parameter=path>\n007\n</parameter>\n"
        '<parameter=content>\n{"a": 1}\n</parameter>\n</function>\n</tool_call>'
    )
    (call,) = parse_tool_calls(text)
    assert call.arguments == {"path": "007", "content": '{"a": 1}'}  # string params stay text
    (call,) = parse_tool_calls(
        "<function=read>\n<parameter=path>\na\n</parameter>\n"
        "<parameter=offset>\n 7 \n</parameter>\n</function>"
    )
    assert call.arguments == {"path": "a", "offset": 7}
