"""Issue 37's tools against real vLLM 0.32: the task list and a sub-agent, natively on server A
(`--tool-call-parser hermes`) and in the text protocol on server B (no tool flags). The tiny model's
replies are forced (agent_runs.forced): the parent and its sub-agent share the profile, so the
sub-agent, which has no delegate tool, is answered "unknown tool" and stops at its iteration limit;
what is proven is that the calls go through the real server both ways, the sub-agent's requests
carry only read and exec, and the parent gets one bounded result."""

from __future__ import annotations

import json
from pathlib import Path

from agent_runs import forced, hermes, run_agent, text_call

STEPS = [{"text": "read notes", "status": "in_progress"}, {"text": "answer", "status": "pending"}]


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    return ws


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def test_update_plan_and_delegate_run_natively(server_a, tmp_path):
    ws = workspace(tmp_path)
    reply = (
        hermes("update_plan", {"steps": STEPS}) + "\n" + hermes("delegate", {"task": "What is in notes.txt?"})
    )
    run = run_agent(
        ws, server_a, "Look at notes.txt.", forced(reply), "--debug", "--max-iterations", "1",
        output="stream-json", delegate={"max_iterations": 1},
    )  # fmt: skip
    assert run.code == 3, run.describe()  # the parent's one iteration is used up
    assert {"type": "plan_updated", "steps": STEPS} in run.events
    result = run.result
    assert [c["name"] for c in result["tool_calls"]] == ["update_plan", "delegate"]
    assert [s["reason"] for s in result["subagents"]] == ["max_iterations"]
    requests = [r["data"] for r in run.trace() if r["kind"] == "request"]
    parent, sub = requests[0], requests[1]
    assert {"update_plan", "delegate"} <= offered(parent)
    assert offered(sub) == {"read", "exec"} and "What is in notes.txt?" in json.dumps(sub["messages"])


def test_delegate_runs_in_the_text_protocol(server_b, tmp_path):
    ws = workspace(tmp_path)
    reply = text_call("delegate", {"task": "What is in notes.txt?"})
    run = run_agent(
        ws, server_b, "Look at notes.txt.", forced(reply, grammar=True), "--max-iterations", "2",
        output="stream-json", delegate={"max_iterations": 1},
    )  # fmt: skip
    result = run.result
    assert result["function_calling"] is False, run.describe()
    delegates = [c for c in result["tool_calls"] if c["name"] == "delegate"]
    assert delegates and all("sub-agent stopped before it answered" in c["summary"] for c in delegates)
    inner = [e["event"]["type"] for e in run.of_type("subagent_event")]
    assert "request_started" in inner and "task_finished" in inner
