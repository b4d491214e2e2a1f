"""Formats that write argument values as raw text get them converted by the tool's schema, in
every family; and the calls that depend on which tools are offered (Kimi's bare counter)."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_bot.parsing import parse_tool_calls


def tool_definition(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TRIAGE = [
    tool_definition(
        "triage",
        {
            "title": {"type": "string"},
            "priority": {"type": "integer"},
            "weight": {"type": "number"},
            "urgent": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object"},
        },
        ["title"],
    )
]
WANT = {
    "title": "disk full on db-2",
    "priority": 2,
    "weight": 0.25,
    "urgent": True,
    "tags": ["ops", "p1"],
    "meta": {"team": "infra", "page": False},
}
TAGS = '["ops", "p1"]'
META = '{"team": "infra", "page": false}'

TYPED_REPLIES = {
    "qwen3_coder": (
        "<tool_call>\n<function=triage>\n<parameter=title>\ndisk full on db-2\n</parameter>\n"
        "<parameter=priority>\n2\n</parameter>\n<parameter=weight>\n0.25\n</parameter>\n"
        f"<parameter=urgent>\ntrue\n</parameter>\n<parameter=tags>\n{TAGS}\n</parameter>\n"
        f"<parameter=meta>\n{META}\n</parameter>\n</function>\n</tool_call>"
    ),
    "openhands_bare_function": (
        "<function=triage>\n<parameter=title>disk full on db-2</parameter>\n<parameter=priority>2</parameter>\n"
        "<parameter=weight>0.25</parameter>\n<parameter=urgent>True</parameter>\n"
        f"<parameter=tags>{TAGS}</parameter>\n<parameter=meta>{META}</parameter>\n</function>"
    ),
    "glm45": (
        "<tool_call>triage\n<arg_key>title</arg_key>\n<arg_value>disk full on db-2</arg_value>\n"
        "<arg_key>priority</arg_key>\n<arg_value>2</arg_value>\n<arg_key>weight</arg_key>\n"
        "<arg_value>0.25</arg_value>\n<arg_key>urgent</arg_key>\n<arg_value>true</arg_value>\n"
        f"<arg_key>tags</arg_key>\n<arg_value>{TAGS}</arg_value>\n<arg_key>meta</arg_key>\n"
        f"<arg_value>{META}</arg_value>\n</tool_call>"
    ),
    "hy_v3": (
        "<tool_calls><tool_call>triage<tool_sep><arg_key>title</arg_key><arg_value>disk full on db-2"
        "</arg_value><arg_key>priority</arg_key><arg_value>2</arg_value><arg_key>weight</arg_key>"
        "<arg_value>0.25</arg_value><arg_key>urgent</arg_key><arg_value>true</arg_value><arg_key>tags"
        f"</arg_key><arg_value>{TAGS}</arg_value><arg_key>meta</arg_key><arg_value>{META}</arg_value>"
        "</tool_call></tool_calls>"
    ),
    "minimax_m2": (
        '<minimax:tool_call>\n<invoke name="triage">\n<parameter name="title">disk full on db-2</parameter>\n'
        '<parameter name="priority">2</parameter>\n<parameter name="weight">0.25</parameter>\n'
        f'<parameter name="urgent">true</parameter>\n<parameter name="tags">{TAGS}</parameter>\n'
        f'<parameter name="meta">{META}</parameter>\n</invoke>\n</minimax:tool_call>'
    ),
    "seed_oss": (
        "<seed:tool_call>\n<function=triage>\n<parameter=title>disk full on db-2</parameter>\n"
        "<parameter=priority>2</parameter>\n<parameter=weight>0.25</parameter>\n"
        f"<parameter=urgent>true</parameter>\n<parameter=tags>{TAGS}</parameter>\n"
        f"<parameter=meta>{META}</parameter>\n</function>\n</seed:tool_call>"
    ),
    "step3": (
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="triage"><steptml:parameter name="title">disk full on db-2</steptml:parameter>'
        '<steptml:parameter name="priority">2</steptml:parameter><steptml:parameter name="weight">0.25'
        '</steptml:parameter><steptml:parameter name="urgent">true</steptml:parameter>'
        f'<steptml:parameter name="tags">{TAGS}</steptml:parameter><steptml:parameter name="meta">{META}'
        "</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"
    ),
    "deepseek_dsml": (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="triage">\n<｜DSML｜parameter name="title" string="true">'
        'disk full on db-2</｜DSML｜parameter>\n<｜DSML｜parameter name="priority" string="false">2'
        '</｜DSML｜parameter>\n<｜DSML｜parameter name="weight" string="false">0.25</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="urgent" string="false">true</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="tags" string="false">{TAGS}</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="meta" string="false">{META}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    ),
    "minicpm5": (
        '<function name="triage"><param name="title">disk full on db-2</param><param name="priority">2</param>'
        '<param name="weight">0.25</param><param name="urgent">true</param>'
        f'<param name="tags">{TAGS}</param><param name="meta">{META}</param></function>'
    ),
    "kimi_k3": (
        '<|open|>tools<|sep|><|open|>call tool="triage" index="1"<|sep|>'
        '<|open|>argument key="title" type="string"<|sep|>disk full on db-2<|close|>argument<|sep|>'
        '<|open|>argument key="priority" type="integer"<|sep|>2<|close|>argument<|sep|>'
        '<|open|>argument key="weight" type="number"<|sep|>0.25<|close|>argument<|sep|>'
        '<|open|>argument key="urgent" type="boolean"<|sep|>true<|close|>argument<|sep|>'
        f'<|open|>argument key="tags" type="array"<|sep|>{TAGS}<|close|>argument<|sep|>'
        f'<|open|>argument key="meta" type="object"<|sep|>{META}<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|>"
    ),
}


@pytest.mark.parametrize("text", TYPED_REPLIES.values(), ids=TYPED_REPLIES.keys())
def test_raw_values_are_converted_by_the_schema(text: str) -> None:
    (call,) = parse_tool_calls(text, TRIAGE)
    assert call.error is None, call.error
    assert (call.name, call.arguments) == ("triage", WANT)


def test_a_value_that_does_not_fit_its_type_is_an_error_for_the_model() -> None:
    text = "<tool_call>\n<function=triage>\n<parameter=title>\nx\n</parameter>\n<parameter=priority>\nhigh\n</parameter>\n</function>\n</tool_call>"
    (call,) = parse_tool_calls(text, TRIAGE)
    assert call.error is not None and "priority" in call.error


WEATHER = [tool_definition("get_weather", {"city": {"type": "string"}}, ["city"])]


# `functions.get_weather` without its `:0` was read here too until issue 36 made it an error call
# (tests/parsing/data/parsing_cases.yaml, kimi-name-without-counter-one-tool).
@pytest.mark.parametrize("head", ["0", "functions.0", "get_weather:0"])
def test_kimi_counter_or_bare_name_with_one_tool_offered(head: str) -> None:
    text = (
        f"<|tool_calls_section_begin|><|tool_call_begin|>{head}<|tool_call_argument_begin|>"
        '{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    (call,) = parse_tool_calls(text, WEATHER)
    assert (call.name, call.arguments, call.error) == ("get_weather", {"city": "Oslo"}, None)


def test_a_bare_counter_among_several_tools_is_an_error() -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>0<|tool_call_argument_begin|>"
        '{"path": "a"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    (call,) = parse_tool_calls(text)
    assert call.error is not None and "unknown tool" in call.error


def test_langchain_action_must_name_an_offered_tool() -> None:
    text = '{"action": "get_weather", "action_input": "Lima"}'
    assert [(c.name, c.arguments) for c in parse_tool_calls(text, WEATHER)] == [
        ("get_weather", {"city": "Lima"})
    ]
    assert parse_tool_calls(text) == []


def test_a_tool_whose_schema_has_a_properties_parameter_may_be_called_with_it() -> None:
    tools = [
        tool_definition("define", {"type": {"type": "string"}, "properties": {"type": "object"}}, ["type"])
    ]
    text = (
        '<tool_call>{"name": "define", "arguments": {"type": "object", "properties": {"a": {}}}}</tool_call>'
    )
    (call,) = parse_tool_calls(text, tools)
    assert (call.name, call.error) == ("define", None)


def _atem(name: str) -> str:
    return (
        f'<|start|>assistant to={name}<|message|><atem:function_calls>\n<atem:invoke name="{name}">\n'
        '<atem:parameter name="city">Oslo</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>'
    )


@pytest.mark.parametrize("name", ["weather.get_weather", "svc.v2.get_weather", "svc.Get-Weather"])
def test_a_namespaced_name_means_the_offered_tool_its_last_segment_names(name: str) -> None:
    (call,) = parse_tool_calls(_atem(name), WEATHER)
    assert (call.name, call.arguments, call.error) == ("get_weather", {"city": "Oslo"}, None)
    hermes = f'<tool_call>{{"name": "{name}", "arguments": {{"city": "Oslo"}}}}</tool_call>'
    assert [c.name for c in parse_tool_calls(hermes, WEATHER)] == ["get_weather"]


def test_an_offered_dotted_name_is_taken_whole() -> None:
    tools = [tool_definition("geo.get_weather", {"city": {"type": "string"}}, []), *WEATHER]
    assert [c.name for c in parse_tool_calls(_atem("geo.get_weather"), tools)] == ["geo.get_weather"]
    assert [c.name for c in parse_tool_calls(_atem("other.get_weather"), tools)] == ["get_weather"]


@pytest.mark.parametrize(
    "name", ["weather.lookup", "get_weather.now", "get_weathe", "weather.", ".get_weather"]
)
def test_a_name_whose_last_segment_is_not_offered_stays_unknown(name: str) -> None:
    (call,) = parse_tool_calls(_atem(name), WEATHER)
    assert call.error is not None and f"unknown tool {name!r}" in call.error


def test_a_last_segment_matching_two_tools_only_loosely_is_unknown() -> None:
    tools = [tool_definition("get_weather", {}, []), tool_definition("Get-Weather", {}, [])]
    (call,) = parse_tool_calls(_atem("svc.GET_WEATHER"), tools)
    assert call.error is not None and "unknown tool 'svc.GET_WEATHER'" in call.error


@pytest.mark.parametrize(
    "text",
    [
        'The client wraps it:\nweather.get_weather(city="Oslo")\n',
        'It returns {"name": "svc.get_weather", "arguments": {"city": "Oslo"}} when asked.',
        '{"name": "svc.get_weather", "arguments": {"city": "Oslo"}}',
    ],
)
def test_a_namespaced_name_in_bare_text_is_not_a_call(text: str) -> None:
    assert parse_tool_calls(text, WEATHER) == []
