"""Issue 37's ways of working through the real agent (`cli.py -p`, the fake vLLM server), in both call
modes (native function calling, and the text protocol): plan mode, the task list, sub-agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import needs_bwrap

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
MODES = {"native": dict(mode="parser"), "text": dict(mode="noparser")}
APP = "def add(a, b):\n    return a - b\n"
STEPS = [
    {"text": "read app.py", "status": "completed"},
    {"text": "fix add", "status": "in_progress"},
    {"text": "run the check", "status": "pending"},
]


def run_cli(ws: Path, server: FakeVLLM, *args: str, config: dict | None = None):
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(ws.parent / "state"),
        "XDG_CONFIG_HOME": str(ws.parent / "cfg"),
    }
    env.pop("DEBUG", None)
    extra = []
    if config is not None:
        path = ws.parent / "config.json"
        path.write_text(json.dumps(config))
        extra = ["--config", str(path)]
    cmd = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(ws), "--base-url", server.base_url]
    return subprocess.run([*cmd, *extra, *args], capture_output=True, text=True, timeout=180, env=env)


def tools_offered(body: dict) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def results(body: dict) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m["role"] == "tool"] or [
        str(m.get("content")) for m in body["messages"] if m["role"] == "user"
    ]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    return workspace


@needs_bwrap
@pytest.mark.parametrize("mode", list(MODES))
def test_headless_plan_mode_explores_changes_nothing_and_prints_the_plan(ws: Path, mode: str):
    plan = "# Plan\n\n1. In app.py, make add() return a + b.\n2. Check with python3 -c."
    script = [
        Reply(calls=[Call("exec", {"command": "cat app.py; echo hacked > app.py; touch new.txt"})]),
        Reply(calls=[Call("write", {"path": "app.py", "content": "x"})]),
        Reply(calls=[Call("present_plan", {"plan": plan})]),
    ]
    with FakeVLLM(script, **MODES[mode]) as server:
        proc = run_cli(ws, server, "-p", "fix add", "--plan", "--output-format", "json")
        server.assert_done()
        first, last = server.requests[0], server.requests[-1]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["answer"] == plan and result["exit_reason"] == "done"
    assert (ws / "app.py").read_text() == APP and not (ws / "new.txt").exists()  # a kernel fact
    said = "\n".join(str(m.get("content")) for m in last["messages"])
    assert "Read-only file system" in said and "plan mode is on" in said
    assert "Plan mode is on" in json.dumps(first["messages"])  # the model was told
    if mode == "native":
        assert {"present_plan", "update_plan", "delegate"} <= tools_offered(first)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_task_list_is_kept_shown_and_streamed(ws: Path, mode: str):
    script = [
        Reply(calls=[Call("update_plan", {"steps": STEPS})]),
        Reply(calls=[Call("update_plan", {"steps": [{"text": "a", "status": "in_progress"}] * 2})]),
        Reply(content="Done."),
    ]
    with FakeVLLM(script, **MODES[mode]) as server:
        proc = run_cli(ws, server, "-p", "fix add", "--output-format", "stream-json")
        server.assert_done()
        told = results(server.requests[-1])
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    updates = [e for e in events if e["type"] == "plan_updated"]
    assert updates == [{"type": "plan_updated", "steps": STEPS}]  # the second list was refused
    assert any("Task list updated: 1/3 done." in r for r in told)
    assert any("keep at most one in_progress" in r for r in told)


def test_the_task_list_survives_continue(ws: Path):
    with FakeVLLM([Reply(calls=[Call("update_plan", {"steps": STEPS})]), Reply(content="ok")]) as server:
        assert run_cli(ws, server, "-p", "start").returncode == 0
    with FakeVLLM([Reply(content="continued")]) as server:
        proc = run_cli(ws, server, "-p", "go on", "--continue", "--output-format", "stream-json")
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {"type": "plan_updated", "steps": STEPS} in events, proc.stderr


def test_with_every_way_of_working_off_the_tools_cost_nothing(ws: Path):
    config = {"agent": {"task_list": False, "plan_mode": False}, "delegate": {"enabled": False}}
    with FakeVLLM([Reply(content="ok")]) as server:
        proc = run_cli(ws, server, "-p", "hi", config=config)
        offered = tools_offered(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert offered == {"read", "write", "edit", "exec"}
    with FakeVLLM([]) as server:
        proc = run_cli(ws, server, "-p", "hi", "--plan", config=config)
    assert proc.returncode != 0 or "plan" not in proc.stdout


@needs_bwrap
@pytest.mark.parametrize("mode", list(MODES))
def test_two_delegates_run_at_once_read_only_and_return_only_their_answers(ws: Path, mode: str):
    big = "\n".join(f"line {i}" for i in range(3000))
    (ws / "big.txt").write_text(big)
    conversations = {
        "where is add": [
            Reply(calls=[Call("delegate", {"task": "SUB-ONE: find add"}),
                         Call("delegate", {"task": "SUB-TWO: read big.txt", "files": ["big.txt"]})]),
            Reply(content="add is in app.py:1"),
        ],
        "SUB-ONE": [Reply(calls=[Call("exec", {"command": "grep -n 'def add' app.py; echo x > app.py"})]),
                    Reply(content="app.py:1 defines add")],
        "SUB-TWO": [Reply(calls=[Call("read", {"path": "big.txt"})]),
                    Reply(calls=[Call("write", {"path": "big.txt", "content": "gone"})]),
                    Reply(content="big.txt has 3000 lines")],
    }  # fmt: skip
    with FakeVLLM(conversations=conversations, **MODES[mode]) as server:
        proc = run_cli(ws, server, "-p", "where is add", "--output-format", "json")
        parent = [b for b in server.requests if "where is add" in json.dumps(b["messages"][:2])]
        subs = [b for b in server.requests if "SUB-" in json.dumps(b["messages"][:2])]
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["answer"] == "add is in app.py:1"
    assert (ws / "app.py").read_text() == APP and (ws / "big.txt").read_text() == big
    answers = [c["summary"] for c in result["tool_calls"]]
    assert answers == ["app.py:1 defines add", "big.txt has 3000 lines"]  # in the order of the calls
    assert "line 2999" not in json.dumps(parent[-1])  # the parent never saw the file
    assert all("delegate" not in tools_offered(b) and "write" not in tools_offered(b) for b in subs)
    assert [s["reason"] for s in result["subagents"]] == ["done", "done"]
    assert all(s["usage"]["prompt_tokens"] > 0 for s in result["subagents"])


def test_a_subagent_over_its_token_budget_stops_and_says_so(ws: Path):
    conversations = {
        "look around": [Reply(calls=[Call("delegate", {"task": "SUB: look"})]), Reply(content="ok")],
        "SUB": [Reply(calls=[Call("read", {"path": "app.py"})]) for _ in range(6)] + [Reply(content="x")],
    }
    config = {"delegate": {"max_tokens": 1000}}
    with FakeVLLM(conversations=conversations, strict=False) as server:
        proc = run_cli(ws, server, "-p", "look around", "--output-format", "json", config=config)
    result = json.loads(proc.stdout)
    stopped = result["tool_calls"][0]
    assert not stopped["ok"] and "delegate.max_tokens" in stopped["summary"], stopped


def test_compaction_carries_the_task_list():
    from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
    from vllm_bot.conversation import Conversation, task_list
    from vllm_bot.model.context import summarize_old_turns

    conversation = Conversation()
    conversation.add_user("fix add")
    for i in range(4):
        call = ToolCall(
            f"c{i}", "update_plan" if i == 0 else "read", {"steps": STEPS} if i == 0 else {"path": "a"}
        )
        conversation.add_turn(AssistantTurn("", [call], "", "tool_calls", None, "native"))
        conversation.add_results([ToolResult(call.id, call.name, "text", "ok")], "native")
    assert summarize_old_turns(conversation, 1, lambda transcript: "we read files", 10_000) > 0
    assert not any(
        isinstance(e, AssistantTurn) and e.tool_calls[0].name == "update_plan" for e in conversation.entries
    )
    assert task_list(conversation.entries) == STEPS


def test_ctrl_c_stops_a_streaming_subagent_and_the_parent_hears_interrupted(ws: Path):
    import signal
    import time

    long_text = " ".join(f"word{i}" for i in range(40000))  # ~500 s to stream: it must be stopped
    conversations = {
        "explore": [Reply(calls=[Call("delegate", {"task": "SUB: read slowly"})])],
        "SUB": [Reply(content=long_text, chunk_size=4, latency=0.05)],
    }
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(ws.parent / "state"),
        "XDG_CONFIG_HOME": str(ws.parent / "cfg"),
    }
    env.pop("DEBUG", None)
    with FakeVLLM(conversations=conversations, strict=False) as server:
        argv = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(ws), "--base-url", server.base_url]
        proc = subprocess.Popen(
            [*argv, "-p", "explore", "--output-format", "stream-json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("SUB" in json.dumps(b) for b in server.requests):
            time.sleep(0.1)
        time.sleep(1.0)  # the sub-agent's reply is streaming
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)  # streaming on, the sub-agent would take minutes
    assert proc.returncode == 3, err
    result = json.loads(out.splitlines()[-1])
    assert result["exit_reason"] == "interrupted"
    assert "Interrupted by the user" in result["tool_calls"][0]["summary"]
