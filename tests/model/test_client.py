"""The model client against the fake vLLM server over real HTTP (real openai SDK)."""

import socket

import pytest

from vllm_bot.config import VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.errors import ModelServerError, ServerUnreachable
from vllm_bot.events import CallsDetected, ModeSwitched, Notice, ReasoningDelta, TextDelta
from vllm_bot.model.client import ModelClient
from vllm_bot.model.retry import Retrier, RetryPolicy
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools.definitions import TOOL_DEFINITIONS


class Recorder(list):
    def __call__(self, event):
        self.append(event)

    def of(self, kind):
        return [e for e in self if isinstance(e, kind)]


class FakeClock:
    """Injected sleep: records waits instead of sleeping."""

    def __init__(self):
        self.waits = []

    def __call__(self, seconds):
        self.waits.append(seconds)


def make_client(server, clock=None, **cfg):
    config = VllmConfig(base_url=server.base_url if server else cfg.pop("base_url"), timeout=10, **cfg)
    retrier = Retrier(RetryPolicy(attempts=config.retry_attempts), sleep=clock or FakeClock())
    return ModelClient(
        config, system_prompt=lambda text_mode, defs: f"SYSTEM text_mode={text_mode}", retrier=retrier
    )


def ask(client, task="do it"):
    conv = Conversation()
    conv.add_user(task)
    events = Recorder()
    turn = client.complete(conv, TOOL_DEFINITIONS, events)
    return turn, events


def test_native_tool_call_and_usage():
    with FakeVLLM([Reply(content="Reading.", calls=[Call("read", {"path": "a.py"})])]) as server:
        client = make_client(server)
        client.resolve_model()
        turn, events = ask(client)
        server.assert_done()
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("read", {"path": "a.py"})]
    assert turn.tool_calls[0].id.startswith("chatcmpl-tool-")
    assert turn.via == "native" and turn.finish_reason == "tool_calls" and turn.content == "Reading."
    assert turn.usage and turn.usage.prompt_tokens > 0 and turn.usage.completion_tokens > 0
    assert events.of(CallsDetected)[0].source == "native"
    body = server.requests[0]
    assert body["tools"] == TOOL_DEFINITIONS and body["tool_choice"] == "auto"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == server.model


@pytest.mark.parametrize("quirk", ["one_chunk", "no_id", "null_fields", "interleave", "dup_tail"])
def test_delta_quirks_over_http(quirk):
    calls = [Call("read", {"path": "src/x.py", "offset": 3}), Call("exec", {"command": "ls -la"})]
    with FakeVLLM([Reply(calls=calls, quirks={quirk}, chunk_size=5)]) as server:
        turn, _ = ask(make_client(server, model=server.model))
        server.assert_done()
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [(c.name, c.arguments) for c in calls]
    assert all(c.error is None for c in turn.tool_calls)
    assert len({c.id for c in turn.tool_calls}) == 2


def test_parameterless_call_without_arguments():
    with FakeVLLM([Reply(calls=[Call("read", {})], quirks={"no_args"})]) as server:
        turn, _ = ask(make_client(server, model=server.model))
    assert turn.tool_calls[0].arguments == {}


def test_fallback_to_text_mode_on_400_and_retry_same_turn():
    with FakeVLLM(
        [Reply(content="Let me look.", calls=[Call("read", {"path": "a.py"})])], mode="noparser"
    ) as server:
        client = make_client(server, model=server.model)
        turn, events = ask(client)
        server.assert_done()
        assert len(server.rejected) == 1 and server.rejected[0]["tools"]
        assert "tools" not in server.requests[0]  # the retried turn is in text mode
        assert "text_mode=True" in server.requests[0]["messages"][0]["content"]
    assert client.function_calling is False and client.fell_back is True
    switches = events.of(ModeSwitched)
    assert len(switches) == 1 and "--enable-auto-tool-choice" in switches[0].hint
    assert turn.via == "text" and [c.name for c in turn.tool_calls] == ["read"]
    assert "TOOL_CALL:" in turn.content  # text-mode history keeps what the model wrote
    assert events.of(CallsDetected)[0].source == "text"


def test_fallback_happens_once_per_session():
    script = [Reply(calls=[Call("read", {"path": "a"})]), Reply(content="done")]
    with FakeVLLM(script, mode="noparser") as server:
        client = make_client(server, model=server.model)
        ask(client)
        ask(client)
        server.assert_done()
        assert len(server.rejected) == 1


@pytest.mark.parametrize("choice, offered", [("required", None), ("read", ["read", "finish"])])
def test_fallback_for_required_and_named_choice(choice, offered):
    """A named choice goes out as `required` over that tool and `finish` (forced.py); the server
    without tool flags refuses both, and the turn falls back to text mode."""
    with FakeVLLM([Reply(content="ok")], mode="noparser") as server:
        client = make_client(server, model=server.model, tool_choice=choice)
        turn, _ = ask(client)
        server.assert_done()
    refused = server.rejected[0]
    assert refused["tool_choice"] == "required" and turn.content == "ok" and client.fell_back
    names = [t["function"]["name"] for t in refused["tools"]]
    assert names == (offered or [*(d["function"]["name"] for d in TOOL_DEFINITIONS), "finish"])


