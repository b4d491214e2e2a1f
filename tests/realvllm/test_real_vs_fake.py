"""Our imitation server (`vllm_bot.testing.fake_vllm`) must answer like real vLLM 0.32 (issue 16,
section 3). Each fact is one request, sent as it is to the real server and to the imitation scripted
with what the real model was made to write; a small function picks the shape that matters. The real
answer must be the documented fact (test_real_server_has_the_fact), and so must the imitation's
(test_imitation_has_the_fact): together, the two agree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from agent_runs import hermes, reasoning_then
from servers import SERVED_NAME, Answer, VllmServer, http

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

HI = [{"role": "user", "content": "hi"}]
READ = {
    "type": "function",
    "function": {
        "name": "read",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
}
WRITE = {
    "type": "function",
    "function": {
        "name": "write",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
}
LONG_TEXT = "a long line of text " * 20
ANSWER = "The answer is 42."
THINKING = "Seventeen and twenty-five make forty-two. " * 3


def error_shape(a: Answer) -> dict[str, Any]:
    body = a.json()["error"]
    return {"status": a.status, "json": a.content_type.startswith("application/json"), **body}


def message(a: Answer) -> dict[str, Any]:
    return dict(a.json()["choices"][0]["message"])


def choice(a: Answer) -> dict[str, Any]:
    return dict(a.json()["choices"][0])


def stream_shape(a: Answer) -> dict[str, Any]:
    """A streamed answer: its finish reason and which tool calls / fields its deltas carried."""
    deltas = [c["delta"] for e in a.events for c in e.get("choices") or []]
    finishes = [
        c["finish_reason"] for e in a.events for c in e.get("choices") or [] if c.get("finish_reason")
    ]
    names = [
        tc["function"]["name"]
        for d in deltas
        for tc in d.get("tool_calls") or []
        if tc.get("function", {}).get("name")
    ]
    keys = sorted(
        {k for d in deltas for k, v in d.items() if v and k in ("reasoning", "reasoning_content", "content")}
    )
    return {"finish_reason": finishes[-1] if finishes else None, "call_names": names, "fields": keys}


@dataclass
class Fact:
    """One fact of section 3: the request (built for the real server: token ids differ per tokenizer),
    the reply the imitation is scripted with, the shape to compare, and what real vLLM answers."""

    id: str
    server: str  # "A", "B" or "C"
    body: Callable[[VllmServer], dict[str, Any]]
    shape: Callable[[Answer], Any]
    expected: Any
    reply: Reply = field(default_factory=Reply)


def refusal(tool_choice: Any = None, stream: bool = False) -> Callable[[VllmServer], dict[str, Any]]:
    def body(server: VllmServer) -> dict[str, Any]:
        data: dict[str, Any] = {"messages": HI, "tools": [READ], "max_tokens": 8, "stream": stream}
        if tool_choice is not None:
            data["tool_choice"] = tool_choice
        return data

    return body


def cut_call(stream: bool) -> Callable[[VllmServer], dict[str, Any]]:
    def body(server: VllmServer) -> dict[str, Any]:
        forced = {"choice": [hermes("write", {"path": "cut.txt", "content": LONG_TEXT})]}
        return {
            "messages": HI,
            "tools": [WRITE],
            "tool_choice": "auto",
            "max_tokens": 40,
            "stream": stream,
            "temperature": 0,
            "structured_outputs": forced,
        }

    return body


def reasoned(stream: bool) -> Callable[[VllmServer], dict[str, Any]]:
    def body(server: VllmServer) -> dict[str, Any]:
        extra = reasoning_then(server, ANSWER)["extra_body"]
        return {"messages": HI, "max_tokens": 2000, "stream": stream, "temperature": 1.0, **extra}

    return body


def end_token_bias(token: str) -> Callable[[VllmServer], dict[str, Any]]:
    """`token` made the certain next token: the model ends its reply at once."""

    def bias(server: VllmServer) -> dict[str, int]:
        [token_id] = server.tokenize(token)
        return {str(token_id): 100}

    return bias


def required_ends_at_once(server: VllmServer) -> dict[str, Any]:
    return {
        "messages": HI,
        "tools": [READ],
        "tool_choice": "required",
        "max_tokens": 30,
        "temperature": 0,
        "logit_bias": end_token_bias("<|im_end|>")(server),
    }


def answer_ends_on_own_end_token(server: VllmServer) -> dict[str, Any]:
    """Ending on the tokenizer's own end-of-turn token (`<|im_end|>`): no stop_reason."""
    return {
        "messages": HI,
        "max_tokens": 30,
        "temperature": 0,
        "structured_outputs": {"choice": [ANSWER]},
        "logit_bias": end_token_bias("<|im_end|>")(server),
    }


