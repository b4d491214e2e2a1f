# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: Copyright contributors to the vLLM project
#
# Third-party benchmark data. The model outputs, expected calls and tool sets below are
# transcribed and adapted from the parser test suites of vLLM (https://github.com/vllm-project/vllm),
# licensed under the Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0;
# the same text as this repository's LICENSE). Sources: the vllm-project/vllm test files named per
# family below, under tests/tool_parsers/, tests/tool_use/ and tests/parser/engine/ (none of these
# families' tests is under the older tests/entrypoints/openai/tool_parsers/).
# Changes made here: each case is rewritten into corpus (a)'s shape (id, family, text, expected
# calls, tool set); tools are re-expressed with _fn/_typed, and typed from the expectations where
# the upstream test offers none; the malformed, truncated and unknown-tool tests are left out
# (see below). Benchmark data only: make_families.py copies it into families.yaml for
# bench_parsing_corpus.py; the test suite (tests/) never reads it.

"""Held-out cases for the newer vLLM tool-call families, transcribed from vLLM's own parser tests
(attribution and license: the header above).

Each case is a model output one of vLLM's parser tests feeds in, with the calls that test expects
(name and arguments), in corpus (a)'s shape. Written from the upstream sources only (the test
files named per family below, and the parser source where a test gives only constants), never
from `vllm_bot.parsing`. Used by make_families.py (the cases) and scenarios.py (the tool sets).

Tools: a case offers what its upstream test offers. Where the upstream test offers no tools
(request None, `tools=[]`, a bare mock), the case offers tools named as the calls it expects,
with parameters typed as the upstream expectation types them (a value the test expects as a
string is a string parameter), since the agent always offers its tools. Upstream tests of
malformed or truncated output, and of unknown-tool rejection, are left out: vLLM hands those back
as content, while this project's parser answers a clearly meant broken call with an error call
(docs/parsing.md), so neither expectation is the upstream one.
"""

from __future__ import annotations

import copy
import json
from typing import Any

Call = tuple[str, dict[str, Any]]


def _fn(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict:
    """A function tool; `properties=None` gives a tool without a parameters schema."""
    function: dict[str, Any] = {"name": name}
    if properties is not None:
        function["parameters"] = {"type": "object", "properties": properties}
        if required:
            function["parameters"]["required"] = required
    return {"type": "function", "function": function}


def _typed(tool_name: str, /, **types: Any) -> dict:
    """A tool whose parameters are given as name=type (a string, or a full schema dict)."""
    return _fn(tool_name, {k: (v if isinstance(v, dict) else {"type": v}) for k, v in types.items()})


STR, INT, NUM, BOOL, ARR, OBJ = "string", "integer", "number", "boolean", "array", "object"

# tests/tool_parsers/test_minimax_m3_tool_parser.py: sample_tools()
_M3_TOOLS = [
    _fn(
        "create_order",
        {
            "user_id": {"type": INT},
            "urgent": {"type": BOOL},
            "note": {"type": STR},
            "shipping": {"type": OBJ, "properties": {"city": {"type": STR}, "zip": {"type": INT}}},
            "items": {
                "type": ARR,
                "items": {"type": OBJ, "properties": {"sku": {"type": STR}, "qty": {"type": INT}}},
            },
            "metadata": {"type": OBJ, "additionalProperties": {"type": STR}},
            "duplicate_demo": {"type": OBJ},
        },
    )
]
# tests/tool_parsers/test_solar_open2_tool_parser.py: typed_request, responses_typed_request
_SOLAR_TYPED = [
    _typed("search", query=STR, max_results=INT),
    _typed("do_all_types", s=STR, i=INT, n=NUM, b=BOOL, arr=ARR, obj=OBJ, maybe_int={"type": [INT, "null"]}),
]
_SOLAR_OPTIONS = [_typed("set_options", count=INT, enabled=BOOL)]
# solar tests that pass request=None: no schema, so values stay strings upstream
_SOLAR_UNTYPED = [
    _typed("get_weather", city=STR),
    _typed("get_time"),
    _typed("search", query=STR, max_results=STR),
    _typed("process_data", data=STR),
    _typed("broken", a=STR),
]
# tests/tool_parsers/test_gigachat35_tool_parser.py (common tests, no tools offered)
_GIGACHAT35 = [
    _typed("get_weather", city=STR),
    _typed("get_time", timezone=STR),
    _typed(
        "typed_args",
        string_field=STR,
        int_field=INT,
        float_field=NUM,
        bool_field=BOOL,
        null_field="null",
        array_field=ARR,
        object_field=OBJ,
    ),
    _typed("empty_args"),
    _typed("escaped", text=STR),
    _typed("lookup", query=STR),
    _typed("store", payload=OBJ),
]
# tests/parser/engine/test_inkling.py (mock request, no tools)
_INKLING = [
    _typed("get_weather", city=STR),
    _typed("a"),
    _typed("b", x=ARR),
    _typed("f", q=OBJ, s=STR),
]
# tests/parser/engine/test_deepseek_v41.py (DUMMY_TOOLS; its definition was not in the index,
# so the tools are the called names, typed as the expected values)
_DSV41 = [_typed("get_weather", city=STR, count=INT), _typed("add", x=NUM, y=NUM)]
# tests/tool_use/test_muse_glimmer_tool_parser.py (request None)
_MUSE = [
    _typed("weather.get", city=STR, units=STR),
    _typed("math.add", a=INT, b=INT),
    _typed("math.mul", a=INT, b=INT),
    _typed("api.call", payload=OBJ, flag=BOOL),
]
# tests/tool_use/test_muse_glimmer_toolname_normalize.py: tools with a name only
_MUSE_BARE = [_fn("get_weather")]
_MUSE_NS = [_fn("weather.get")]
# tests/tool_parsers/test_plamo3_tool_parser.py (no tools)
_PLAMO3 = [_typed("get_weather", city=STR), _typed("echo", text=STR), _typed("sum", a=INT, b=INT)]
# tests/tool_parsers/test_k2_horizon_tool_parser.py: TOOLS
_K2 = [_typed("lookup", query=STR, limit=INT, enabled=BOOL), _typed("ping")]
# tests/tool_parsers/test_iquest_coder_v2_tool_parser.py: sample_tools
_IQUEST = [
    _fn(
        "get_current_weather",
        {
            "city": {"type": STR, "description": "The city name"},
            "state": {"type": STR, "description": "The state code"},
            "days": {"type": INT, "description": "Forecast days"},
        },
        ["city", "state"],
    )
]
# tests/tool_parsers/test_nemotron_json_tool_parser.py and test_nemotron_nano_v2_tool_parser.py
# (identical; request.tools = [])
_NEMOTRON = [
    _typed("get_weather", city=STR, unit=STR),
    _typed("lookup", query=STR),
    _typed("run_query", sql=STR),
    _typed("search", filters=OBJ, items=ARR),
    _typed("lookup_timezone", city=STR),
]
# tests/tool_parsers/test_qwen25_coder_tool_parser.py: sample_tools, and per-test tools
_QWEN25 = [
    _fn(
        "get_current_weather",
        {"location": {"type": STR}, "unit": {"type": STR, "enum": ["celsius", "fahrenheit"]}},
        ["location"],
    ),
    _fn("search_web", {"query": {"type": STR}, "num_results": {"type": INT}}, ["query"]),
]
_QWEN25_COMPLEX = [_typed("complex_function", config=OBJ, items=ARR)]
_QWEN25_NOARGS = [_typed("no_args_function")]
# qwen25 tests with request None, and tests/tool_parsers/test_qwen2_5_coder_tool_parser.py
_QWEN25_UNTYPED = [
    _typed("test"),
    _typed("func1", a=INT),
    _typed("func2", b=STR),
    _typed("func3"),
    _typed("get_weather", city=STR),
    _typed("get_time", timezone=STR),
    _typed(
        "test_function",
        string_field=STR,
        int_field=INT,
        float_field=NUM,
        bool_field=BOOL,
        null_field="null",
        array_field=ARR,
        object_field=OBJ,
        quoted=STR,
        path=STR,
        newline=STR,
    ),
    _typed("refresh"),
    _typed("f"),
    _typed("foo", a=INT),
]
# tests/tool_parsers/test_pangu_tool_parser.py and test_openpanguv2_tool_parser.py (no tools)
_PANGU = [
    _typed("get_weather", city=STR, metric=STR),
    _typed("register_user", name=STR, age=INT, address=OBJ, role="null", passed_test=BOOL, aliases=ARR),
    _typed("complex_tool", level1=OBJ),
    _typed("device_control_a"),
    _typed("search", query=STR),
]
# tests/tool_parsers/test_hyperclovax_seed_think_14b_tool_parser.py: tools None, or _TOOLS
_HCX = [
    _typed("get_weather", city=STR, a=INT),
    _typed("get_current_weather", city=STR),
    _typed("a", x=INT),
    _typed("b", y=INT),
]
_HCX_BARE = [_fn("get_weather")]
# vllm/tool_parsers/step_audio_2_tool_parser.py (no upstream test)
_STEP_AUDIO = [_typed("forecast_weather", location=STR)]
# tests/tool_parsers/test_cwm_tool_parser.py (request None)
_CWM = [_typed("terminal", command=STR)]


# tests/tool_parsers/test_rwkv_tool_parser.py: _tool(name) always has the one `city` parameter
def _rwkv(*names: str) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"{n} description",
                "parameters": {"type": "object", "properties": {"city": {"type": STR}}, "required": ["city"]},
            },
        }
        for n in names
    ]


