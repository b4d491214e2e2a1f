"""Telemetry: speed and prefix-cache figures from real streams, /metrics only for slow replies."""

import json

import pytest

from vllm_bot.config import TelemetryConfig, VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.events import CallsDetected, FirstToken, TelemetryReported, TextDelta, TurnFinished, to_json
from vllm_bot.model.client import ModelClient
from vllm_bot.model.server import Server
from vllm_bot.model.telemetry import ServerLoad, Telemetry, for_session, parse_metrics, scrape
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply, metrics_page
from vllm_bot.tools.definitions import TOOL_DEFINITIONS
from vllm_bot.ui import fanout

BUSY = {"vllm:num_requests_running": 8, "vllm:num_requests_waiting": 3, "vllm:kv_cache_usage_perc": 0.97}


class Recorder(list):
    def __call__(self, event):
        self.append(event)

    def of(self, kind):
        return [e for e in self if isinstance(e, kind)]


def run_session(server, config=None, turns=2):
    """A conversation of `turns` requests through the real client; returns (telemetry, events)."""
    client = ModelClient(VllmConfig(base_url=server.base_url, timeout=10), system_prompt=lambda t, d: "SYS")
    client.resolve_model()
    events = Recorder()
    telemetry = for_session(config or TelemetryConfig(), client, events)
    emit = fanout([events, telemetry])
    conv = Conversation()
    conv.add_user("Look at the project and fix the bug in src/app.py " * 5)
    for _ in range(turns):
        turn = client.complete(conv, TOOL_DEFINITIONS, emit)
        conv.add_turn(turn)
        conv.add_user("continue")
    return telemetry, events


def script(n):
    return [Reply(content="Working on it, reading the files now. " * 6, chunk_size=7) for _ in range(n)]


def test_cached_tokens_give_a_hit_rate_and_are_reported_per_request():
    with FakeVLLM(script(3), prompt_tokens_details=True) as server:
        telemetry, events = run_session(server, turns=3)
        server.assert_done()
        assert "/metrics" not in server.side_requests  # fast replies never read /metrics
    reports = events.of(TelemetryReported)
    assert len(reports) == 3 == len(events.of(TurnFinished))
    assert reports[0].cached_tokens == 0  # a cold cache
    assert reports[1].cached_tokens > 0 and reports[2].cached_tokens > reports[1].cached_tokens
    assert 0 < reports[2].cache_hit_rate <= 1
    assert all(r.completion_tokens and r.prompt_tokens for r in reports)
    assert all(r.server is None and r.note == "" for r in reports)
    total_cached = sum(r.cached_tokens for r in reports)
    total_prompt = sum(r.prompt_tokens for r in reports)
    assert telemetry.cache_hit_rate == pytest.approx(total_cached / total_prompt)
    assert telemetry.tokens_per_second is not None
    assert f"prefix-cache hits {telemetry.cache_hit_rate:.0%}" in telemetry.summary()
    json.dumps(to_json(reports[-1]))  # session files can store it


def test_without_prompt_tokens_details_the_hit_rate_is_unknown():
    with FakeVLLM(script(2)) as server:
        telemetry, events = run_session(server)
    assert all(r.cached_tokens is None and r.cache_hit_rate is None for r in events.of(TelemetryReported))
    assert telemetry.cache_hit_rate is None
    assert "--enable-prompt-tokens-details" in telemetry.summary()


def test_usage_not_honoured_leaves_speed_unknown_without_failing():
    with FakeVLLM(script(1), include_usage=False) as server:
        telemetry, events = run_session(server, turns=1)
    report = events.of(TelemetryReported)[0]
    assert report.completion_tokens is None and report.tokens_per_second is None
    assert report.first_token_seconds is not None and report.seconds >= report.first_token_seconds
    assert "requests: 1" in telemetry.summary()


def test_slow_reply_reads_metrics_and_explains_the_wait():
    with FakeVLLM(script(1), metrics=BUSY) as server:
        telemetry, events = run_session(server, TelemetryConfig(slow_first_token=0.0), turns=1)
        assert server.side_requests.count("/metrics") == 1
    report = events.of(TelemetryReported)[0]
    assert report.server == {"running": 8.0, "waiting": 3.0, "kv_cache_usage": 0.97}
    assert report.note == "server busy: 3 requests waiting, KV cache 97% full"
    assert "slow replies: 1" in telemetry.summary()