def answer_ends_on_second_stop_token(server: VllmServer) -> dict[str, Any]:
    """The tiny model's generation_config lists two end tokens, as Qwen's does; ending on the second
    (`<|endoftext|>`) is what makes vLLM report its id as `stop_reason`."""
    return {
        "messages": HI,
        "max_tokens": 30,
        "temperature": 0,
        "structured_outputs": {"choice": [ANSWER]},
        "logit_bias": end_token_bias("<|endoftext|>")(server),
    }


AUTO_400 = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
REQUIRED_400 = 'tool_choice="required" requires --tool-call-parser to be set'
NAMED_400 = 'tool_choice=function "read" requires --tool-call-parser to be set'


def refused(message: str) -> dict[str, Any]:
    """vLLM's 400 body: a plain JSON error object, streamed request or not."""
    return {
        "status": 400,
        "json": True,
        "message": message,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


MODEL_CUT_CALL = Reply(calls=[Call("write", {"path": "cut.txt", "content": LONG_TEXT})])
REASONED = Reply(reasoning=THINKING, content=ANSWER)

FACTS = [
    Fact(
        "required_refused_without_flags",
        "B",
        refusal("required"),
        error_shape,
        refused(REQUIRED_400),
    ),
    Fact(
        "named_refused_without_flags",
        "B",
        refusal({"type": "function", "function": {"name": "read"}}),
        error_shape,
        refused(NAMED_400),
    ),
    Fact(
        "tools_without_tool_choice_refused_like_auto",
        "B",
        refusal(),
        error_shape,
        refused(AUTO_400),
    ),
    Fact(
        "streamed_400_is_plain_json",
        "B",
        refusal("auto", stream=True),
        error_shape,
        refused(AUTO_400),
    ),
    Fact(
        "streamed_cut_call_ends_with_length_after_its_deltas",
        "A",
        cut_call(stream=True),
        stream_shape,
        {"finish_reason": "length", "call_names": ["write"], "fields": []},
        MODEL_CUT_CALL,
    ),
    Fact(
        "unstreamed_cut_call_is_raw_markup_in_content",
        "A",
        cut_call(stream=False),
        lambda a: {
            "finish_reason": choice(a)["finish_reason"],
            "tool_calls": message(a).get("tool_calls"),
            "markup_in_content": (message(a)["content"] or "").startswith("<tool_call>"),
        },
        {"finish_reason": "length", "tool_calls": None, "markup_in_content": True},
        MODEL_CUT_CALL,
    ),
    Fact(
        "reasoning_field_streamed",
        "C",
        reasoned(stream=True),
        stream_shape,
        {"finish_reason": "stop", "call_names": [], "fields": ["content", "reasoning"]},
        REASONED,
    ),
    Fact(
        "reasoning_field_unstreamed",
        "C",
        reasoned(stream=False),
        lambda a: {
            "reasoning": bool(message(a).get("reasoning")),
            "reasoning_content": "reasoning_content" in message(a),
            "content": message(a)["content"],
        },
        {"reasoning": True, "reasoning_content": False, "content": ANSWER},
        REASONED,
    ),
    Fact(
        "usage_counts_reasoning_tokens",
        "C",
        reasoned(stream=False),
        lambda a: isinstance(
            (a.json()["usage"].get("completion_tokens_details") or {}).get("reasoning_tokens"), int
        ),
        True,
        REASONED,
    ),
    Fact(
        "unclosed_reasoning_is_all_reasoning",
        "C",
        lambda s: {"messages": HI, "max_tokens": 20, "temperature": 0},
        lambda a: {
            "finish_reason": choice(a)["finish_reason"],
            "content": message(a)["content"],
            "reasoning": bool(message(a).get("reasoning")),
        },
        {"finish_reason": "length", "content": None, "reasoning": True},
        Reply(reasoning=THINKING * 5),
    ),
    Fact(
        "required_with_reasoning_parser_can_end_without_calls",
        "C",
        required_ends_at_once,
        lambda a: {"finish_reason": choice(a)["finish_reason"], "tool_calls": message(a).get("tool_calls")},
        {"finish_reason": "tool_calls", "tool_calls": None},
        Reply(),
    ),
    Fact(
        "unstreamed_stop_reason_can_be_an_integer",
        "A",
        answer_ends_on_second_stop_token,
        lambda a: {
            "finish_reason": choice(a)["finish_reason"],
            "int": isinstance(choice(a)["stop_reason"], int),
        },
        {"finish_reason": "stop", "int": True},
        Reply(content=ANSWER, stop_token_id=151643),
    ),
    Fact(
        "unstreamed_stop_reason_is_null_for_the_own_end_token",
        "A",
        answer_ends_on_own_end_token,
        lambda a: {"finish_reason": choice(a)["finish_reason"], "stop_reason": choice(a)["stop_reason"]},
        {"finish_reason": "stop", "stop_reason": None},
        Reply(content=ANSWER),
    ),
    Fact(
        "no_prompt_tokens_details_without_the_flag",
        "A",
        lambda s: {"messages": HI, "max_tokens": 30, "structured_outputs": {"choice": [ANSWER]}},
        lambda a: a.json()["usage"].get("prompt_tokens_details"),
        None,
        Reply(content=ANSWER),
    ),
    Fact(
        "prompt_tokens_details_with_the_flag",
        "C",
        lambda s: {"messages": HI, "max_tokens": 30, "structured_outputs": {"choice": [ANSWER]}},
        lambda a: isinstance(
            (a.json()["usage"].get("prompt_tokens_details") or {}).get("cached_tokens"), int
        ),
        True,
        Reply(content=ANSWER),
    ),
]

FAKE_MODE = {"A": "parser", "B": "noparser", "C": "parser"}
FAKE_OPTIONS: dict[str, dict[str, Any]] = {"C": {"prompt_tokens_details": True}}


def imitation_answer(fact: Fact, body: dict[str, Any]) -> Answer:
    options = FAKE_OPTIONS.get(fact.server, {})
    with FakeVLLM(
        [fact.reply], mode=FAKE_MODE[fact.server], model=SERVED_NAME, max_model_len=8192, **options
    ) as fake:
        return http(fake.base_url + "/chat/completions", {"model": SERVED_NAME, **body})


@pytest.fixture
def servers(server_a, server_b, server_c) -> dict[str, VllmServer]:
    return {"A": server_a, "B": server_b, "C": server_c}


@pytest.mark.parametrize("fact", FACTS, ids=[f.id for f in FACTS])
def test_real_server_has_the_fact(servers, fact):
    server = servers[fact.server]
    assert fact.shape(server.chat(fact.body(server))) == fact.expected


@pytest.mark.parametrize("fact", FACTS, ids=[f.id for f in FACTS])
def test_imitation_has_the_fact(servers, fact):
    """The same request to the imitation (the real server only supplies the token ids it contains)."""
    assert fact.shape(imitation_answer(fact, fact.body(servers[fact.server]))) == fact.expected
