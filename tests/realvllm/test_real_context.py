"""Issue 35, context and sessions, against server A (max_model_len 8192): a big tool result is clipped
whatever follows it, a saved session resumes on a smaller window, and behind a gateway that drops
`max_model_len` the window is learned from vLLM's `max_tokens` 400. Each failed before the fixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_runs import forced, hermes, run_agent
from gateway import CardStripper

WINDOW = 8192
LINE = "line {} of the notes, kept for later\n"


def notes(ws: Path, size: int) -> None:
    """`size` bytes of numbered lines: about one token per 1.5 characters of the tiny model."""
    lines, total, i = [], 0, 0
    while total < size:
        lines.append(LINE.format(i))
        total, i = total + len(lines[-1]), i + 1
    (ws / "notes.txt").write_text("".join(lines)[:size])


def workspace(tmp_path: Path, size: int) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    notes(ws, size)
    return ws


READ = hermes("read", {"path": "notes.txt"})


def test_a_third_identical_read_is_clipped_with_the_loop_guards_note_after_it(server_a, tmp_path):
    """Item 1: before, the third read of a 19.7 KB file stayed whole (the loop guard's note came after
    it) and the task ended with "no longer fits ... even after compacting it" (exit 3, `error`)."""
    ws = workspace(tmp_path, 19_700)
    run = run_agent(
        ws, server_a, "Read notes.txt.", forced(READ), "--max-iterations", "4", output="stream-json"
    )
    assert run.code == 3 and run.result["exit_reason"] == "max_iterations", run.describe()
    assert [c["ok"] for c in run.result["tool_calls"]] == [True] * 4
    notes_ = [e["message"] for e in run.of_type("notice")]
    assert not any("no longer fits" in n for n in notes_), notes_
    usage = [e["usage"]["prompt_tokens"] for e in run.of_type("usage_reported")]
    assert len(usage) == 4 and all(p < WINDOW for p in usage)


# The 2k window with the four core tools: the tiny model's tokenizer counts ~2,000 tokens for
# the agent's own prompt with the six default tools (update_plan and delegate too), so a 2k window
# with those is refused before any task (a clear error, tests/model/test_context_e2e.py); 3k fits them.
CORE_TOOLS = {"agent": {"task_list": False}, "delegate": {"enabled": False}}
WINDOWS = [(None, {}), (2048, CORE_TOOLS), (3072, {})]


@pytest.mark.parametrize(
    "window, sections", WINDOWS, ids=["the server's window", "a 2k window, core tools", "a 3k window"]
)
def test_continue_resumes_a_session_whose_newest_turn_holds_a_big_read(server_a, tmp_path, window, sections):
    """Item 2: sessions keep results whole (23 KB here); before, `--continue` said "Compacted ~N -> ~N
    tokens (nothing to do)" and exited 3 before any request."""
    ws = workspace(tmp_path, 23_000)
    first = run_agent(ws, server_a, "Read notes.txt.", forced(READ), "--max-iterations", "1", **sections)
    assert first.code == 3 and first.result["exit_reason"] == "max_iterations", first.describe()
    vllm = {"context_window": window} if window else {}
    resumed = run_agent(ws, server_a, "Carry on.", forced("Done."), "--continue", vllm=vllm, **sections)
    assert resumed.code == 0 and resumed.result["answer"] == "Done.", resumed.describe()


def test_behind_a_gateway_the_window_is_learned_from_the_max_tokens_400(server_a, tmp_path):
    """Item 3: the gateway drops max_model_len from /v1/models and vllm.context_window says 32768:
    vLLM answers `max_tokens=N cannot be greater than max_model_len=8192`; before, that was never
    learned from and the task stopped for good."""
    ws = workspace(tmp_path, 100)
    with CardStripper(server_a.url) as gateway:
        run = run_agent(
            ws,
            gateway,
            "Say something.",
            forced("Done."),
            vllm={"context_window": 32768},
            output="stream-json",
        )
    assert run.code == 0 and run.result["answer"] == "Done.", run.describe()
    notes_ = [e["message"] for e in run.of_type("notice")]
    assert any(f"The server's context window is {WINDOW:,} tokens" in n for n in notes_), notes_