def test_leaked_hermes_call_in_native_mode_becomes_native_history():
    with FakeVLLM([Reply(content="Sure.", calls=[Call("read", {"path": "a.py"})])], mode="leak") as server:
        turn, events = ask(make_client(server, model=server.model))
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("read", {"path": "a.py"})]
    assert turn.via == "native" and "<tool_call>" not in turn.content and "Sure." in turn.content
    assert events.of(CallsDetected)[0].source == "text"


def test_no_tools_sent_when_function_calling_disabled():
    with FakeVLLM([Reply(calls=[Call("exec", {"command": "ls"})])]) as server:
        turn, _ = ask(make_client(server, model=server.model, enable_function_calling=False))
        assert "tools" not in server.requests[0] and "tool_choice" not in server.requests[0]
    assert turn.via == "text" and turn.tool_calls[0].name == "exec"


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content", "both"])
def test_reasoning_fields_kept_apart_from_content(field):
    with FakeVLLM([Reply(content="Answer.", reasoning="Let me think.")], reasoning_field=field) as server:
        turn, events = ask(make_client(server, model=server.model))
    assert turn.content == "Answer."
    assert "Let me think." in turn.reasoning
    assert "".join(e.text for e in events.of(TextDelta)) == "Answer."
    assert "Let me think" in "".join(e.text for e in events.of(ReasoningDelta))


def test_think_tags_in_content_are_stripped_and_routed():
    with FakeVLLM([Reply(content="<think>\nplan: read\n</think>\n\nDone.", chunk_size=3)]) as server:
        turn, events = ask(make_client(server, model=server.model))
    assert turn.content == "Done." and "plan: read" in turn.reasoning
    shown = "".join(e.text for e in events.of(TextDelta))
    assert "<think>" not in shown and "plan" not in shown and "Done." in shown


def test_call_inside_think_is_not_executed():
    content = '<think>I could write TOOL_CALL: {"name": "exec", "args": {"command": "rm -rf /"}}</think>Nothing to do.'
    with FakeVLLM([Reply(content=content)]) as server:
        turn, _ = ask(make_client(server, model=server.model, enable_function_calling=False))
    assert turn.tool_calls == []


def test_reply_cut_by_length_never_runs_the_call():
    reply = Reply(calls=[Call("write", {"path": "a", "content": "x" * 50})], finish_reason="length")
    with FakeVLLM([reply]) as server:
        turn, _ = ask(make_client(server, model=server.model))
    assert turn.tool_calls and all("cut off" in (c.error or "") for c in turn.tool_calls)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_fails_fast_with_url_and_fix():
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = make_client(None, base_url=url)
    with pytest.raises(ServerUnreachable) as e:  # at once: a refused connection is not retried
        client.resolve_model()
    assert (
        url in str(e.value) and "vllm serve" in str(e.value) and "--enable-auto-tool-choice" in str(e.value)
    )


def test_wrong_api_key_message():
    with FakeVLLM([], api_key="right") as server:
        client = make_client(server, api_key="wrong")
        with pytest.raises(ModelServerError, match="API key"):
            client.resolve_model()


def test_chat_request_carries_the_api_key():
    # A server that wants a key answers the chat request only if it carries the bearer header.
    with FakeVLLM([Reply(content="Done.")], api_key="right") as server:
        turn, _ = ask(make_client(server, api_key="right", model=server.model))
        server.assert_done()
    assert turn.content == "Done."


def test_unknown_model_lists_served_models():
    with FakeVLLM([]) as server:
        client = make_client(server, model="nope")
        with pytest.raises(ModelServerError, match=server.model):
            client.resolve_model()


def test_auto_model_and_context_window():
    with FakeVLLM([], max_model_len=4096) as server:
        client = make_client(server)
        assert client.resolve_model() == server.model
        assert client.context_window == 4096


def test_error_inside_200_stream_is_retried_never_an_empty_success():
    error = {
        "error": {
            "message": "Internal server error",
            "type": "InternalServerError",
            "param": None,
            "code": 500,
        }
    }
    script = [Reply(content="partial answer", stream_error=error), Reply(calls=[Call("read", {"path": "a"})])]
    clock = FakeClock()
    with FakeVLLM(script) as server:
        turn, events = ask(make_client(server, clock, model=server.model))
        server.assert_done()
    assert [c.name for c in turn.tool_calls] == ["read"] and len(clock.waits) == 1
    assert any("Internal server error" in e.message for e in events.of(Notice))


def test_stream_cut_before_finish_is_retried_and_nothing_runs_twice():
    script = [
        Reply(calls=[Call("exec", {"command": "echo hi"})], cut_at_byte=700),
        Reply(calls=[Call("exec", {"command": "echo hi"})]),
    ]
    with FakeVLLM(script) as server:
        turn, _ = ask(make_client(server, model=server.model))
        server.assert_done()
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("exec", {"command": "echo hi"})]


def test_use_model_starts_the_new_model_over_in_the_configured_mode():
    other = "other/model"
    script = [Reply(calls=[Call("read", {"path": "a"})]), Reply(content="native again")]
    with FakeVLLM(script, mode="noparser", served_models=[other]) as server:
        client = make_client(server)
        client.resolve_model()
        ask(client)  # the server refuses tools: this model falls back to text mode
        assert client.function_calling is False and client.fell_back is True
        client.use_model(other)
        assert (client.model, client.counter.model) == (other, other)
        assert client.function_calling is True and client.fell_back is False and client.profile is None
        ask(client)
        server.assert_done()
    assert server.rejected[-1]["model"] == other and "tools" in server.rejected[-1]
