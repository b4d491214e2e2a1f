"""Server faults: cut streams at every byte, 5xx/429, errors inside 200 streams, stalls (issue 7).

Everything runs over real HTTP against the fake server; the retry clock is injected so nothing sleeps.
"""

import json
import urllib.request

import pytest

from vllm_bot.config import VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.errors import ModelServerError
from vllm_bot.events import Notice
from vllm_bot.model.client import ModelClient
from vllm_bot.model.retry import Retrier, RetryPolicy, TransientServerError
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.testing.wire import error_body
from vllm_bot.tools.definitions import TOOL_DEFINITIONS


class Clock:
    def __init__(self):
        self.waits = []

    def __call__(self, seconds):
        self.waits.append(seconds)


def client_for(server, clock, **cfg):
    config = VllmConfig(base_url=server.base_url, model=server.model, **{"timeout": 5, **cfg})
    retrier = Retrier(
        RetryPolicy(attempts=config.retry_attempts, base=1.0, cap=20.0, jitter=0.0), sleep=clock
    )
    client = ModelClient(config, system_prompt=lambda text_mode, defs: "SYSTEM", retrier=retrier)
    client.answered = True  # the server has answered once (faults before that fail fast instead)
    return client


def ask(client):
    conv = Conversation()
    conv.add_user("task")
    events = []
    return client.complete(conv, TOOL_DEFINITIONS, events.append), events


