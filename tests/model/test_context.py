"""Context window: measuring, max_tokens, compaction, vLLM's context-length error (issue 7)."""

import copy
import tracemalloc

import pytest

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
from vllm_bot.config import ContextConfig, VllmConfig
from vllm_bot.conversation import Conversation, ToolResults, UserMessage
from vllm_bot.errors import ContextOverflow
from vllm_bot.events import Notice
from vllm_bot.model.client import ModelClient
from vllm_bot.model.context import render_transcript, shrink_results
from vllm_bot.model.profiles import Profile
from vllm_bot.model.server import Server
from vllm_bot.model.tokens import TokenCounter
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply, count_tokens
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

COMPACT_MARK = "You compress a coding agent's earlier work"


def summary_reply(body):
    """Auto-answer the compaction request (it is not part of the scripted task)."""
    if COMPACT_MARK in body["messages"][0]["content"]:
        assert "tools" not in body
        return Reply(content="SUMMARY: read files a..z, fixed the bug in app.py, tests pass.")
    return None


def make_client(server, **cfg):
    config = VllmConfig(base_url=server.base_url, model=server.model, timeout=10, **cfg)
    return ModelClient(config, system_prompt=lambda text_mode, defs: "SYSTEM PROMPT", context=ContextConfig())


def long_conversation(turns, result_chars):
    conv = Conversation()
    conv.add_user("Fix the bug in app.py")
    for i in range(turns):
        call = ToolCall(f"call_{i}", "read", {"path": f"f{i}.py"})
        conv.add_turn(AssistantTurn(content=f"step {i}", tool_calls=[call]))
        conv.add_results([ToolResult(call.id, "read", "text", f"line {i} " * (result_chars // 7))], "native")
    return conv


def test_max_tokens_fits_the_window():
    with FakeVLLM([Reply(content="ok")], max_model_len=4096) as server:
        client = make_client(server)
        client.resolve_model()
        conv = Conversation()
        conv.add_user("hi")
        client.complete(conv, TOOL_DEFINITIONS, lambda e: None)
        body = server.requests[0]
    prompt = server.prompt_tokens(body)
    assert body["max_tokens"] + prompt <= 4096
    assert body["max_tokens"] >= 256


def test_tokenize_endpoint_counts_and_usage_calibrates_overhead():
    with FakeVLLM([Reply(content="ok")]) as server:
        counter = TokenCounter(Server(server.base_url), server.model)
        assert counter.count_text("hello world, again") == count_tokens("hello world, again")
        assert counter.available is True
    no_server = TokenCounter(Server("http://127.0.0.1:9/v1"))
    assert no_server.count_text("x" * 300) == 101 and no_server.available is False
    no_server.calibrate([{"role": "user", "content": "x" * 400}], None, 104)
    assert 3.0 < no_server.chars_per_token < 4.0  # moved toward the measured 400 / (104 - 4)


def test_token_counts_are_cached_without_keeping_the_texts():
    with FakeVLLM([]) as server:
        counter = TokenCounter(Server(server.base_url), server.model)
        counter.count_text("warm up the connection")
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(50):  # tool results that compaction has long dropped from the history
                counter.count_text(f"result {i} " + "x" * 20_000)
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert kept < 200_000  # the texts themselves would be 1 MB
        asked = len(server.side_requests)
        assert counter.count_text("result 7 " + "x" * 20_000) == 3  # an equal text: a hit
        assert len(server.side_requests) == asked


def test_token_cache_drops_the_least_recently_used_count():
    with FakeVLLM([]) as server:
        counter = TokenCounter(Server(server.base_url), server.model)
        counter.cache_size = 2
        for text in ("one", "two", "one", "three"):  # "two" is the least recently used
            counter.count_text(text)
        asked = len(server.side_requests)
        counter.count_text("one")
        counter.count_text("three")
        assert len(server.side_requests) == asked
        counter.count_text("two")
        assert len(server.side_requests) == asked + 1


def test_old_tool_results_are_shrunk_first_and_recent_ones_kept():
    conv = long_conversation(turns=6, result_chars=5000)
    shrunk = shrink_results(conv, keep_turns=2, keep_chars=400)
    assert shrunk == 4
    results = [e.results[0].value for e in conv.entries if isinstance(e, ToolResults)]
    assert all("were removed to save context" in r and len(r) < 700 for r in results[:4])
    assert all(len(r) > 4900 for r in results[4:])
    assert results[0].startswith("line 0") and results[0].rstrip().endswith("line 0")


def result_texts(conv):
    return [e.results[0].value for e in conv.entries if isinstance(e, ToolResults)]


def compact_with_budget(conv, overflow_results):
    """Compact `conv` through the client with a window whose budget is exceeded by what cutting
    `overflow_results` old results (and a little more) saves. Returns (texts after, server)."""
    with FakeVLLM([], auto_reply=summary_reply) as server:
        client = make_client(server)
        client.resolve_model()
        full = client.measure(conv, TOOL_DEFINITIONS)
        probe = copy.deepcopy(conv)
        shrink_results(probe, 2, ContextConfig().shrink_results_to)
        per_result = (full - client.measure(probe, TOOL_DEFINITIONS)) / len(result_texts(conv)[:-2])
        budget = int(full - per_result * (overflow_results - 1) - per_result / 2)
        client.context.configured_window = int(budget / ContextConfig().compact_threshold) + 1
        client.compact(conv, TOOL_DEFINITIONS, lambda e: None)
        assert client.measure(conv, TOOL_DEFINITIONS) <= client.context.budget()
        server.assert_done()
        return result_texts(conv), server


@pytest.mark.parametrize("needed", [1, 3])
def test_compaction_cuts_only_as_many_old_results_as_needed_oldest_first(needed):
    conv = long_conversation(turns=8, result_chars=3000)
    texts, server = compact_with_budget(conv, needed)
    cut = [i for i, t in enumerate(texts) if "were removed to save context" in t]
    assert cut == list(range(needed))  # the oldest ones; the prefix after them is untouched
    assert all(len(t) > 2900 for t in texts[needed:])
    assert server.auto_replied == []  # shrinking was enough: no summary request


def test_big_overflow_summarizes_but_never_cuts_the_last_turns_results():
    conv = long_conversation(turns=8, result_chars=3000)
    texts, server = compact_with_budget(conv, 7)  # more than the 6 old results can give
    assert len(server.auto_replied) == 1
    assert len(texts) == 2 and all(len(t) > 2900 and "removed" not in t for t in texts)
    assert texts[0].startswith("line 6") and texts[1].startswith("line 7")


def test_compaction_shrinks_then_summarizes_and_keeps_task_verbatim():
    conv = long_conversation(turns=12, result_chars=3000)
    with FakeVLLM([Reply(content="done")], max_model_len=4096, auto_reply=summary_reply) as server:
        client = make_client(server)
        client.resolve_model()
        events = []
        turn = client.complete(conv, TOOL_DEFINITIONS, events.append)
        server.assert_done()
        assert len(server.auto_replied) == 1
        sent = server.requests[-1]["messages"]
    assert turn.content == "done"
    assert sent[0]["content"] == "SYSTEM PROMPT"
    # the task stays verbatim; the summary follows it (adjacent user messages are joined for the template)
    assert sent[1]["content"].startswith("Fix the bug in app.py\n\nSummary of the work so far")
    assert "SUMMARY: read files" in sent[1]["content"]
    assert server.prompt_tokens(server.requests[-1]) < 4096 * 0.8
    assert any("Compacted the conversation" in e.message for e in events if isinstance(e, Notice))
    # every tool call id in what was sent still has exactly one result (the fake server checks it too)
    assert not server.problems


def test_vllm_context_error_compacts_harder_once_then_succeeds():
    # We believe the window is 32k, the server says 3000: its 400 triggers one forced compaction.
    conv = long_conversation(turns=6, result_chars=2000)
    with FakeVLLM(
        [Reply(content="after compaction")], max_model_len=3000, auto_reply=summary_reply
    ) as server:
        client = make_client(server, context_window=32768)
        turn = client.complete(conv, TOOL_DEFINITIONS, lambda e: None)
        server.assert_done()
    assert turn.content == "after compaction"
    assert len(server.auto_replied) == 1


def test_still_too_long_after_compaction_stops_with_overflow():
    conv = Conversation()
    conv.add_user("x " * 5000)  # the task alone is larger than the window
    with FakeVLLM([], max_model_len=3000, auto_reply=summary_reply) as server:
        client = make_client(server, context_window=32768)
        with pytest.raises(ContextOverflow, match="no longer fits") as e:
            client.complete(conv, TOOL_DEFINITIONS, lambda e: None)
        assert e.value.exit_code == 3
        # one send: its 400 names the true window, which the task alone overflows: no resend
        assert len(server.requests) == 1
    assert "of a 3,000-token window" in str(e.value)


def test_overflow_detected_before_sending():
    conv = Conversation()
    conv.add_user("word " * 9000)
    with FakeVLLM([], max_model_len=4096, auto_reply=summary_reply) as server:
        client = make_client(server)
        client.resolve_model()
        with pytest.raises(ContextOverflow):
            client.complete(conv, TOOL_DEFINITIONS, lambda e: None)
        assert server.requests == []


def test_transcript_is_bounded():
    conv = long_conversation(turns=50, result_chars=5000)
    text = render_transcript(conv.entries, 10_000)
    assert len(text) < 10_200 and "omitted" in text


def test_breakdown_accounts_for_every_part():
    conv = long_conversation(turns=3, result_chars=700)
    conv.entries.append(UserMessage("Summary: x", "summary"))
    with FakeVLLM([]) as server:
        client = make_client(server)
        parts = client.context.breakdown("SYSTEM PROMPT", TOOL_DEFINITIONS, conv)
    assert parts["tool results"] > parts["assistant messages"] > 0
    assert parts["summaries"] > 0 and parts["tool definitions"] > 100


def test_the_summary_request_uses_the_model_profile_like_a_turn():
    """The profile's temperature and request parameters (e.g. thinking off) apply to summaries too."""
    conv = long_conversation(turns=6, result_chars=2000)
    with FakeVLLM([], auto_reply=summary_reply) as server:
        client = make_client(server)
        client.resolve_model()
        client.profile = Profile(temperature=0.3, top_p=0.8, chat_template_kwargs={"enable_thinking": False})
        client.compact(conv, TOOL_DEFINITIONS, lambda e: None, force=True)
        (body,) = server.auto_replied
    assert COMPACT_MARK in body["messages"][0]["content"] and "tools" not in body
    assert body["temperature"] == 0.3 and body["top_p"] == 0.8
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


@pytest.mark.parametrize(
    ("message", "window"),
    [
        (
            "This model's maximum context length is 8192 tokens. However, your prompt contains at least "
            "8193 input tokens, which exceeds this limit even without any output tokens.",
            8192,
        ),
        (
            "max_tokens=32768 cannot be greater than max_model_len=8192. Please request fewer output tokens.",
            8192,
        ),
        (
            "max_completion_tokens=9000 cannot be greater than max_model_len=max_total_tokens=4096. "
            "Please request fewer output tokens.",
            4096,
        ),  # vLLM 0.18-0.30
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 5000. This model's maximum context length "
            "is 2048 tokens and your request has 10 input tokens (5000 > 2048 - 10).",
            2048,
        ),
    ],
)
def test_the_window_is_learned_from_each_of_vllms_context_errors(message, window):
    """Issue 35, item 3: behind a gateway without max_model_len, the max_tokens 400 comes first."""
    with FakeVLLM([]) as server:
        client = make_client(server, context_window=32768)
        assert client.context.learn(message)
        assert client.context.window == window
        assert not client.context.learn(message)  # nothing new the second time


def big_read(call_id, chars):
    return ToolResult(call_id, "read", "text", "".join(f"{i:05d}:a,b;c.d=e\n" for i in range(chars // 16)))


def test_a_result_is_clipped_once_and_never_again_between_compactions():
    """Issue 35, item 1: whatever follows it (here the loop guard's note), a new result is clipped to
    its share of the window; a result clipped before keeps its bytes when the window changes, so the
    prefix vLLM cached stays."""
    conv = Conversation()
    conv.add_user("read big.txt")
    with FakeVLLM([Reply(content="one"), Reply(content="two")], max_model_len=32768) as server:
        client = make_client(server, context_window=16384)
        client.resolve_model()
        for i in range(2):
            conv.add_turn(
                AssistantTurn(content="", tool_calls=[ToolCall(f"c{i}", "read", {"path": "big.txt"})])
            )
            conv.add_results([big_read(f"c{i}", 40_000)], "native")
            conv.add_user("You have made exactly this read call 3 times in a row.", kind="note")
            client.complete(conv, TOOL_DEFINITIONS, lambda e: None)
            client.context.configured_window = 12000  # a smaller window: only new results get its share
        first, second = (m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert first == next(m for m in server.requests[0]["messages"] if m["role"] == "tool")  # kept as sent
    for message, window in ((first, 16384), (second, 12000)):
        assert "characters cut here" in message["content"]
        assert 0.8 * 0.3 * window < count_tokens(message["content"]) <= 0.3 * window