# tests/tool_parsers/test_granite_pythonic_tool_parser.py (request.tools = [])
_GRANITE_PY = [
    _typed("get_weather", location=STR, unit=STR),
    _typed("search_web", query=STR),
    _typed("list_files"),
]

TOOL_SETS: dict[str, list[dict]] = {
    "up_minimax_m3": _M3_TOOLS,
    "up_solar_typed": _SOLAR_TYPED,
    "up_solar_options": _SOLAR_OPTIONS,
    "up_solar_untyped": _SOLAR_UNTYPED,
    "up_gigachat35": _GIGACHAT35,
    "up_inkling": _INKLING,
    "up_deepseek_v41": _DSV41,
    "up_muse": _MUSE,
    "up_muse_bare": _MUSE_BARE,
    "up_muse_ns": _MUSE_NS,
    "up_plamo3": _PLAMO3,
    "up_k2_horizon": _K2,
    "up_iquest_v2": _IQUEST,
    "up_nemotron": _NEMOTRON,
    "up_qwen25": _QWEN25,
    "up_qwen25_complex": _QWEN25_COMPLEX,
    "up_qwen25_noargs": _QWEN25_NOARGS,
    "up_qwen25_untyped": _QWEN25_UNTYPED,
    "up_pangu": _PANGU,
    "up_hcx": _HCX,
    "up_hcx_bare": _HCX_BARE,
    "up_step_audio_2": _STEP_AUDIO,
    "up_cwm": _CWM,
    "up_rwkv_weather": _rwkv("get_weather"),
    "up_rwkv_two": _rwkv("get_weather", "get_forecast"),
    "up_rwkv_read": _rwkv("read"),
    "up_rwkv_edit": _rwkv("edit"),
    "up_rwkv_bash": _rwkv("bash"),
    "up_granite_pythonic": _GRANITE_PY,
}


def _case(family: str, cid: str, text: str, calls: list[Call], tools: str) -> dict[str, Any]:
    assert tools in TOOL_SETS or tools == "default", tools
    return copy.deepcopy(
        {
            "id": cid,
            "family": family,
            "tools": tools,
            "text": text,
            "calls": [{"name": n, "args": a} for n, a in calls],
        }
    )


# ---------------------------------------------------------------- minimax_m3
NS = "]<]minimax[>["


def _m3_order() -> str:
    return (
        f"{NS}<tool_call>\n"
        f'{NS}<invoke name="create_order">'
        f"{NS}<user_id>42{NS}</user_id>"
        f"{NS}<urgent>true{NS}</urgent>"
        f"{NS}<note>Please leave at front desk.{NS}</note>"
        f"{NS}<shipping>"
        f"{NS}<city>Singapore{NS}</city>"
        f"{NS}<zip>018956{NS}</zip>"
        f"{NS}</shipping>"
        f"{NS}<items>"
        f"{NS}<item>{NS}<sku>book-001{NS}</sku>{NS}<qty>2{NS}</qty>{NS}</item>"
        f"{NS}<item>{NS}<sku>pen-007{NS}</sku>{NS}<qty>5{NS}</qty>{NS}</item>"
        f"{NS}</items>"
        f"{NS}<metadata>"
        f"{NS}<source>mobile{NS}</source>"
        f"{NS}<campaign>may-launch{NS}</campaign>"
        f"{NS}</metadata>"
        f"{NS}<duplicate_demo>"
        f"{NS}<tag>a{NS}</tag>"
        f"{NS}<tag>b{NS}</tag>"
        f"{NS}</duplicate_demo>"
        f"{NS}</invoke>\n"
        f"{NS}</tool_call>"
    )


def _m3_invoke(user_id: int) -> str:
    return f'{NS}<invoke name="create_order">{NS}<user_id>{user_id}{NS}</user_id>{NS}</invoke>'


def minimax_m3() -> list[dict[str, Any]]:
    fam, tools = "minimax_m3", "up_minimax_m3"
    order = {
        "user_id": 42,
        "urgent": True,
        "note": "Please leave at front desk.",
        "shipping": {"city": "Singapore", "zip": 18956},
        "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen-007", "qty": 5}],
        "metadata": {"source": "mobile", "campaign": "may-launch"},
        "duplicate_demo": {"tag": ["a", "b"]},
    }
    two = f"{NS}<tool_call>\n{_m3_invoke(1)}\n{_m3_invoke(2)}\n{NS}</tool_call>"
    return [
        _case(
            fam, "up-minimax_m3-nested", "I will create it.\n" + _m3_order(), [("create_order", order)], tools
        ),
        _case(
            fam,
            "up-minimax_m3-multiple",
            two,
            [("create_order", {"user_id": 1}), ("create_order", {"user_id": 2})],
            tools,
        ),
        _case(fam, "up-minimax_m3-plain", "plain response", [], tools),
        _case(fam, "up-minimax_m3-partial-start", f"plain {NS}<tool_ca", [], tools),
    ]


# ---------------------------------------------------------------- solar_open2
_SOLAR_CALL = "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>"


def _solar_one(name: str, *args: tuple[str, str]) -> str:
    body = "".join(f"<|tool_arg:start|>{k}<|tool_arg:value|>{v}<|tool_arg:end|>\n" for k, v in args)
    return f"<|tool_call:start|>{name}\n{body}<|tool_call:end|>"


