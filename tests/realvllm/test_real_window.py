"""The context window against server A: the agent takes `max_model_len` from /v1/models, counts with
the server's own /tokenize, keeps a big tool result inside the real window, and stops clearly on
vLLM's prompt-too-long 400."""

from __future__ import annotations

from pathlib import Path

from agent_runs import forced, hermes, run_agent

WINDOW = 8192  # max_position_embeddings of the tiny model, which vLLM serves as max_model_len


def big_file(ws: Path) -> None:
    """2,000 lines, ~60 KB: one read of it is ~24,000 tokens of this model, three windows' worth."""
    (ws / "big.txt").write_text("".join(f"line {i} of the notes, kept for later\n" for i in range(2000)))


def long_task(server, tokens: int) -> str:
    """A task of at least `tokens` tokens, measured by the server."""
    lines = tokens // 10
    while len(server.tokenize(text := " ".join(f"line {i} of the notes" for i in range(lines)))) < tokens:
        lines += tokens // 100
    return "Summarize these notes: " + text


def test_the_served_window_and_tokenize_keep_a_big_result_inside_it(server_a, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    big_file(ws)
    mark = server_a.log_size()
    run = run_agent(
        ws,
        server_a,
        "Read big.txt.",
        forced(hermes("read", {"path": "big.txt"})),
        "--max-iterations",
        "2",
        "--debug",
        output="stream-json",
    )

    [started] = run.of_type("session_started")
    assert started["context_window"] == WINDOW, run.describe()
    assert any(f"fit the {WINDOW:,}-token window" in e["message"] for e in run.of_type("debug"))
    log = server_a.log_since(mark)
    assert '"POST /tokenize HTTP/1.1" 200' in log
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 200') == 2
    assert '"POST /v1/chat/completions HTTP/1.1" 400' not in log
    assert run.code == 3 and run.result["exit_reason"] == "max_iterations"
    usage = [e["usage"] for e in run.of_type("usage_reported")]
    assert len(usage) == 2 and all(0 < u["prompt_tokens"] < WINDOW for u in usage)


def test_a_prompt_longer_than_the_real_window_stops_clearly(server_a, tmp_path):
    """`vllm.context_window` says 16384, the server has 8192: the run stops with one clear sentence
    naming the real window and exit 3, never a traceback or a retry loop. (Before issue 16's fixes
    the agent sent the prompt and vLLM's 400 said so; now the window from /v1/models caps the
    configured one and the agent may stop before sending.)"""
    ws = tmp_path / "ws"
    ws.mkdir()
    mark = server_a.log_size()
    run = run_agent(ws, server_a, long_task(server_a, 9000), forced("Done."), vllm={"context_window": 16384})

    assert run.code == 3, run.describe()
    result = run.result
    assert result["exit_reason"] == "error"
    assert "context window" in result["error"] and f"{WINDOW:,}" in result["error"]
    assert "Traceback" not in run.stderr
    log = server_a.log_since(mark)
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 400') <= 2
