"""The fake server answers many sessions at once (a batch): each conversation has its own script,
found by a key in the task text and played by turn; its prefix cache and /metrics counters span all."""

import json
import threading
import urllib.request

import pytest

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

SYSTEM = {"role": "system", "content": "You are a coding agent. " * 20}


def chat(server, messages):
    body = json.dumps({"model": server.model, "messages": messages}).encode()
    request = urllib.request.Request(
        server.base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        return {"status": e.code}


def answer_of(reply):
    """The reply's first line (no tools were sent, so a call follows it as a TOOL_CALL line)."""
    return reply["choices"][0]["message"]["content"].splitlines()[0]


def turn(history, reply):
    """History after the model's reply and, for a call, its result."""
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []  # vLLM 0.32 leaves the key out of a reply without calls
    out = [*history, {"role": "assistant", "content": message["content"], "tool_calls": calls or None}]
    return out + [{"role": "tool", "tool_call_id": tc["id"], "content": "ok"} for tc in calls]


def scripts():
    return {
        "[task-a]": [Reply(content="a1", calls=[Call("read", {"path": "a.py"})]), Reply(content="a done")],
        "[task-b]": [Reply(content="b1", calls=[Call("read", {"path": "b.py"})]), Reply(content="b done")],
    }


def play(server, key, results):
    history = [SYSTEM, {"role": "user", "content": f"fix it {key}"}]
    first = chat(server, history)
    second = chat(server, turn(history, first))
    results[key] = (answer_of(first), answer_of(second))


def test_concurrent_conversations_each_get_their_own_script_by_turn():
    with FakeVLLM(conversations=scripts()) as server:
        results = {}
        threads = [
            threading.Thread(target=play, args=(server, key, results)) for key in ("[task-b]", "[task-a]")
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        server.assert_done()
    assert results == {"[task-a]": ("a1", "a done"), "[task-b]": ("b1", "b done")}


def test_a_conversation_run_again_from_the_start_gets_the_same_replies():
    with FakeVLLM(conversations=scripts()) as server:
        first, again = {}, {}
        play(server, "[task-a]", first)
        play(server, "[task-a]", again)
        play(server, "[task-b]", first)
        server.assert_done()
    assert first["[task-a]"] == again["[task-a]"] == ("a1", "a done")


def test_requests_outside_the_scripts_are_problems():
    with FakeVLLM(conversations=scripts()) as server:
        history = [SYSTEM, {"role": "user", "content": "fix it [task-a]"}]
        first = chat(server, history)
        second = turn(turn(history, first), chat(server, turn(history, first)))
        assert chat(server, second) == {"status": 500}  # a third turn: beyond the script
        assert chat(server, [SYSTEM, {"role": "user", "content": "[task-a] and [task-b]"}]) == {"status": 500}
        with pytest.raises(AssertionError) as failed:
            server.assert_done()
    message = str(failed.value)
    assert "conversation '[task-a]': unscripted turn 3 (script has 2)" in message
    assert "matches several conversations" in message
    assert "conversation '[task-b]': turns [1, 2] of 2 never asked for" in message


def test_unmatched_requests_still_use_the_plain_script():
    with FakeVLLM([Reply(content="plain")], conversations=scripts()) as server:
        assert answer_of(chat(server, [SYSTEM, {"role": "user", "content": "no key here"}])) == "plain"
        with pytest.raises(AssertionError, match="never asked for"):
            server.assert_done()


def test_the_prefix_cache_is_shared_across_conversations():
    """An identical system prompt is cached for every session after the first; a different one is not."""
    other = {"role": "system", "content": "Different prompt. " * 20}
    with FakeVLLM(conversations=scripts(), prompt_tokens_details=True, metrics={}) as server:
        cold = chat(server, [SYSTEM, {"role": "user", "content": "fix it [task-a]"}])["usage"]
        warm = chat(server, [SYSTEM, {"role": "user", "content": "fix it [task-b]"}])["usage"]
        miss = chat(server, [other, {"role": "user", "content": "again [task-b]"}])["usage"]
        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as response:
            page = response.read().decode()
    assert cold["prompt_tokens_details"]["cached_tokens"] == 0
    cached = warm["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0 and cached % 16 == 0 and cached < warm["prompt_tokens"]
    assert miss["prompt_tokens_details"]["cached_tokens"] <= 16  # the message framing, as in a template
    totals = {
        line.split("{")[0]: float(line.split()[-1])
        for line in page.splitlines()
        if line.startswith("vllm:") and "_total{" in line
    }
    prompts = cold["prompt_tokens"] + warm["prompt_tokens"] + miss["prompt_tokens"]
    assert totals["vllm:prompt_tokens_total"] == prompts == totals["vllm:prefix_cache_queries_total"]
    assert totals["vllm:prefix_cache_hits_total"] == cached + miss["prompt_tokens_details"]["cached_tokens"]
    assert totals["vllm:generation_tokens_total"] > 0
    assert "# TYPE vllm:prefix_cache_hits counter" in page


def test_turn_latency_delays_every_answer():
    import time

    with FakeVLLM([Reply(content="slow")], turn_latency=0.3) as server:
        started = time.monotonic()
        assert answer_of(chat(server, [SYSTEM, {"role": "user", "content": "hi"}])) == "slow"
        assert time.monotonic() - started >= 0.3
        server.assert_done()