def solar_open2() -> list[dict[str, Any]]:
    fam, un, ty = "solar_open2", "up_solar_untyped", "up_solar_typed"
    seoul = ("get_weather", {"city": "Seoul"})
    search5 = _solar_one("search", ("query", "vLLM tutorial"), ("max_results", "5"))
    cases = [
        _case(fam, "up-solar-no-call", "This is a regular response.", [], un),
        _case(fam, "up-solar-single", _SOLAR_CALL, [seoul], un),
        _case(fam, "up-solar-content-prefix", "Let me check the weather." + _SOLAR_CALL, [seoul], un),
        _case(
            fam,
            "up-solar-multiple",
            "I'll check both." + _SOLAR_CALL + "\n" + _SOLAR_CALL.replace("Seoul", "Tokyo"),
            [seoul, ("get_weather", {"city": "Tokyo"})],
            un,
        ),
        _case(
            fam,
            "up-solar-args-without-schema",
            search5,
            [("search", {"query": "vLLM tutorial", "max_results": "5"})],
            un,
        ),
        _case(
            fam,
            "up-solar-args-with-schema",
            search5,
            [("search", {"query": "vLLM tutorial", "max_results": 5})],
            ty,
        ),
        _case(
            fam,
            "up-solar-no-arguments",
            "<|tool_call:start|>get_time\n<|tool_call:end|>",
            [("get_time", {})],
            un,
        ),
        _case(
            fam,
            "up-solar-json-like-value",
            _solar_one("process_data", ("data", '{"key": "value"}')),
            [("process_data", {"data": '{"key": "value"}'})],
            un,
        ),
        _case(
            fam,
            "up-solar-reasoning-then-call",
            "<|think:start|>I should use a tool<|think:end|>Sure, let me help." + _SOLAR_CALL,
            [seoul],
            un,
        ),
        _case(fam, "up-solar-whitespace-prefix", "  \n\n" + _SOLAR_CALL, [seoul], un),
        _case(fam, "up-solar-text-after-call", "pre" + _SOLAR_CALL + "post", [seoul], un),
        _case(
            fam,
            "up-solar-text-between-calls",
            "pre" + _SOLAR_CALL + "mid" + _SOLAR_CALL + "post",
            [seoul, seoul],
            un,
        ),
        _case(fam, "up-solar-back-to-back", _SOLAR_CALL + _SOLAR_CALL, [seoul, seoul], un),
        _case(
            fam,
            "up-solar-dropped-arg-end",
            "<|tool_call:start|>broken\n<|tool_arg:start|>a<|tool_arg:value|>oops<|tool_call:end|>"
            + _SOLAR_CALL,
            [("broken", {"a": "oops"}), seoul],
            un,
        ),
        _case(
            fam,
            "up-solar-dropped-call-end",
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM<|tool_arg:end|>\n"
            + _SOLAR_CALL,
            [("search", {"query": "vLLM"}), seoul],
            un,
        ),
        _case(
            fam,
            "up-solar-dropped-call-end-and-arg-end",
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM" + _SOLAR_CALL,
            [("search", {"query": "vLLM"}), seoul],
            un,
        ),
        _case(fam, "up-solar-restart-before-name", "<|tool_call:start|>get_weat" + _SOLAR_CALL, [seoul], un),
        _case(
            fam,
            "up-solar-restart-before-name-prefix",
            "Hmm. <|tool_call:start|>oops" + _SOLAR_CALL,
            [seoul],
            un,
        ),
        _case(
            fam,
            "up-solar-call-end-before-name",
            "<|tool_call:start|>oops<|tool_call:end|>" + _SOLAR_CALL,
            [seoul],
            un,
        ),
        _case(
            fam,
            "up-solar-literal-sentinel-in-value",
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>what does <|tool_call: mean"
            "<|tool_arg:end|>\n<|tool_call:end|>",
            [("search", {"query": "what does <|tool_call: mean"})],
            un,
        ),
        _case(
            fam,
            "up-solar-repeated-arg-first-wins",
            _solar_one("search", ("query", "first"), ("query", "second")),
            [("search", {"query": "first"})],
            un,
        ),
        _case(
            fam,
            "up-solar-all-types",
            _solar_one(
                "do_all_types",
                ("i", "42"),
                ("n", "7.0"),
                ("b", "true"),
                ("arr", "[1, 2]"),
                ("obj", '{"k": "v"}'),
                ("s", "hello"),
            ),
            [("do_all_types", {"i": 42, "n": 7, "b": True, "arr": [1, 2], "obj": {"k": "v"}, "s": "hello"})],
            ty,
        ),
        _case(
            fam,
            "up-solar-unknown-param-string",
            _solar_one("search", ("undeclared", "5")),
            [("search", {"undeclared": "5"})],
            ty,
        ),
        _case(
            fam,
            "up-solar-responses-schema",
            _solar_one("set_options", ("count", "7"), ("enabled", "true")),
            [("set_options", {"count": 7, "enabled": True})],
            "up_solar_options",
        ),
        _case(
            fam,
            "up-solar-content-before-call-typed",
            "I'll check the weather. " + _solar_one("search", ("query", "Seoul"), ("max_results", "3")),
            [("search", {"query": "Seoul", "max_results": 3})],
            ty,
        ),
        _case(fam, "up-solar-plain-parity", "Hello! I cannot help with that.", [], ty),
        _case(fam, "up-solar-partial-sentinel", "see <|to", [], ty),
    ]
    # TestTypeCoercion: one do_all_types argument at a time, typed by the schema.
    coercions = [
        ("integer", "i", "42", 42),
        ("number", "n", "3.14", 3.14),
        ("number-zero-fraction", "n", "7.0", 7),
        ("boolean-true", "b", "true", True),
        ("boolean-True", "b", "True", True),
        ("boolean-1", "b", "1", True),
        ("boolean-false", "b", "false", False),
        ("boolean-0", "b", "0", False),
        ("boolean-yes-stays-string", "b", "yes", "yes"),
        ("array", "arr", "[1, 2, 3]", [1, 2, 3]),
        ("object", "obj", '{"k": "v"}', {"k": "v"}),
        ("integer-or-null", "maybe_int", "9", 9),
        ("null-for-integer", "i", "null", None),
        ("string-keeps-digits", "s", "42", "42"),
        ("integer-not-a-number", "i", "not-a-number", "not-a-number"),
    ]
    for label, key, raw, want in coercions:
        cases.append(
            _case(
                fam,
                f"up-solar-coerce-{label}",
                _solar_one("do_all_types", (key, raw)),
                [("do_all_types", {key: want})],
                ty,
            )
        )
    return cases


# ---------------------------------------------------------------- gigachat35
def _gc_invoke(name: str, *params: tuple[str, str, bool]) -> str:
    body = "".join(
        f'<｜GCML｜parameter name="{k}" string="{str(is_str).lower()}">{v}</｜GCML｜parameter>'
        for k, v, is_str in params
    )
    return f'<｜GCML｜invoke name="{name}">{body}</｜GCML｜invoke>'


def _gc_calls(*calls: str) -> str:
    return f"<｜GCML｜tool_calls>{''.join(calls)}</｜GCML｜tool_calls>"


