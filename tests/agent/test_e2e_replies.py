"""Replies that are not (yet) the answer, through `python cli.py -p` and the fake vLLM server (issue 16):
a reply cut by max_tokens or empty after its reasoning never ends a task with exit 0; forced tool
choice sends strict tools and ends through `finish`; a call taken from inside an unclosed <think>
never runs."""

import json
from pathlib import Path

import pytest
from test_e2e import expect_in_last, run_cli

from vllm_bot.prompts import message
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

CONTINUE, NO_ANSWER, THOUGHT_TOO_LONG = message("continue"), message("no_answer"), message("thought_too_long")
CALL_IN_REASONING = message("call_in_reasoning")

LONG = "This answer goes on and on about the code " * 20


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    return ws


def with_config(workspace: Path, config: dict) -> list[str]:
    path = workspace.parent / "config.json"
    path.write_text(json.dumps(config))
    return ["--config", str(path)]


def json_run(workspace, server, *args):
    proc = run_cli(workspace, server, "-p", "explain app.py", "--yes", "--output-format", "json", *args)
    return proc, json.loads(proc.stdout)


def test_a_reply_cut_by_max_tokens_is_continued_and_the_answer_joined(workspace):
    script = [
        Reply(content=LONG),  # 180 tokens: max_tokens 40 cuts it
        Reply(content="and that is all.", expect=expect_in_last(CONTINUE)),
    ]
    with FakeVLLM(script) as server:
        proc, result = json_run(workspace, server, *with_config(workspace, {"vllm": {"max_tokens": 40}}))
        server.assert_done()
        cut = server.requests[0]
    assert proc.returncode == 0, proc.stderr
    assert cut["max_tokens"] == 40
    assert result["answer"].startswith("This answer goes on") and result["answer"].endswith(
        " and that is all."
    )
    assert result["iterations"] == 2
    assert "info: The reply was cut off by max_tokens; asking the model to go on." in proc.stderr


def thinker(expect=None):
    """A model that reasons for ~300 tokens before it answers."""
    return Reply(
        reasoning="Let me consider every line of the file carefully. " * 30, content="42", expect=expect
    )


@pytest.mark.parametrize("choice", ["auto", "required"])  # required: vLLM ends it "tool_calls", no calls
def test_a_model_that_thinks_past_max_tokens_every_time_stops_with_exit_3(workspace, choice):
    script = [thinker(), thinker(expect_in_last(THOUGHT_TOO_LONG)), thinker()]
    config = {"vllm": {"max_tokens": 50, "tool_choice": choice}}
    with FakeVLLM(script) as server:
        proc, result = json_run(workspace, server, *with_config(workspace, config))
        server.assert_done()
    assert proc.returncode == 3, proc.stderr
    assert result["exit_reason"] == "truncated" and result["exit_code"] == 3
    assert "3 replies in a row were still reasoning when cut off by the max_tokens limit" in result["answer"]
    assert "vllm.max_tokens" in result["answer"]
    assert proc.stdout.count("\n") == 1 and "42" not in result["answer"]


def test_a_reply_with_reasoning_and_no_answer_gets_asked_for_the_answer(workspace):
    script = [
        Reply(reasoning="The file sets x to 1."),
        Reply(content="app.py sets x = 1.", expect=expect_in_last(NO_ANSWER)),
    ]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "explain app.py", "--yes")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "app.py sets x = 1.\n"


def test_empty_replies_stop_the_task_with_their_own_reason(workspace):
    with FakeVLLM([Reply(reasoning="Hmm."), Reply(), Reply(reasoning="Hmm.")]) as server:
        proc, result = json_run(workspace, server)
        server.assert_done()
    assert proc.returncode == 3 and result["exit_reason"] == "empty_answer"
    assert "ended without an answer or a tool call" in result["answer"]


def forced_run(workspace, server, choice):
    return run_cli(
        workspace,
        server,
        "-p",
        "make it",
        "--yes",
        *with_config(workspace, {"vllm": {"tool_choice": choice}}),
    )


@pytest.mark.parametrize("choice", ["required", "exec"])
def test_forced_tool_choice_sends_strict_tools_and_finishes_through_finish(workspace, choice):
    script = [
        Reply(calls=[Call("exec", {"command": "echo hi > made.txt"})]),
        Reply(calls=[Call("finish", {"answer": "Made made.txt."})], expect=expect_in_last("Exit code 0")),
    ]
    with FakeVLLM(script) as server:
        proc = forced_run(workspace, server, choice)
        server.assert_done()
        body = server.requests[0]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Made made.txt.\n" and (workspace / "made.txt").read_text() == "hi\n"
    assert body["tool_choice"] == "required"
    names = [t["function"]["name"] for t in body["tools"]]
    assert names[-1] == "finish" and (names == ["exec", "finish"] if choice == "exec" else "read" in names)
    assert all(t["function"]["strict"] is True for t in body["tools"])


def test_finish_beside_other_calls_is_refused_and_the_calls_run(workspace):
    script = [
        Reply(calls=[Call("exec", {"command": "echo hi > made.txt"}), Call("finish", {"answer": "early"})]),
        Reply(
            calls=[Call("finish", {"answer": "Done."})], expect=expect_in_last("finish must be the only call")
        ),
    ]
    with FakeVLLM(script) as server:
        proc = forced_run(workspace, server, "required")
        server.assert_done()
    assert proc.returncode == 0 and proc.stdout == "Done.\n" and (workspace / "made.txt").exists()


def test_auto_tool_choice_sends_the_tools_as_declared(workspace):
    with FakeVLLM([Reply(content="ok")]) as server:
        run_cli(workspace, server, "-p", "hi")
        body = server.requests[0]
    assert body["tool_choice"] == "auto" and "finish" not in json.dumps(body["tools"])
    assert not any("strict" in t["function"] for t in body["tools"])


def test_malformed_native_calls_stop_without_blaming_the_lack_of_native_calling(workspace):
    bad = Reply(calls=[Call("read", {"path": 7, "limit": "many"})])
    with FakeVLLM([bad, bad, bad]) as server:
        proc = run_cli(workspace, server, "-p", "read it", "--yes")
        server.assert_done()
    assert proc.returncode == 3
    assert "3 malformed tool calls in a row" in proc.stderr
    assert "native tool calling may do better" not in proc.stderr
    assert "Native tool calling is on" in proc.stderr


@pytest.mark.parametrize("closed", [False, True])
def test_a_native_call_taken_from_inside_an_unclosed_think_does_not_run(workspace, closed):
    """With thinking off the server's parser takes calls even from a <think> in the text."""
    before = "<think>\nRun it.\n</think>\n" if closed else "<think>\nMaybe I should run it: "
    answer = Reply(content="Done.", expect=None if closed else expect_in_last(CALL_IN_REASONING))
    script = [Reply(content=before, calls=[Call("exec", {"command": "touch made.txt"})]), answer]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "do it", "--yes")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "made.txt").exists() is closed
