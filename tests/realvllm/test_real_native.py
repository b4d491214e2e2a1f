"""Server A (`--enable-auto-tool-choice --tool-call-parser hermes`): native tool calls through
`cli.py -p`, streamed, two in one reply, each id answered by exactly one result; a call cut by
max_tokens never runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_runs import forced, hermes, run_agent


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    return ws


def streamed_call_ids(trace: list[dict[str, Any]]) -> list[str]:
    """The tool-call ids the server streamed, in order."""
    return [
        call["id"]
        for record in trace
        if record["kind"] == "chunk"
        for choice in record["data"].get("choices") or []
        for call in (choice.get("delta") or {}).get("tool_calls") or []
        if call.get("id")
    ]


def test_two_native_calls_in_one_streamed_reply_run_and_each_id_is_answered(server_a, tmp_path):
    ws = workspace(tmp_path)
    reply = hermes("read", {"path": "notes.txt"}) + "\n" + hermes("exec", {"command": "echo ran >> log.txt"})
    run = run_agent(
        ws, server_a, "Read notes.txt and log a line.", forced(reply), "--debug", "--max-iterations", "2"
    )

    # The forced reply never ends the task, so the iteration limit does.
    assert run.code == 3, run.describe()
    result = run.result
    assert result["exit_reason"] == "max_iterations" and result["function_calling"] is True
    assert [(c["name"], c["ok"]) for c in result["tool_calls"]] == [("read", True), ("exec", True)] * 2
    assert "notes.txt" in result["tool_calls"][0]["summary"]
    assert (ws / "log.txt").read_text() == "ran\nran\n"

    trace = run.trace()
    requests = [r["data"] for r in trace if r["kind"] == "request"]
    assert len(requests) == 2 and all(r["stream"] for r in requests)
    ids = streamed_call_ids(trace)
    assert len(ids) == 4 and len(set(ids)) == 4 and all(i.startswith("chatcmpl-tool-") for i in ids)
    assert [c["id"] for c in result["tool_calls"]] == ids
    second = requests[1]["messages"]
    assistant = [m for m in second if m["role"] == "assistant"]
    assert [c["id"] for c in assistant[-1]["tool_calls"]] == ids[:2]
    assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == ids[:2]


def test_a_call_cut_by_max_tokens_streams_partly_and_never_runs(server_a, tmp_path):
    ws = workspace(tmp_path)
    reply = hermes("write", {"path": "cut.txt", "content": "a long line of text " * 20})
    run = run_agent(
        ws,
        server_a,
        "Write cut.txt.",
        forced(reply),
        "--max-iterations",
        "1",
        output="stream-json",
        vllm={"max_tokens": 40},
    )

    assert not (ws / "cut.txt").exists(), run.describe()
    [turn] = [e["turn"] for e in run.of_type("turn_finished")]
    assert turn["finish_reason"] == "length"
    assert [c["name"] for c in turn["tool_calls"]] == ["write"]  # the partial call did stream
    assert not run.of_type("tool_call_started")
    [call] = run.result["tool_calls"]
    assert not call["ok"] and "max_tokens" in call["summary"]
    assert run.code == 3 and run.result["exit_reason"] == "max_iterations"