def gigachat35() -> list[dict[str, Any]]:
    fam, t = "gigachat35", "up_gigachat35"
    tokyo = _gc_invoke("get_weather", ("city", "Tokyo", True))
    return [
        _case(fam, "up-gigachat35-no-call", "Plain answer without a tool call.", [], t),
        _case(fam, "up-gigachat35-single", _gc_calls(tokyo), [("get_weather", {"city": "Tokyo"})], t),
        _case(
            fam,
            "up-gigachat35-parallel",
            _gc_calls(tokyo, _gc_invoke("get_time", ("timezone", "Asia/Tokyo", True))),
            [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
            t,
        ),
        _case(
            fam,
            "up-gigachat35-various-types",
            _gc_calls(
                _gc_invoke(
                    "typed_args",
                    ("string_field", '"hello"', False),
                    ("int_field", "7", False),
                    ("float_field", "3.5", False),
                    ("bool_field", "true", False),
                    ("null_field", "null", False),
                    ("array_field", "[1, 2, 3]", False),
                    ("object_field", '{"nested": true}', False),
                )
            ),
            [
                (
                    "typed_args",
                    {
                        "string_field": "hello",
                        "int_field": 7,
                        "float_field": 3.5,
                        "bool_field": True,
                        "null_field": None,
                        "array_field": [1, 2, 3],
                        "object_field": {"nested": True},
                    },
                )
            ],
            t,
        ),
        _case(
            fam, "up-gigachat35-empty-arguments", _gc_calls(_gc_invoke("empty_args")), [("empty_args", {})], t
        ),
        _case(
            fam,
            "up-gigachat35-surrounding-text",
            "I will check." + _gc_calls(tokyo),
            [("get_weather", {"city": "Tokyo"})],
            t,
        ),
        _case(
            fam,
            "up-gigachat35-escaped-string",
            _gc_calls(_gc_invoke("escaped", ("text", 'line 1\\n"quoted"', True))),
            [("escaped", {"text": 'line 1\\n"quoted"'})],
            t,
        ),
        _case(
            fam,
            "up-gigachat35-alias",
            _gc_calls(_gc_invoke("lookup", ("query", "vLLM", True))),
            [("lookup", {"query": "vLLM"})],
            t,
        ),
        _case(
            fam,
            "up-gigachat35-string-false-object",
            _gc_calls(_gc_invoke("store", ("payload", '{"a": 1}', False))),
            [("store", {"payload": {"a": 1}})],
            t,
        ),
    ]


# ---------------------------------------------------------------- inkling
MSG_MODEL, TEXT_START, THINK_START = "<|message_model|>", "<|content_text|>", "<|content_thinking|>"
TOOL_JSON, TOOL_TEXT, TOOL_ERROR = (
    "<|content_invoke_tool_json|>",
    "<|content_invoke_tool_text|>",
    "<|content_tool_error|>",
)
END_MESSAGE, END_SAMPLING = "<|end_message|>", "<|content_model_end_sampling|>"


def _ink(name: str, args: str) -> str:
    return f'{TOOL_JSON}{{"name":"{name}","args":{args}}}{END_MESSAGE}'


def inkling() -> list[dict[str, Any]]:
    fam, t = "inkling", "up_inkling"
    sf = ("get_weather", {"city": "SF"})
    nested = '{"q":{"deep":{"list":[{"k":"v"}]}},"s":"a}b"}'
    return [
        _case(fam, "up-inkling-bare-text", "hello world", [], t),
        _case(fam, "up-inkling-bare-text-end-message", f"hello world{END_MESSAGE}", [], t),
        _case(fam, "up-inkling-bare-text-end-sampling", f"hello world{END_SAMPLING}", [], t),
        _case(fam, "up-inkling-plain-text", f"{TEXT_START}hello world{END_MESSAGE}", [], t),
        _case(
            fam,
            "up-inkling-reasoning-text-tool",
            f"{THINK_START}I should check the weather.{END_MESSAGE}{MSG_MODEL}{TEXT_START}Let me check.{END_MESSAGE}"
            f"{MSG_MODEL}" + _ink("get_weather", '{"city":"SF"}'),
            [sf],
            t,
        ),
        _case(fam, "up-inkling-header-name", "get_weather" + _ink("get_weather", '{"city":"SF"}'), [sf], t),
        _case(
            fam,
            "up-inkling-parallel",
            _ink("a", "{}") + MSG_MODEL + _ink("b", '{"x":[1,2]}'),
            [("a", {}), ("b", {"x": [1, 2]})],
            t,
        ),
        _case(fam, "up-inkling-nested-args", _ink("f", nested), [("f", json.loads(nested))], t),
        _case(fam, "up-inkling-invoke-tool-text-is-text", f"{TOOL_TEXT}do something{END_MESSAGE}", [], t),
        _case(fam, "up-inkling-tool-error-is-text", f"{TOOL_ERROR}boom{END_MESSAGE}", [], t),
        _case(
            fam,
            "up-inkling-reasoning-end-sampling",
            f"{THINK_START}hm{END_MESSAGE}{MSG_MODEL}{TEXT_START}hi{END_SAMPLING}",
            [],
            t,
        ),
        _case(
            fam,
            "up-inkling-text-after-call",
            _ink("f", "{}") + f"{MSG_MODEL}{TEXT_START}done{END_MESSAGE}",
            [("f", {})],
            t,
        ),
        _case(fam, "up-inkling-marker-in-text", f"{TEXT_START}see {TEXT_START} token{END_MESSAGE}", [], t),
        _case(
            fam,
            "up-inkling-text-then-call",
            f"{TEXT_START}Check this.{END_MESSAGE}{MSG_MODEL}"
            + _ink("get_weather", '{"city":"San Francisco"}'),
            [("get_weather", {"city": "San Francisco"})],
            t,
        ),
    ]


# ---------------------------------------------------------------- deepseek_v41
_DSV41_CALLS = (
    '\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="get_weather">\n'
    '<｜DSML｜ parameter name="city" string="true">杭州</｜DSML｜ parameter>\n'
    '<｜DSML｜ parameter name="count" string="false">42</｜DSML｜ parameter>\n'
    '</｜DSML｜ invoke>\n<｜DSML｜ invoke name="add">\n'
    '<｜DSML｜ parameter name="x" string="false">1.5</｜DSML｜ parameter>\n'
    '<｜DSML｜ parameter name="y" string="false">2.25</｜DSML｜ parameter>\n'
    "</｜DSML｜ invoke>\n</｜DSML｜ calls>"
)


def deepseek_v41() -> list[dict[str, Any]]:
    fam, t = "deepseek_v41", "up_deepseek_v41"
    both = [("get_weather", {"city": "杭州", "count": 42}), ("add", {"x": 1.5, "y": 2.25})]
    return [
        _case(fam, "up-deepseek_v41-content-then-calls", "Checking." + _DSV41_CALLS, both, t),
        _case(
            fam, "up-deepseek_v41-thinking-content-calls", "Plan.</think>Checking." + _DSV41_CALLS, both, t
        ),
        _case(fam, "up-deepseek_v41-complete", _DSV41_CALLS, both, t),
        _case(fam, "up-deepseek_v41-thinking-complete", "Plan.</think>" + _DSV41_CALLS, both, t),
        _case(fam, "up-deepseek_v41-no-call", "12", [], t),
        _case(fam, "up-deepseek_v41-thinking-no-call", "Plan.</think>12", [], t),
    ]


# ---------------------------------------------------------------- muse_glimmer
def _muse_call(name: str) -> str:
    return (
        f"<|start|>assistant to={name}<|message|>"
        f'<atem:function_calls>\n<atem:invoke name="{name}">\n'
        f'<atem:parameter name="city">Paris</atem:parameter>\n'
        f"</atem:invoke>\n</atem:function_calls>"
    )


def muse_glimmer() -> list[dict[str, Any]]:
    fam, t = "muse_glimmer", "up_muse"
    paris = {"city": "Paris"}
    return [
        _case(
            fam,
            "up-muse-single-after-reasoning",
            "to=self<|message|>Let me check the weather.<|eom|>"
            "<|start|>assistant to=weather.get<|message|>"
            '<atem:function_calls>\n<atem:invoke name="weather.get">\n'
            '<atem:parameter name="city">Paris</atem:parameter>\n'
            '<atem:parameter name="units">celsius</atem:parameter>\n'
            "</atem:invoke>\n</atem:function_calls><|eot|>",
            [("weather.get", {"city": "Paris", "units": "celsius"})],
            t,
        ),
        _case(
            fam,
            "up-muse-parallel",
            "<|start|>assistant to=math.add<|message|>"
            '<atem:function_calls>\n<atem:invoke name="math.add">\n'
            '<atem:parameter name="a">1</atem:parameter>\n'
            '<atem:parameter name="b">2</atem:parameter>\n'
            "</atem:invoke>\n</atem:function_calls><|eom|>"
            "<|start|>assistant to=math.mul<|message|>"
            '<atem:function_calls>\n<atem:invoke name="math.mul">\n'
            '<atem:parameter name="a">3</atem:parameter>\n'
            '<atem:parameter name="b">4</atem:parameter>\n'
            "</atem:invoke>\n</atem:function_calls><|eot|>",
            [("math.add", {"a": 1, "b": 2}), ("math.mul", {"a": 3, "b": 4})],
            t,
        ),
        _case(
            fam,
            "up-muse-echoed-invoke-in-reasoning",
            'to=self<|message|>I could call <atem:invoke name="evil.fn">'
            '<atem:parameter name="x">1</atem:parameter></atem:invoke> but I will not.<|eom|>'
            "<|start|>assistant to=user<|message|>The answer is 42.<|eot|>",
            [],
            t,
        ),
        _case(fam, "up-muse-plain-answer", "to=user<|message|>Just a plain answer.<|eot|>", [], t),
        _case(
            fam,
            "up-muse-json-values",
            "<|start|>assistant to=api.call<|message|>"
            '<atem:function_calls>\n<atem:invoke name="api.call">\n'
            '<atem:parameter name="payload">{"nested": [1, 2, 3]}</atem:parameter>\n'
            '<atem:parameter name="flag">true</atem:parameter>\n'
            "</atem:invoke>\n</atem:function_calls><|eot|>",
            [("api.call", {"payload": {"nested": [1, 2, 3]}, "flag": True})],
            t,
        ),
        _case(
            fam,
            "up-muse-doubled-bare-name",
            _muse_call("get_weather.get_weather"),
            [("get_weather", paris)],
            "up_muse_bare",
        ),
        _case(
            fam,
            "up-muse-namespaced-name-kept",
            _muse_call("weather.get"),
            [("weather.get", paris)],
            "up_muse_ns",
        ),
        _case(
            fam,
            "up-muse-trailing-segment",
            _muse_call("foo.get_weather"),
            [("get_weather", paris)],
            "up_muse_bare",
        ),
        _case(fam, "up-muse-exact-name", _muse_call("get_weather"), [("get_weather", paris)], "up_muse_bare"),
    ]


# ---------------------------------------------------------------- plamo3
_PL_REQS, _PL_REQS_END = "<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>"
_PL_EOT = "<|plamo:tag|>"


def _pl_call(name: str, arguments: str) -> str:
    return (
        "<|plamo:begin_tool_request:plamo|>"
        f"<|plamo:begin_tool_name:plamo|>{name}<|plamo:end_tool_name:plamo|>"
        f"<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{arguments}"
        "<|plamo:end_tool_arguments:plamo|>"
        "<|plamo:end_tool_request:plamo|>"
    )


def _pl_reqs(*calls: str) -> str:
    return f"{_PL_REQS}{''.join(calls)}{_PL_REQS_END}{_PL_EOT}"


def plamo3() -> list[dict[str, Any]]:
    fam, t = "plamo3", "up_plamo3"
    return [
        _case(fam, "up-plamo3-regular", "Regular response", [], t),
        _case(fam, "up-plamo3-regular-eot-ignored", f"Regular response{_PL_EOT}ignored", [], t),
        _case(fam, "up-plamo3-partial-marker", "Answer<|plamo:begin_", [], t),
        _case(
            fam,
            "up-plamo3-content-then-call",
            "Checking the weather." + _pl_reqs(_pl_call("get_weather", '{"city": "Tokyo"}')),
            [("get_weather", {"city": "Tokyo"})],
            t,
        ),
        _case(
            fam,
            "up-plamo3-two-calls",
            _pl_reqs(_pl_call("echo", '{"text": "hi"}'), _pl_call("sum", '{"a": 1, "b": 2}')),
            [("echo", {"text": "hi"}), ("sum", {"a": 1, "b": 2})],
            t,
        ),
        _case(
            fam,
            "up-plamo3-before-tools-two-calls",
            "Before tools."
            + _pl_reqs(_pl_call("echo", '{"text": "hi"}'), _pl_call("sum", '{"a": 1, "b": 2}')),
            [("echo", {"text": "hi"}), ("sum", {"a": 1, "b": 2})],
            t,
        ),
    ]


# ---------------------------------------------------------------- k2_horizon
def _k2_group(*calls: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + "<ifm|tool_calls>" + "\n".join(calls) + "</ifm|tool_calls>" + suffix


def _k2_json(name: str, arguments: dict) -> str:
    return f"<ifm|tool_call>{json.dumps({'name': name, 'arguments': arguments})}</ifm|tool_call>"


def _k2_xml(name: str, arguments: list[tuple[str, str]], typed: bool = False) -> str:
    parts = [f"<ifm|tool_call>{name}"]
    for key, value in arguments:
        parts.append(f"<ifm|arg_key>{key}</ifm|arg_key>")
        if typed:
            parts.append(f"<ifm|arg_type>{'integer' if key == 'limit' else 'string'}</ifm|arg_type>")
        parts.append(f"<ifm|arg_value>{value}</ifm|arg_value>")
    parts.append("</ifm|tool_call>")
    return "".join(parts)


def k2_horizon() -> list[dict[str, Any]]:
    fam, t = "k2_horizon", "up_k2_horizon"
    return [
        _case(
            fam,
            "up-k2-xml-two-calls-prose",
            _k2_group(
                _k2_xml("lookup", [("query", "123"), ("limit", "3")]),
                _k2_xml("ping", []),
                prefix="Before ",
                suffix=" after.",
            ),
            [("lookup", {"query": "123", "limit": 3}), ("ping", {})],
            t,
        ),
        _case(
            fam, "up-k2-json", _k2_group(_k2_json("lookup", {"limit": "2"})), [("lookup", {"limit": 2})], t
        ),
        _case(
            fam,
            "up-k2-xml-typed",
            _k2_group(_k2_xml("lookup", [("query", "weather"), ("limit", "2")], typed=True)),
            [("lookup", {"query": "weather", "limit": 2})],
            t,
        ),
        _case(
            fam,
            "up-k2-json-boolean-string",
            _k2_group(_k2_json("lookup", {"enabled": "true"})),
            [("lookup", {"enabled": True})],
            t,
        ),
        _case(
            fam,
            "up-k2-xml-prose-both-sides",
            _k2_group(_k2_xml("lookup", [("limit", "2")]), prefix="Before", suffix="after"),
            [("lookup", {"limit": 2})],
            t,
        ),
        _case(
            fam,
            "up-k2-json-prose-both-sides",
            _k2_group(_k2_json("lookup", {"limit": "2"}), prefix="Before", suffix="after"),
            [("lookup", {"limit": 2})],
            t,
        ),
        _case(
            fam,
            "up-k2-xml-typed-prose-both-sides",
            _k2_group(_k2_xml("lookup", [("limit", "2")], typed=True), prefix="Before", suffix="after"),
            [("lookup", {"limit": 2})],
            t,
        ),
        _case(
            fam,
            "up-k2-whitespace-around",
            _k2_group(_k2_xml("ping", []), prefix=" \n", suffix="\t "),
            [("ping", {})],
            t,
        ),
    ]


# ---------------------------------------------------------------- iquest_coder_v2
def _iq(name: str, *pairs: tuple[str, str]) -> str:
    body = name + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in pairs)
    return f"<iquestcoder_tool_call>{body}</iquestcoder_tool_call>"


def iquest_coder_v2() -> list[dict[str, Any]]:
    fam, t = "iquest_coder_v2", "up_iquest_v2"
    gcw = "get_current_weather"
    return [
        _case(fam, "up-iquest_v2-no-call", "Just a plain assistant reply with no tool call.", [], t),
        _case(
            fam,
            "up-iquest_v2-typed",
            _iq(gcw, ("city", "Dallas"), ("state", "TX"), ("days", "3")),
            [(gcw, {"city": "Dallas", "state": "TX", "days": 3})],
            t,
        ),
        _case(fam, "up-iquest_v2-string-digits", _iq(gcw, ("city", "12345")), [(gcw, {"city": "12345"})], t),
        _case(fam, "up-iquest_v2-no-arguments", _iq(gcw), [(gcw, {})], t),
        _case(
            fam,
            "up-iquest_v2-leading-content",
            "Let me look that up for you.\n" + _iq(gcw, ("city", "Dallas")),
            [(gcw, {"city": "Dallas"})],
            t,
        ),
        _case(
            fam,
            "up-iquest_v2-parallel",
            _iq(gcw, ("city", "Dallas")) + _iq(gcw, ("city", "Orlando")),
            [(gcw, {"city": "Dallas"}), (gcw, {"city": "Orlando"})],
            t,
        ),
        _case(
            fam,
            "up-iquest_v2-whitespace",
            f"<iquestcoder_tool_call>{gcw}\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n"
            "</iquestcoder_tool_call>",
            [(gcw, {"city": "Dallas"})],
            t,
        ),
        _case(
            fam,
            "up-iquest_v2-content-then-call",
            "Checking the weather." + _iq(gcw, ("city", "Dallas")),
            [(gcw, {"city": "Dallas"})],
            t,
        ),
    ]


# ---------------------------------------------------------------- nemotron
def nemotron() -> list[dict[str, Any]]:
    fam, t = "nemotron", "up_nemotron"
    tokyo = ("get_weather", {"city": "Tokyo"})
    two = (
        '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}, '
        '{"name": "lookup_timezone", "arguments": {"city": "Tokyo"}}]</TOOLCALL>'
    )
    return [
        _case(fam, "up-nemotron-no-call", "No tool call here.", [], t),
        _case(
            fam,
            "up-nemotron-array-after-prose",
            'Let me check that.<TOOLCALL>[{"name": "get_weather", '
            '"arguments": {"city": "Tokyo", "unit": "celsius"}}]</TOOLCALL>',
            [("get_weather", {"city": "Tokyo", "unit": "celsius"})],
            t,
        ),
        _case(
            fam,
            "up-nemotron-single-object",
            '<TOOLCALL>{"name": "lookup", "arguments": {"query": "vllm"}}</TOOLCALL>',
            [("lookup", {"query": "vllm"})],
            t,
        ),
        _case(
            fam,
            "up-nemotron-string-arguments",
            '<TOOLCALL>[{"name": "run_query", "arguments": "{\\"sql\\": \\"select 1\\"}"}]</TOOLCALL>',
            [("run_query", {"sql": "select 1"})],
            t,
        ),
        _case(
            fam,
            "up-nemotron-nested",
            '<TOOLCALL>[{"name": "search", "arguments": {"filters": {"city": "Tokyo"}, '
            '"items": [{"name": "rain", "value": true}]}}]</TOOLCALL>',
            [("search", {"filters": {"city": "Tokyo"}, "items": [{"name": "rain", "value": True}]})],
            t,
        ),
        _case(
            fam,
            "up-nemotron-after-think",
            "<think>\nI need the weather for Tokyo.\n</think>\n"
            '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]</TOOLCALL>',
            [tokyo],
            t,
        ),
        _case(fam, "up-nemotron-two-calls", two, [tokyo, ("lookup_timezone", {"city": "Tokyo"})], t),
        _case(
            fam,
            "up-nemotron-prose-then-call",
            'Let me check.<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]</TOOLCALL>',
            [tokyo],
            t,
        ),
    ]


# ---------------------------------------------------------------- qwen2_5_coder
def qwen2_5_coder() -> list[dict[str, Any]]:
    fam, t, un = "qwen2_5_coder", "up_qwen25", "up_qwen25_untyped"
    gcw = "get_current_weather"
    cases = [
        # tests/tool_parsers/test_qwen25_coder_tool_parser.py
        _case(fam, "up-qwen25-no-call", "This is a regular response without tool calls.", [], t),
        _case(
            fam,
            "up-qwen25-single",
            '<tools>\n{"name": "get_current_weather", "arguments": {"location": "San Francisco, CA", '
            '"unit": "celsius"}}\n</tools>',
            [(gcw, {"location": "San Francisco, CA", "unit": "celsius"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-with-content",
            'Let me check the weather for you.\n<tools>\n{"name": "get_current_weather", '
            '"arguments": {"location": "Tokyo, Japan"}}\n</tools>',
            [(gcw, {"location": "Tokyo, Japan"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-parallel-array",
            '<tools>\n[\n    {"name": "get_current_weather", "arguments": {"location": "Paris, France"}},\n'
            '    {"name": "search_web", "arguments": {"query": "Paris attractions", "num_results": 5}}\n]\n</tools>',
            [
                (gcw, {"location": "Paris, France"}),
                ("search_web", {"query": "Paris attractions", "num_results": 5}),
            ],
            t,
        ),
        _case(
            fam,
            "up-qwen25-multiple-blocks",
            '<tools>\n{"name": "get_current_weather", "arguments": {"location": "London, UK"}}\n</tools>\n'
            '<tools>\n{"name": "search_web", "arguments": {"query": "London events"}}\n</tools>',
            [(gcw, {"location": "London, UK"}), ("search_web", {"query": "London events"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-parameters-key",
            '<tools>\n{"name": "get_current_weather", "parameters": {"location": "Berlin, Germany"}}\n</tools>',
            [(gcw, {"location": "Berlin, Germany"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-nested",
            '<tools>\n{"name": "complex_function", "arguments": {"config": {"nested": {"deep": true}}, '
            '"items": [1, 2, {"key": "value"}]}}\n</tools>',
            [("complex_function", {"config": {"nested": {"deep": True}}, "items": [1, 2, {"key": "value"}]})],
            "up_qwen25_complex",
        ),
        _case(
            fam,
            "up-qwen25-empty-arguments",
            '<tools>\n{"name": "no_args_function", "arguments": {}}\n</tools>',
            [("no_args_function", {})],
            "up_qwen25_noargs",
        ),
        _case(
            fam,
            "up-qwen25-incomplete-tools-tag",
            '<tools>\n{"name": "test", "arguments": {}}',
            [("test", {})],
            un,
        ),
        _case(
            fam,
            "up-qwen25-whitespace",
            '<tools>\n\n  {  "name"  :  "get_current_weather"  ,  "arguments"  :  {  "location"  :  "Chicago"  }  }'
            "\n\n</tools>",
            [(gcw, {"location": "Chicago"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-special-characters",
            '<tools>\n{"name": "search_web", "arguments": {"query": "What\'s the weather? <tag> & stuff"}}\n</tools>',
            [("search_web", {"query": "What's the weather? <tag> & stuff"})],
            t,
        ),
        _case(
            fam,
            "up-qwen25-format-simple",
            '<tools>{"name": "func1", "arguments": {"a": 1}}</tools>',
            [("func1", {"a": 1})],
            un,
        ),
        _case(
            fam,
            "up-qwen25-format-parameters-key",
            '<tools>{"name": "func2", "parameters": {"b": "test"}}</tools>',
            [("func2", {"b": "test"})],
            un,
        ),
        _case(
            fam,
            "up-qwen25-format-newlines",
            '<tools>\n{"name": "func3", "arguments": {}}\n</tools>',
            [("func3", {})],
            un,
        ),
        # tests/tool_parsers/test_qwen2_5_coder_tool_parser.py (common tests, no tools)
        _case(fam, "up-qwen2_5-no-call", "This is a regular response without any tool calls.", [], un),
        _case(
            fam,
            "up-qwen2_5-single",
            '<tools>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</tools>',
            [("get_weather", {"city": "Tokyo"})],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-parallel",
            '<tools>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</tools><tools>{"name": "get_time", '
            '"arguments": {"timezone": "Asia/Tokyo"}}</tools>',
            [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-various-types",
            '<tools>{"name": "test_function", "arguments": {"string_field": "hello", "int_field": 42, '
            '"float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], '
            '"object_field": {"nested": "value"}}}</tools>',
            [
                (
                    "test_function",
                    {
                        "string_field": "hello",
                        "int_field": 42,
                        "float_field": 3.14,
                        "bool_field": True,
                        "null_field": None,
                        "array_field": ["a", "b", "c"],
                        "object_field": {"nested": "value"},
                    },
                )
            ],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-empty-arguments",
            '<tools>{"name": "refresh", "arguments": {}}</tools>',
            [("refresh", {})],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-surrounding-text",
            'Let me check the weather for you.\n\n<tools>{"name": "get_weather", "arguments": {"city": "Tokyo"}}'
            "</tools>\n\nI will get that information.",
            [("get_weather", {"city": "Tokyo"})],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-escaped-strings",
            '<tools>{"name": "test_function", "arguments": {"quoted": "He said \\"hello\\"", '
            '"path": "C:\\\\Users\\\\file.txt", "newline": "line1\\nline2"}}</tools>',
            [
                (
                    "test_function",
                    {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt", "newline": "line1\nline2"},
                )
            ],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-text-before-tag",
            'Hello <tools>{"name": "f", "arguments": {}}</tools>',
            [("f", {})],
            un,
        ),
        _case(
            fam,
            "up-qwen2_5-text-after-close",
            '<tools>{"name": "foo", "arguments": {"a": 1}}</tools> Done!',
            [("foo", {"a": 1})],
            un,
        ),
    ]
    return cases


# ---------------------------------------------------------------- pangu / openpangu_v2
def pangu() -> list[dict[str, Any]]:
    fam, t = "pangu", "up_pangu"
    sf = ("get_weather", {"city": "San Francisco", "metric": "celsius"})
    user = (
        "register_user",
        {
            "name": "John Doe",
            "age": 37,
            "address": {"city": "San Francisco", "state": "CA"},
            "role": None,
            "passed_test": True,
            "aliases": ["John", "Johnny"],
        },
    )
    user_json = (
        '{"name": "register_user", "arguments": {"name": "John Doe", "age": 37, "address": {"city": '
        '"San Francisco", "state": "CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}}'
    )
    sf_json = '{"name": "get_weather", "arguments": {"city": "San Francisco", "metric": "celsius"}}'

    def wrap(body: str) -> str:
        return f"<|tool_call_start|>{body}<|tool_call_end|>"

    def v2(calls: list[dict]) -> str:
        return wrap(json.dumps(calls, ensure_ascii=False))

    return [
        # tests/tool_parsers/test_pangu_tool_parser.py
        _case(fam, "up-pangu-no-call", "How can I help you today?", [], t),
        _case(fam, "up-pangu-single", wrap(f"[{sf_json}]"), [sf], t),
        _case(fam, "up-pangu-two", wrap(f"[{sf_json}, {user_json}]"), [sf, user], t),
        _case(
            fam,
            "up-pangu-content-before",
            "I will call the tool now. " + wrap('[{"name": "get_weather", "arguments": {"city": "Boston"}}]'),
            [("get_weather", {"city": "Boston"})],
            t,
        ),
        _case(
            fam,
            "up-pangu-content-after",
            wrap('[{"name": "get_weather", "arguments": {"city": "Seattle"}}]') + "\nThank you!",
            [("get_weather", {"city": "Seattle"})],
            t,
        ),
        _case(
            fam,
            "up-pangu-nested",
            wrap(
                '[{"name": "complex_tool", "arguments": {"level1": {"level2": {"level3": {"value": 123}}}}}]'
            ),
            [("complex_tool", {"level1": {"level2": {"level3": {"value": 123}}}})],
            t,
        ),
        _case(
            fam,
            "up-pangu-empty-arguments",
            wrap('[{"name": "get_weather", "arguments": {}}]'),
            [("get_weather", {})],
            t,
        ),
        _case(
            fam,
            "up-pangu-empty-then-full",
            wrap(f'[{{"name": "get_weather", "arguments": {{}}}}, {user_json}]'),
            [("get_weather", {}), user],
            t,
        ),
        _case(
            fam,
            "up-pangu-answer-close-after",
            wrap('[{"name": "get_weather", "arguments": {"city": "Boston"}}]') + "\n</answer>",
            [("get_weather", {"city": "Boston"})],
            t,
        ),
        _case(
            fam,
            "up-pangu-newlines-inside",
            'some content\n<|tool_call_start|>\n[{"name": "device_control_a", "arguments": {}}]\n<|tool_call_end|>',
            [("device_control_a", {})],
            t,
        ),
        # tests/tool_parsers/test_openpanguv2_tool_parser.py
        _case(fam, "up-openpangu_v2-no-call", "Hello, I am an AI assistant.", [], t),
        _case(
            fam,
            "up-openpangu_v2-single",
            "Thought: I need to check weather."
            + v2([{"name": "get_weather", "arguments": {"city": "Beijing"}}]),
            [("get_weather", {"city": "Beijing"})],
            t,
        ),
        _case(
            fam,
            "up-openpangu_v2-two",
            "Let me help you."
            + v2(
                [
                    {"name": "get_weather", "arguments": {"city": "Beijing"}},
                    {"name": "search", "arguments": {"query": "weather forecast"}},
                ]
            ),
            [("get_weather", {"city": "Beijing"}), ("search", {"query": "weather forecast"})],
            t,
        ),
    ]


# ---------------------------------------------------------------- hyperclovax_seed_think_14b
_HCX_HEADER, _HCX_END = " -> tool/function_call\n", "<|im_end|>"


def hyperclovax_seed_think_14b() -> list[dict[str, Any]]:
    fam, t = "hyperclovax_seed_think_14b", "up_hcx"
    return [
        _case(
            fam,
            "up-hcx14b-header-array",
            _HCX_HEADER + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]' + _HCX_END,
            [("get_weather", {"city": "Seoul"})],
            t,
        ),
        _case(
            fam,
            "up-hcx14b-parameters-alias",
            _HCX_HEADER + '[{"name": "get_weather", "parameters": {"a": 1}}]' + _HCX_END,
            [("get_weather", {"a": 1})],
            t,
        ),
        _case(
            fam,
            "up-hcx14b-bare-array-handoff",
            '[{"name": "get_weather", "parameters": {"city": "Busan"}}]',
            [("get_weather", {"city": "Busan"})],
            "up_hcx_bare",
        ),
        _case(
            fam,
            "up-hcx14b-multiple",
            _HCX_HEADER
            + '[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {"y": 2}}]'
            + _HCX_END,
            [("a", {"x": 1}), ("b", {"y": 2})],
            t,
        ),
        _case(
            fam,
            "up-hcx14b-header-array-unterminated",
            _HCX_HEADER + '[{"name": "get_weather", "arguments": {"city": "Seoul"}}]',
            [("get_weather", {"city": "Seoul"})],
            t,
        ),
        _case(
            fam,
            "up-hcx14b-abbreviated-not-a-call",
            '-> tool/get_current_weather\n{"city": "Seoul"}',
            [],
            t,
        ),
        _case(fam, "up-hcx14b-plain", "I cannot find the weather right now.", [], t),
    ]


# ---------------------------------------------------------------- step_audio_2
def step_audio_2() -> list[dict[str, Any]]:
    """From vllm/tool_parsers/step_audio_2_tool_parser.py (vLLM has no test for it): a call is
    `<tool_call>` + `function\\nNAME\\nJSON` + `</tool_call>`, its example `forecast_weather`."""
    fam, t = "step_audio_2", "up_step_audio_2"
    sh = '<tool_call>function\nforecast_weather\n{"location": "shanghai"}</tool_call>'
    bj = '<tool_call>function\nforecast_weather\n{"location": "beijing"}</tool_call>'
    return [
        _case(fam, "up-step_audio_2-single", sh, [("forecast_weather", {"location": "shanghai"})], t),
        _case(
            fam,
            "up-step_audio_2-content-before",
            "Let me check the forecast.\n" + sh,
            [("forecast_weather", {"location": "shanghai"})],
            t,
        ),
        _case(
            fam,
            "up-step_audio_2-two",
            sh + bj,
            [("forecast_weather", {"location": "shanghai"}), ("forecast_weather", {"location": "beijing"})],
            t,
        ),
        _case(fam, "up-step_audio_2-no-call", "It will be sunny in Shanghai tomorrow.", [], t),
    ]


# ---------------------------------------------------------------- cwm
def cwm() -> list[dict[str, Any]]:
    fam, t = "cwm", "up_cwm"
    find = 'find . -name "*.py" | xargs grep -n "def bulk_create"'
    return [
        _case(fam, "up-cwm-no-call", "This is a test", [], t),
        _case(
            fam,
            "up-cwm-terminal-inline",
            f"<think>Let me search.</think>\n<tool: function>\nterminal {find}\n</tool>\n",
            [("terminal", {"command": find})],
            t,
        ),
        _case(
            fam,
            "up-cwm-two-terminals",
            "preamble\n<tool: function>\nterminal echo hi\n</tool>\n<tool: function>\nterminal echo bye\n</tool>\n",
            [("terminal", {"command": "echo hi"}), ("terminal", {"command": "echo bye"})],
            t,
        ),
    ]


# ---------------------------------------------------------------- rwkv
def _rwkv_md(name: str, arguments: dict) -> str:
    return (
        "**Tool Call:**\n```json\n" + json.dumps({"name": name, "arguments": arguments}, indent=2) + "\n```"
    )


def rwkv() -> list[dict[str, Any]]:
    fam = "rwkv"
    paris = ("get_weather", {"city": "Paris"})
    edit = (
        "edit",
        {"path": "calculator.py", "edits": [{"oldText": "return a - b", "newText": "return a + b"}]},
    )
    return [
        _case(fam, "up-rwkv-no-call", "There is no tool call here.", [], "default"),
        _case(
            fam, "up-rwkv-markdown", _rwkv_md("get_weather", {"city": "Paris"}), [paris], "up_rwkv_weather"
        ),
        _case(
            fam,
            "up-rwkv-markdown-parallel",
            _rwkv_md("get_weather", {"city": "Paris"}) + "\n" + _rwkv_md("get_forecast", {"city": "Berlin"}),
            [paris, ("get_forecast", {"city": "Berlin"})],
            "up_rwkv_two",
        ),
        _case(
            fam,
            "up-rwkv-standalone-json-fence",
            "I should check the weather.</think>\n```json\n{\n"
            '  "name": "get_weather",\n'
            '  "arguments": "{\\"city\\": \\"Paris\\"}",\n'
            '  "id": "call_123"\n'
            "}\n```\n```json\n"
            '{"name": "unknown_weather", "arguments": {"city": "Berlin"}}\n```',
            [paris],
            "up_rwkv_weather",
        ),
        _case(
            fam,
            "up-rwkv-legacy-read",
            "Need to inspect the file.\n<tool_call>\n"
            "{'arguments': {'action': 'view_file', 'industryType': 'code', "
            "'filePath': 'calculator.py'}, 'name': 'read', 'type': 'tool_call'}\n",
            [("read", {"path": "calculator.py"})],
            "up_rwkv_read",
        ),
        _case(
            fam,
            "up-rwkv-legacy-edit",
            "<tool_call>\n{'arguments': {'action': 'replace_text', 'filePath': 'calculator.py', "
            "'oldText': 'return a - b', 'newText': 'return a + b'}, 'name': 'edit', 'type': 'tool_call'}\n",
            [edit],
            "up_rwkv_edit",
        ),
        _case(
            fam,
            "up-rwkv-legacy-edit-nested-path",
            "<tool_call>\n{'arguments': {'edits': [{'path': 'calculator.py', "
            "'oldText': 'return a - b', 'newText': 'return a + b'}]}, 'name': 'edit', 'type': 'tool_call'}\n",
            [edit],
            "up_rwkv_edit",
        ),
        _case(
            fam,
            "up-rwkv-bash-fence-is-content",
            "You can run this command manually:\n```bash\n"
            "perl -0pi -e 's/return a - b/return a + b/' /tmp/calculator.py\n```\n",
            [],
            "up_rwkv_bash",
        ),
        _case(
            fam,
            "up-rwkv-bash-json",
            _rwkv_md("bash", {"command": "python /tmp/calculator.py"}),
            [("bash", {"command": "python /tmp/calculator.py"})],
            "up_rwkv_bash",
        ),
        _case(
            fam,
            "up-rwkv-prose-then-markdown",
            "Checking.\n" + _rwkv_md("get_weather", {"city": "Paris"}),
            [paris],
            "up_rwkv_weather",
        ),
        _case(
            fam,
            "up-rwkv-prose-then-json-fence",
            'Checking.\n```json\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n```',
            [paris],
            "up_rwkv_weather",
        ),
        _case(
            fam,
            "up-rwkv-legacy-read-file-path",
            "Need to inspect the file.\n<tool_call>\n"
            "{'arguments': {'filePath': 'calculator.py'}, 'name': 'read', 'type': 'tool_call'}\n",
            [("read", {"path": "calculator.py"})],
            "up_rwkv_read",
        ),
        _case(
            fam,
            "up-rwkv-prose-bash-fence-is-content",
            "Running it.\n```bash\npython /tmp/calculator.py\n```\n",
            [],
            "up_rwkv_bash",
        ),
    ]


# ---------------------------------------------------------------- granite_pythonic
def granite_pythonic() -> list[dict[str, Any]]:
    fam, t = "granite_pythonic", "up_granite_pythonic"
    return [
        _case(
            fam,
            "up-granite_py-single",
            'get_weather(location="San Francisco", unit="celsius")',
            [("get_weather", {"location": "San Francisco", "unit": "celsius"})],
            t,
        ),
        _case(
            fam,
            "up-granite_py-two-lines",
            'get_weather(location="Paris")\nsearch_web(query="vLLM release notes")',
            [("get_weather", {"location": "Paris"}), ("search_web", {"query": "vLLM release notes"})],
            t,
        ),
        _case(fam, "up-granite_py-no-args", "list_files()", [("list_files", {})], t),
        _case(fam, "up-granite_py-plain", "I don't need to call any tools to answer this.", [], t),
        _case(
            fam,
            "up-granite_py-mixed",
            'Sure, let me check the weather.\nget_weather(location="London")',
            [("get_weather", {"location": "London"})],
            t,
        ),
        _case(
            fam,
            "up-granite_py-trailing-newline",
            'get_weather(location="Berlin")\n',
            [("get_weather", {"location": "Berlin"})],
            t,
        ),
        _case(fam, "up-granite_py-plain-newline", "Hello, how can I help you today?\n", [], t),
    ]


FAMILIES = [
    minimax_m3,
    solar_open2,
    inkling,
    gigachat35,
    deepseek_v41,
    muse_glimmer,
    plamo3,
    k2_horizon,
    iquest_coder_v2,
    nemotron,
    qwen2_5_coder,
    pangu,
    hyperclovax_seed_think_14b,
    step_audio_2,
    cwm,
    rwkv,
    granite_pythonic,
]


def upstream_cases() -> list[dict[str, Any]]:
    return [case for family in FAMILIES for case in family()]