# Small but complete recorded streams (every vLLM chunk kind): every byte offset of each is cut.
RECORDED = {
    "text": Reply(content="The answer is 42, see a.py.", chunk_size=14),
    "one_call": Reply(
        content="Reading.", calls=[Call("read", {"path": "src/app.py", "offset": 10})], chunk_size=20
    ),
    "two_calls": Reply(
        calls=[
            Call("edit", {"path": "a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}),
            Call("exec", {"command": "pytest -q"}),
        ],
        chunk_size=24,
    ),
}


def stream_length(server, reply):
    """Bytes of the SSE body the fake server sends for `reply` (what cut_at_byte counts)."""
    server.script.append(reply)
    body = {
        "model": server.model,
        "messages": [{"role": "user", "content": "x"}],
        "tools": TOOL_DEFINITIONS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    request = urllib.request.Request(
        server.base_url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as response:
        return len(response.read())


def signature(turn):
    return (turn.content, [(c.name, c.arguments) for c in turn.tool_calls])


SHARES = 3  # each stream's offsets are swept by three tests (every third one), so workers share them


@pytest.mark.parametrize("share", range(SHARES))
@pytest.mark.parametrize("name", list(RECORDED))
def test_cut_at_every_byte_offset_retries_to_the_identical_turn(name, share):
    reply = RECORDED[name]
    clock = Clock()
    with FakeVLLM([], model="m") as server:
        total = stream_length(server, reply)
        client = client_for(server, clock)
        server.script.append(reply)
        expected = signature(ask(client)[0])
        cuts = range(share, total, SHARES)
        for cut in cuts:
            server.script.extend([Reply(**{**reply.__dict__, "cut_at_byte": cut}), reply])
            turn, _ = ask(client)
            assert signature(turn) == expected, f"cut at byte {cut}"
            assert all(c.error is None for c in turn.tool_calls)
        server.assert_done()
    assert len(clock.waits) == len(cuts)  # exactly one retry per cut stream
    assert expected[1] or name == "text"


@pytest.mark.parametrize("statuses", [[500], [502, 503], [503, 500, 502, 504]])
def test_5xx_retried_with_exponential_backoff(statuses):
    clock = Clock()
    script = [Reply(status=s, error=error_body("busy", s, "InternalServerError")) for s in statuses]
    with FakeVLLM([*script, Reply(content="ok")]) as server:
        turn, events = ask(client_for(server, clock))
        server.assert_done()
    assert turn.content == "ok"
    assert clock.waits == [1.0, 2.0, 4.0, 8.0][: len(statuses)]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == len(statuses) and "Retrying in 1 s (2/5)" in notices[0]


def test_429_honours_retry_after():
    clock = Clock()
    script = [
        Reply(status=429, error=error_body("slow down", 429, "RateLimitError"), headers={"Retry-After": "7"}),
        Reply(content="ok"),
    ]
    with FakeVLLM(script) as server:
        ask(client_for(server, clock))
        server.assert_done()
    assert clock.waits == [7.0]


def test_gives_up_after_the_configured_attempts_with_a_clear_message():
    clock = Clock()
    script = [
        Reply(status=503, error=error_body("Request failed; please retry", 503, "ServiceUnavailableError"))
    ] * 3
    with FakeVLLM(script) as server:
        with pytest.raises(ModelServerError, match="Gave up after 3 attempts") as e:
            ask(client_for(server, clock, retry_attempts=3))
        server.assert_done()
    assert "503" in str(e.value) and clock.waits == [1.0, 2.0]


def test_default_policy_gives_up_within_about_a_minute():
    retrier = Retrier(RetryPolicy(), rand=lambda: 1.0)  # worst-case jitter
    total = sum(retrier.delay(n, None) for n in range(1, RetryPolicy().attempts))
    assert 10 < total < 75


@pytest.mark.parametrize("before_first_token", [True, False])
def test_error_object_inside_200_stream_is_retried(before_first_token):
    clock = Clock()
    err = {
        "error": {
            "message": "Request failed; please retry",
            "type": "ServiceUnavailableError",
            "param": None,
            "code": 503,
        }
    }
    broken = Reply(content="" if before_first_token else "Partial words", stream_error=err)
    with FakeVLLM([broken, Reply(content="fine")]) as server:
        turn, _events = ask(client_for(server, clock))
        server.assert_done()
    assert turn.content == "fine" and len(clock.waits) == 1


def test_stall_mid_stream_hits_idle_timeout_and_retries():
    clock = Clock()
    stalled = Reply(content="slow " * 40, chunk_size=5, stall_after_bytes=900)
    with FakeVLLM([stalled, Reply(content="fast")]) as server:
        turn, events = ask(client_for(server, clock, stream_idle_timeout=0.3))
        server.assert_done()
    assert turn.content == "fast"
    assert any("stalled" in e.message and "next chunk" in e.message for e in events if isinstance(e, Notice))


def test_no_first_token_hits_first_token_timeout():
    clock = Clock()
    with FakeVLLM([Reply(content="never", stall_after_bytes=0), Reply(content="fine")]) as server:
        turn, events = ask(client_for(server, clock, timeout=0.5, stream_idle_timeout=30))
        server.assert_done()
    assert turn.content == "fine"
    assert any("first token" in e.message for e in events if isinstance(e, Notice))


def test_broken_streamed_arguments_retried_unstreamed():
    broken = Reply(calls=[Call("read", '{"path": "a.py"')])  # the stream delivers invalid JSON
    with FakeVLLM([broken, Reply(calls=[Call("read", {"path": "a.py"})])]) as server:
        turn, _events = ask(client_for(server, Clock()))
        server.assert_done()
        assert server.requests[1].get("stream") in (None, False)
    assert turn.tool_calls[0].arguments == {"path": "a.py"} and turn.tool_calls[0].error is None


def test_broken_arguments_both_ways_go_back_to_the_model_as_an_error():
    broken = Reply(calls=[Call("read", '{"path": ')])
    with FakeVLLM([broken, broken]) as server:
        turn, _ = ask(client_for(server, Clock()))
        server.assert_done()
    assert "not valid JSON" in turn.tool_calls[0].error


class FakeTime:
    """A clock that only moves when the code under test sleeps or a simulated stall waits."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_a_hung_server_costs_one_stall_plus_the_retry_window_not_five_stalls():
    idle = VllmConfig().stream_idle_timeout
    clock = FakeTime()
    retrier = Retrier(RetryPolicy(), sleep=clock.sleep, rand=lambda: 1.0, clock=clock)  # worst jitter
    given = []

    def stalls(attempt, silent):  # a stream that never sends again waits as long as it is allowed
        given.append(silent)
        clock.now += min(idle, silent)
        raise TransientServerError("The server stalled.")

    with pytest.raises(ModelServerError, match=r"vllm\.retry_window"):
        retrier.run(stalls, lambda e: None)
    assert given[0] == float("inf") and all(s <= RetryPolicy().window for s in given[1:])
    assert 1 < len(given) < RetryPolicy().attempts
    assert clock.now <= idle + RetryPolicy().window


@pytest.mark.timeout(20)  # without the window the retry would wait out the full 30 s idle timeout
def test_a_retried_stream_may_stay_silent_only_for_what_is_left_of_the_window():
    busy = Reply(status=503, error=error_body("busy", 503, "ServiceUnavailableError"))
    stalled = Reply(content="slow " * 40, chunk_size=5, stall_after_bytes=600)
    with FakeVLLM([busy, stalled]) as server:
        config = VllmConfig(base_url=server.base_url, model=server.model, timeout=5, stream_idle_timeout=30)
        retrier = Retrier(RetryPolicy(base=0.01, jitter=0.0, window=0.5), sleep=lambda s: None)
        client = ModelClient(config, system_prompt=lambda t, d: "SYSTEM", retrier=retrier)
        client.answered = True
        with pytest.raises(ModelServerError, match=r"stalled.*Gave up after 2 attempts.*vllm\.retry_window"):
            ask(client)
        server.assert_done()


def test_a_retry_after_beyond_the_window_gives_up_at_once():
    clock = Clock()
    late = Reply(
        status=429, error=error_body("slow down", 429, "RateLimitError"), headers={"Retry-After": "100"}
    )
    with FakeVLLM([late]) as server:
        with pytest.raises(ModelServerError, match=r"429.*Gave up after 1 attempt:.*vllm\.retry_window"):
            ask(client_for(server, clock))
        server.assert_done()
    assert clock.waits == []
