"""The fake vLLM server answers as a running vLLM 0.32 did (shared/reference/vllm-protocol.md, section 0),
checked over raw HTTP so nothing of the client's own handling hides a difference."""

import json
import urllib.error
import urllib.request

import pytest

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.testing.wire import AUTO_MSG, REQUIRED_MSG
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

NAMED = {"type": "function", "function": {"name": "exec"}}
NAMED_MSG = 'tool_choice=function "exec" requires --tool-call-parser to be set'


def post(server, body, path="/v1/chat/completions"):
    """(status, content type, raw body) of one POST."""
    request = urllib.request.Request(
        server.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def chat(server, stream=False, **body):
    body = {"model": server.model, "messages": [{"role": "user", "content": "hi"}], "stream": stream, **body}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return post(server, body)


def events(raw):
    """The JSON chunks of an SSE body, [DONE] checked and dropped."""
    lines = [ln[len("data: ") :] for ln in raw.split("\n\n") if ln.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(ln) for ln in lines[:-1]]


def streamed_reply(chunks):
    """finish_reason, content, reasoning and {index: (name, arguments)} of a streamed reply."""
    finish, content, reasoning, calls = None, "", "", {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning") or ""
            assert "reasoning_content" not in delta
            for tc in delta.get("tool_calls") or []:
                name, args = calls.get(tc["index"], (None, ""))
                fn = tc.get("function") or {}
                calls[tc["index"]] = (name or fn.get("name"), args + (fn.get("arguments") or ""))
            finish = choice["finish_reason"] or finish
    return finish, content, reasoning, calls


@pytest.mark.parametrize(
    "choice, message",
    [("auto", AUTO_MSG), (None, AUTO_MSG), ("required", REQUIRED_MSG), (NAMED, NAMED_MSG)],
)
@pytest.mark.parametrize("stream", [False, True])
def test_without_tool_flags_every_forced_or_automatic_choice_is_refused_with_plain_json(
    choice, message, stream
):
    body = {"tools": TOOL_DEFINITIONS}
    if choice is not None:
        body["tool_choice"] = choice
    with FakeVLLM([], mode="noparser") as server:
        status, kind, raw = chat(server, stream, **body)
    assert (status, kind) == (400, "application/json")
    assert json.loads(raw) == {
        "error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    }


def test_without_tool_flags_tool_choice_none_is_answered():
    with FakeVLLM([Reply(content="ok")], mode="noparser") as server:
        status, _, raw = chat(server, tools=TOOL_DEFINITIONS, tool_choice="none")
        server.assert_done()
    assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "ok"


def cut_call():
    return Reply(content="Writing.", calls=[Call("write", {"path": "a.py", "content": "x = 1\n" * 40})])


def test_a_call_cut_by_max_tokens_unstreamed_is_raw_markup_in_content_and_no_tool_calls():
    with FakeVLLM([cut_call()]) as server:
        status, _, raw = chat(server, tools=TOOL_DEFINITIONS, max_tokens=30)
    choice = json.loads(raw)["choices"][0]
    assert status == 200 and choice["finish_reason"] == "length" and choice["stop_reason"] is None
    assert choice["message"]["tool_calls"] is None
    assert choice["message"]["content"].startswith('Writing.\n<tool_call>\n{"name": "write", "arguments": {')
    assert json.loads(raw)["usage"]["completion_tokens"] == 30


def test_a_call_cut_by_max_tokens_streamed_has_sent_its_partial_deltas_then_length():
    with FakeVLLM([cut_call()]) as server:
        _, kind, raw = chat(server, stream=True, tools=TOOL_DEFINITIONS, max_tokens=30)
    assert kind == "text/event-stream"
    finish, content, _, calls = streamed_reply(events(raw))
    assert finish == "length" and content == "Writing."
    name, arguments = calls[0]
    assert name == "write" and arguments.startswith('{"path": "a.py"') and not arguments.endswith("}")


def test_reasoning_cut_before_its_end_is_all_reasoning_and_content_is_null():
    reply = Reply(content="42", reasoning="Let me think about this at length. " * 20)
    with FakeVLLM([reply]) as server:
        _, _, raw = chat(server, max_tokens=25)
    body = json.loads(raw)
    message, choice = body["choices"][0]["message"], body["choices"][0]
    assert choice["finish_reason"] == "length" and message["content"] is None
    assert message["reasoning"].startswith("Let me think") and "reasoning_content" not in message
    assert body["usage"]["completion_tokens_details"] == {"reasoning_tokens": 25}


def test_required_whose_reasoning_used_the_budget_ends_tool_calls_with_no_calls():
    reply = Reply(reasoning="I should read the file first. " * 20, calls=[Call("read", {"path": "a"})])
    with FakeVLLM([reply]) as server:
        _, _, raw = chat(server, tools=TOOL_DEFINITIONS, tool_choice="required", max_tokens=20)
    choice = json.loads(raw)["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and "tool_calls" not in choice["message"]
    assert choice["message"]["content"] is None


def test_finish_reasons_and_stop_reasons_unstreamed():
    """The tokenizer's own end token gives `stop_reason` null; another stop token its id (an integer)."""
    call = Call("exec", {"command": "ls"})
    script = [Reply(calls=[call]), Reply(calls=[call]), Reply(content="42", stop_token_id=151643)]
    with FakeVLLM(script) as server:
        _, _, named = chat(server, tools=TOOL_DEFINITIONS, tool_choice=NAMED)
        _, _, required = chat(server, tools=TOOL_DEFINITIONS, tool_choice="required")
        _, _, other_end = chat(server)
    named, required = json.loads(named)["choices"][0], json.loads(required)["choices"][0]
    assert named["finish_reason"] == "stop" and required["finish_reason"] == "tool_calls"
    assert named["stop_reason"] is None and named["message"]["tool_calls"][0]["function"]["name"] == "exec"
    other = json.loads(other_end)["choices"][0]
    assert other["finish_reason"] == "stop" and other["stop_reason"] == 151643


def test_thinking_turned_off_leaves_the_reasoning_in_content():
    reply = Reply(content="42", reasoning="17 + 25")
    with FakeVLLM([reply]) as server:
        _, _, raw = chat(server, chat_template_kwargs={"enable_thinking": False})
    message = json.loads(raw)["choices"][0]["message"]
    assert message["content"] == "<think>\n17 + 25\n</think>\n\n42" and message["reasoning"] is None


@pytest.mark.parametrize("flag", [False, True])
def test_prompt_tokens_details_only_with_the_server_flag(flag):
    with FakeVLLM([Reply(content="ok")], prompt_tokens_details=flag) as server:
        _, _, raw = chat(server, stream=True)
    usage = events(raw)[-1]["usage"]
    assert ("prompt_tokens_details" in usage) is flag


def test_prompt_too_long_is_a_400_naming_the_window_and_input_tokens():
    with FakeVLLM([], max_model_len=50) as server:
        status, kind, raw = chat(server, stream=True, messages=[{"role": "user", "content": "word " * 80}])
    error = json.loads(raw)["error"]
    assert (status, kind, error["param"]) == (400, "application/json", "input_tokens")
    assert error["message"].startswith(
        "This model's maximum context length is 50 tokens. However, your prompt"
    )
    assert error["message"].endswith("(parameter=input_tokens, value=51)")


def test_prompt_plus_max_tokens_over_the_window_is_clamped_not_refused():
    with FakeVLLM([Reply(content="word " * 100)], max_model_len=100) as server:
        status, _, raw = chat(server, max_tokens=95)
    body = json.loads(raw)
    assert status == 200 and body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"] == 100


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_max_tokens_over_the_whole_window_is_refused_like_vllm(field):
    """vLLM 0.32 refuses it before it looks at the prompt (renderers/params.py, TokenizeParams)."""
    with FakeVLLM([], max_model_len=8192) as server:
        status, _, raw = chat(server, stream=True, **{field: 32768})
    assert status == 400 and json.loads(raw) == {
        "error": {
            "message": f"{field}=32768 cannot be greater than max_model_len=8192. Please request fewer output tokens.",
            "type": "BadRequestError",
            "param": field,
            "code": 400,
        }
    }


def test_tokenize_answers_like_vllm():
    with FakeVLLM([]) as server:
        status, _, raw = post(server, {"prompt": "hello world"}, "/tokenize")
    assert status == 200 and json.loads(raw) == {
        "count": 2,
        "max_model_len": 32768,
        "tokens": [0, 1],
        "token_strs": None,
    }