def test_slow_reply_on_a_server_without_metrics_is_just_slow():
    with FakeVLLM(script(1)) as server:
        _, events = run_session(server, TelemetryConfig(slow_first_token=0.0), turns=1)
        assert server.side_requests.count("/metrics") == 1
    assert events.of(TelemetryReported)[0].server is None


def test_metrics_can_be_switched_off():
    with FakeVLLM(script(1), metrics=BUSY) as server:
        run_session(server, TelemetryConfig(slow_first_token=0.0, metrics=False), turns=1)
        assert "/metrics" not in server.side_requests


def test_tool_call_turns_are_measured_too():
    with FakeVLLM([Reply(calls=[Call("write", {"path": "a", "content": "x\n" * 200})])]) as server:
        _, events = run_session(server, turns=1)
    report = events.of(TelemetryReported)[0]
    assert report.completion_tokens > 100 and report.tokens_per_second > 0


def test_parse_vllm_metrics_page():
    page = metrics_page(BUSY, "Qwen/Qwen3-8B")
    assert parse_metrics(page) == ServerLoad(8.0, 3.0, 0.97)
    assert parse_metrics(page, model="Qwen/Qwen3-8B") == ServerLoad(8.0, 3.0, 0.97)
    assert parse_metrics(page, model="other") is None


def test_parse_sums_engines_and_reads_the_old_cache_gauge_name():
    page = "\n".join(
        [
            "# TYPE vllm:num_requests_waiting gauge",
            'vllm:num_requests_waiting{engine="0",model_name="m"} 2.0',
            'vllm:num_requests_waiting{engine="1",model_name="m"} 1.0',
            'vllm:num_requests_running{model_name="m"} 4',
            'vllm:gpu_cache_usage_perc{model_name="m"} 0.5',
            'vllm:gpu_cache_usage_perc{model_name="m",engine="1"} 0.75',
            "vllm:num_requests_waiting_but_other_metric 99",
            "garbage line without value",
            'vllm:num_requests_running{model_name="m"} NaNish',
        ]
    )
    assert parse_metrics(page) == ServerLoad(4.0, 3.0, 0.75)
    assert parse_metrics("# nothing here\npython_info 1\n") is None
    assert parse_metrics("") is None


@pytest.mark.parametrize(
    "load, text",
    [
        (ServerLoad(8, 3, 0.97), "server busy: 3 requests waiting, KV cache 97% full"),
        (ServerLoad(1, 1, 0.2), "server busy: 1 request waiting"),
        (ServerLoad(2, 0, 0.95), "server busy: KV cache 95% full"),
        (ServerLoad(1, 0, 0.1), "server not queueing (1 running, 0 waiting): the wait was prompt processing"),
        (
            ServerLoad(None, None, None),
            "server not queueing (no queue, 0 waiting): the wait was prompt processing",
        ),
    ],
)
def test_explanations(load, text):
    assert load.explain() == text


def test_scrape_over_http():
    with FakeVLLM([], metrics=BUSY) as server:
        assert scrape(Server(server.base_url), model=server.model) == ServerLoad(8.0, 3.0, 0.97)
    with FakeVLLM([]) as server:
        assert scrape(Server(server.base_url)) is None  # 404


def test_empty_telemetry_views():
    telemetry = Telemetry(TelemetryConfig())
    assert telemetry.summary() == "No model requests yet."


@pytest.mark.parametrize("mode", ["parser", "noparser"])  # native tool_calls; a hidden TOOL_CALL block
def test_a_reply_of_only_tool_calls_ends_the_wait_for_the_first_token(mode):
    write = Call("write", {"path": "a", "content": "x\n" * 50})
    with FakeVLLM([Reply(calls=[write])], mode=mode, metrics=BUSY) as server:
        config = VllmConfig(base_url=server.base_url, timeout=10, enable_function_calling=mode == "parser")
        client = ModelClient(config, system_prompt=lambda t, d: "SYS")
        client.resolve_model()
        events = Recorder()
        telemetry = for_session(TelemetryConfig(slow_first_token=3600), client, events)
        waiting_when_calls_arrived = []

        def probe(event):
            if isinstance(event, CallsDetected):
                waiting_when_calls_arrived.append(telemetry.waiting)

        conv = Conversation()
        conv.add_user("write a")
        turn = client.complete(conv, TOOL_DEFINITIONS, fanout([events, telemetry, probe]))
        server.assert_done()
        assert "/metrics" not in server.side_requests
    assert [c.name for c in turn.tool_calls] == ["write"]
    assert not events.of(TextDelta) and len(events.of(FirstToken)) == 1
    assert waiting_when_calls_arrived == [False]
