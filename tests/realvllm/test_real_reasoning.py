"""Reasoning kept apart from the answer: by the server (C, `--reasoning-parser qwen3`, reasoning in the
`reasoning` field) and by the agent itself (A, a `<think>` block written in the content)."""

from __future__ import annotations

from pathlib import Path

from agent_runs import forced, hermes, reasoning_then, run_agent

ANSWER = "The answer is 42."


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    return ws


def streamed(run, kind: str) -> str:
    return "".join(e["text"] for e in run.of_type(kind))


def test_server_side_reasoning_never_reaches_the_answer(server_c, tmp_path):
    run = run_agent(
        workspace(tmp_path),
        server_c,
        "What is 17 + 25?",
        reasoning_then(server_c, ANSWER),
        output="stream-json",
    )

    assert run.code == 0, run.describe()
    assert run.result["answer"] == ANSWER
    [turn] = [e["turn"] for e in run.of_type("turn_finished")]
    assert turn["content"] == ANSWER and turn["finish_reason"] == "stop"
    reasoning = streamed(run, "reasoning_delta")
    assert reasoning and turn["reasoning"] == reasoning
    assert streamed(run, "text_delta") == ANSWER


def test_a_native_call_after_server_side_reasoning_runs(server_c, tmp_path):
    ws = workspace(tmp_path)
    profile = reasoning_then(server_c, hermes("exec", {"command": "echo ran > log.txt"}))
    run = run_agent(ws, server_c, "Log a line.", profile, "--max-iterations", "1", output="stream-json")

    assert (ws / "log.txt").read_text() == "ran\n", run.describe()
    [turn] = [e["turn"] for e in run.of_type("turn_finished")]
    assert turn["reasoning"] and "<tool_call>" not in turn["reasoning"]
    [detected] = run.of_type("calls_detected")
    assert detected["source"] == "native"
    assert "tool_call" not in streamed(run, "text_delta")


def test_a_think_block_in_the_content_is_split_off_by_the_agent(server_a, tmp_path):
    reply = f"<think>\nSeventeen and twenty-five make forty-two.\n</think>\n\n{ANSWER}"
    run = run_agent(workspace(tmp_path), server_a, "What is 17 + 25?", forced(reply), output="stream-json")

    assert run.code == 0, run.describe()
    assert run.result["answer"] == ANSWER
    assert "forty-two" in streamed(run, "reasoning_delta")
    assert "forty-two" not in streamed(run, "text_delta") and "think>" not in streamed(run, "text_delta")
