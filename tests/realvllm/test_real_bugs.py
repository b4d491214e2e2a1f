"""The bugs the real server showed (issue 16, section 2), one test each where the real server can show
it. Each failed before the fixes of issue 16 (sections 2-3) and passes with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_runs import SERVED_NAME, forced, hermes, reasoning_then, run_agent, run_doctor
from agent_runs import check as doctor_row
from test_real_window import big_file, long_task

from vllm_bot.model.forced import FINISH, FINISH_TOOL
from vllm_bot.tools.definitions import TOOL_DEFINITIONS, find_definition

ANSWER = "The answer is 42."
LONG_ANSWER = "The answer is forty-two: seventeen and twenty-five, added up, make forty-two. " * 3


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    return ws


def whole_or_stopped(run, whole: str | None) -> None:
    """A reply cut by max_tokens or empty is never a finished task: the run ends with the whole
    answer (`whole`; None: the model can never give it), or stops with exit 3 and a reason of its own."""
    result = run.result
    if run.code == 0:
        assert whole is not None and result["answer"] == whole, run.describe()
    else:
        assert run.code == 3 and result["exit_reason"] not in ("done", "error"), run.describe()


# -- bug 1: a reply cut by max_tokens, or empty after its reasoning, ends the task as done ----------


# issue 16 bug 1: a reply cut by max_tokens exits 0
def test_an_answer_cut_by_max_tokens_is_not_a_finished_task(server_a, tmp_path):
    run = run_agent(
        workspace(tmp_path),
        server_a,
        "Why 42?",
        forced(LONG_ANSWER),
        "--max-iterations",
        "4",
        vllm={"max_tokens": 12},
    )
    whole_or_stopped(run, LONG_ANSWER.strip())


# issue 16 bug 1: a model that thinks past the cap succeeds with nothing
def test_reasoning_past_the_cap_is_not_a_finished_task(server_c, tmp_path):
    # Without a bias towards </think> the random model reasons until max_tokens: content stays null.
    run = run_agent(
        workspace(tmp_path),
        server_c,
        "What is 17 + 25?",
        forced(ANSWER),
        "--max-iterations",
        "3",
        vllm={"max_tokens": 48},
    )
    whole_or_stopped(run, None)


# issue 16 bug 1: an empty answer after reasoning exits 0
def test_an_empty_answer_after_reasoning_is_not_a_finished_task(server_c, tmp_path):
    run = run_agent(
        workspace(tmp_path),
        server_c,
        "What is 17 + 25?",
        reasoning_then(server_c, ""),
        "--max-iterations",
        "3",
    )
    whole_or_stopped(run, None)


# -- bug 2: required / named tool choice without "strict" -----------------------------------------


# issue 16 bug 2: tools go out without strict: vLLM constrains only the envelope
@pytest.mark.parametrize("tool_choice", ["read", "required"])
def test_forced_tool_choice_gets_arguments_that_fit_the_schema(server_a, tmp_path, tool_choice):
    # Sampled (seeded) with a push towards `"` and `}`: without the schema the arguments came back as
    # `42` or a bare string here; with `"strict": true` vLLM holds them to the tool's schema. Nothing
    # is approved: a command of random text must not run.
    quote, brace = server_a.tokenize('"}')
    profile = {
        "match": [SERVED_NAME],
        "temperature": 1.0,
        "extra_body": {"seed": 1, "logit_bias": {str(quote): 3, str(brace): 3}},
    }
    run = run_agent(
        workspace(tmp_path),
        server_a,
        "Read notes.txt.",
        profile,
        "--max-iterations",
        "1",
        approve=False,
        vllm={"tool_choice": tool_choice, "max_tokens": 600},
    )
    calls = run.result["tool_calls"]  # the model may make more than one call in its one reply
    assert calls, run.describe()
    for call in calls:
        # a named choice goes out as `required` over that tool and `finish` (model/forced.py)
        assert tool_choice == "required" or call["name"] in (tool_choice, FINISH), run.describe()
        definitions = [*TOOL_DEFINITIONS, FINISH_TOOL]
        schema = find_definition(definitions, call["name"])["function"]["parameters"]
        assert set(schema["required"]) <= set(call["arguments"]), run.describe()


# issue 16 bug 2: the malformed-reply stop recommends native calling while it is on
def test_the_malformed_stop_does_not_recommend_what_is_already_on(server_a, tmp_path):
    bad = hermes("read", {"paht": 1})
    run = run_agent(workspace(tmp_path), server_a, "Read notes.txt.", forced(bad), "--max-iterations", "5")
    result = run.result
    assert result["exit_reason"] == "malformed" and result["function_calling"] is True, run.describe()
    assert "native tool calling may do better" not in result["answer"]


# -- bug 3: --output-format json after an error -----------------------------------------------------


# issue 16 bug 3: json after an error reports iterations 0 and usage 0/0
def test_json_after_an_error_reports_the_requests_made(server_a, tmp_path):
    """The task fills most of the window; the file read in the first iteration leaves no room for the
    second request (compaction cannot shrink a task), so the run stops with an error after one
    answered request."""
    ws = workspace(tmp_path)
    big_file(ws)
    run = run_agent(
        ws,
        server_a,
        long_task(server_a, 5600),
        forced(hermes("read", {"path": "big.txt"})),
        "--max-iterations",
        "3",
    )
    result = run.result
    assert result["exit_code"] == 3 and result["error"], run.describe()
    assert [c["name"] for c in result["tool_calls"]] == ["read"]
    assert result["iterations"] >= 1
    assert result["usage"]["prompt_tokens"] > 5600 and result["usage"]["completion_tokens"] > 0


# -- bug 4: vllm.context_window above the server's real window ------------------------------------


# issue 16 bug 4: the real window in vLLM's 400 does not correct a configured one
def test_a_configured_window_above_the_real_one_is_corrected(server_a, tmp_path):
    ws = workspace(tmp_path)
    big_file(ws)
    run = run_agent(
        ws,
        server_a,
        "Read big.txt.",
        forced(hermes("read", {"path": "big.txt"})),
        "--max-iterations",
        "2",
        vllm={"context_window": 40000, "max_tokens": 1000},
    )
    assert run.code == 3 and run.result["exit_reason"] == "max_iterations", run.describe()
    assert [c["ok"] for c in run.result["tool_calls"]] == [True, True]


# issue 16 bug 4: max_tokens from a configured window above the real one is refused, not corrected
def test_max_tokens_from_a_configured_window_above_the_real_one_is_corrected(server_a, tmp_path):
    # The default max_tokens of a 100,000-token window is larger than the real 8,192: vLLM answers
    # 400 "max_tokens=25000 cannot be greater than max_model_len=8192", and the agent compacts a
    # conversation that was never too long, then stops.
    run = run_agent(
        workspace(tmp_path), server_a, "Say something.", forced(ANSWER), vllm={"context_window": 100000}
    )
    assert run.code == 0 and run.result["answer"] == ANSWER, run.describe()


# -- bug 5: the progress line after compaction --------------------------------------------------


# issue 16 bug 5: the progress line after compaction counts only the calls left in the history
def test_the_progress_line_counts_every_call_of_the_task(server_a, tmp_path):
    run = run_agent(
        workspace(tmp_path),
        server_a,
        "Count.",
        forced(hermes("exec", {"command": "seq 1 200"})),
        "--max-iterations",
        "6",
        output="stream-json",
        agent={"loop_warn_after": 40, "loop_stop_after": 50},
        context={"compact_threshold": 0.5},
    )
    assert any("Compacted the conversation" in e["message"] for e in run.of_type("notice")), run.describe()
    assert len(run.result["tool_calls"]) == 6
    assert "Progress: 6 exec calls" in run.result["answer"]


# -- bug 6: vllm.max_tokens null ------------------------------------------------------------------


# issue 16 bug 6: max_tokens null is capped at max(1024, window/4), not the rest of the window
def test_max_tokens_null_lets_a_reply_use_the_rest_of_the_window(server_a, tmp_path):
    long_reply = " ".join(f"Step {i}: add the next pair of numbers and carry the tens." for i in range(64))
    assert 2100 < len(server_a.tokenize(long_reply)) < 5000  # more than window/4, less than what is left
    run = run_agent(workspace(tmp_path), server_a, "Explain.", forced(long_reply), "--debug")
    request = next(r["data"] for r in run.trace() if r["kind"] == "request")
    assert request["max_tokens"] > 5000, run.describe()
    assert run.code == 0 and run.result["answer"] == long_reply


# -- bug 7: doctor's advice --------------------------------------------------------------------


# issue 16 bug 7: doctor suggests --reasoning-parser to a server that has it, with thinking off in the profile
def test_doctor_does_not_suggest_a_reasoning_parser_the_server_has(server_c, tmp_path):
    profile = forced("<think>\nSeventeen plus twenty-five.\n</think>\n\n42")
    profile["chat_template_kwargs"] = {"enable_thinking": False}
    _, report, _ = run_doctor(workspace(tmp_path), server_c, profile)
    row = doctor_row(report, "reasoning")
    assert "--reasoning-parser" not in (row.get("fix") or ""), row
    assert "--reasoning-parser" not in report["suggested_flags"]


# issue 16 bug 7: an inconclusive tool-call check suggests turning thinking off after plain text
def test_doctor_does_not_blame_thinking_for_a_plain_text_reply(server_a, tmp_path):
    chatter = " ".join(f"Sentence {i} of a reply that talks instead of calling a tool." for i in range(60))
    _, report, _ = run_doctor(workspace(tmp_path), server_a, forced(chatter))
    row = doctor_row(report, "tool_call")
    assert row["data"]["kind"] == "truncated" and "in text" in row["detail"], row
    assert "thinking" not in (row.get("fix") or "")


# -- bug 8: a call from inside an unclosed <think> -------------------------------------------------


# issue 16 bug 8: a call the server's parser took from inside an unclosed <think> runs
def test_a_call_written_inside_unclosed_reasoning_does_not_run(server_a, tmp_path):
    ws = workspace(tmp_path)
    reply = "<think>\nMaybe I should log something first.\n" + hermes(
        "exec", {"command": "echo ran > log.txt"}
    )
    run = run_agent(
        ws, server_a, "Think about it.", forced(reply), "--max-iterations", "1", output="stream-json"
    )
    [detected] = run.of_type("calls_detected")
    assert detected["source"] == "native", run.describe()  # vLLM's hermes parser did take the call
    assert not (ws / "log.txt").exists()
    assert not run.of_type("tool_call_started")


# -- bug 9: debug output and the trace ----------------------------------------------------------


# issue 16 bug 9: stream-json emits debug events without --debug
def test_stream_json_has_no_debug_events_without_debug(server_a, tmp_path):
    run = run_agent(workspace(tmp_path), server_a, "Say it.", forced(ANSWER), output="stream-json")
    assert run.code == 0, run.describe()
    assert not run.of_type("debug")


# issue 16 bug 9: the trace records the SDK's arguments, not the body sent, and leaves out /tokenize
def test_the_trace_records_the_exact_body_and_the_side_requests(server_a, tmp_path):
    run = run_agent(workspace(tmp_path), server_a, "Say it.", forced(ANSWER), "--debug")
    trace = run.trace()
    request = next(r["data"] for r in trace if r["kind"] == "request")
    assert "extra_body" not in request and request["structured_outputs"] == {"choice": [ANSWER]}
    assert any("/tokenize" in json.dumps(r) for r in trace if r["kind"] not in ("request", "chunk"))
