"""agent.time_budget through the real loop, client and tools against the fake vLLM server (issue 7).

Budgets are small (1-3 s) and the server or the command is slow; the tests assert the reason, exit
code and messages, never durations.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vllm_bot.agent.budget import Budget
from vllm_bot.agent.loop import Agent
from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
from vllm_bot.config import AgentConfig, ToolsConfig, VllmConfig
from vllm_bot.conversation import Conversation, ToolResults
from vllm_bot.errors import EXIT_LIMIT
from vllm_bot.events import Notice, TaskFinished
from vllm_bot.model.client import ModelClient
from vllm_bot.model.watchdog import DeadlineReached
from vllm_bot.prompts import message
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.testing.wire import error_body
from vllm_bot.tools import ToolExecutor

ROOT = Path(__file__).resolve().parents[2]
SLOW = "sleep 20; echo finished"


def run_agent(server, workspace, budget, **vllm):
    config = VllmConfig(base_url=server.base_url, model=server.model, **{"timeout": 30, **vllm})
    client = ModelClient(config, system_prompt=lambda text_mode, defs: "SYSTEM")
    client.resolve_model()
    executor = ToolExecutor(workspace, ToolsConfig(), state_dir=workspace / ".vllm-bot")
    events = []
    agent = Agent(client, executor, AgentConfig(time_budget=budget), events.append)
    outcome = agent.run("work on it")
    server.assert_done()  # no request after the budget ran out
    return outcome, agent, events


def assert_stopped_by_budget(outcome, events, budget):
    assert outcome.reason == "time_budget" and outcome.exit_code == EXIT_LIMIT == 3
    assert f"the time budget of {budget:g} s (agent.time_budget) is used up" in outcome.answer
    finished = [e for e in events if isinstance(e, TaskFinished)]
    assert [(e.reason, e.exit_code) for e in finished] == [("time_budget", 3)]


def test_a_long_command_is_cut_to_the_budget_and_the_task_stops(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    script = [Reply(calls=[Call("exec", {"command": SLOW, "timeout": 60}), Call("read", {"path": "a.txt"})])]
    with FakeVLLM(script) as server:
        # 8 s: room for the request and the start of the command on a loaded machine (a budget used
        # up before the command starts would leave it not run, not cut); the command needs 20 s.
        outcome, agent, events = run_agent(server, tmp_path, 8)
    assert_stopped_by_budget(outcome, events, 8)
    assert outcome.iterations == 1
    results = agent.conversation.entries[-1]
    assert isinstance(results, ToolResults)
    ran, skipped = (r.value for r in results.results)
    assert "the task's time budget (agent.time_budget) ran out" in ran
    assert "the timeout was cut to" in ran and "finished" not in ran
    assert skipped == message("budget_not_run")  # the call after it did not start: exactly one result each


def test_a_reply_still_streaming_when_the_budget_runs_out_stops_at_a_chunk(tmp_path):
    long_reply = Reply(content="word " * 400, chunk_size=4, latency=0.02)  # streams for ~10 s
    with FakeVLLM([long_reply]) as server:
        # 4 s: on a loaded machine (parallel workers) 1 s could run out before the first chunk
        outcome, agent, events = run_agent(server, tmp_path, 4)
    assert_stopped_by_budget(outcome, events, 4)
    partial = agent.conversation.entries[-1]
    assert partial.partial and partial.content.startswith("word ")
    assert 0 < len(partial.content) < len("word " * 400)


def test_a_server_that_sends_nothing_is_not_waited_for_past_the_budget(tmp_path):
    silent = Reply(content="never", stall_after_bytes=0)  # headers, then silence
    with FakeVLLM([silent]) as server:
        outcome, agent, events = run_agent(server, tmp_path, 1, timeout=60, stream_idle_timeout=60)
    assert_stopped_by_budget(outcome, events, 1)
    assert agent.conversation.entries[-1].content == "work on it"  # nothing streamed, nothing kept


def test_headless_run_reports_the_budget_in_json_and_exits_3(tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    config = tmp_path / "config.json"
    # 8 s: the process's start-up counts too, and takes seconds on a loaded machine; SLOW needs 20 s.
    config.write_text(json.dumps({"agent": {"time_budget": 8}}))
    script = [Reply(calls=[Call("exec", {"command": SLOW})])]
    with FakeVLLM(script) as server:
        cmd = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(workspace), "--base-url"]
        cmd += [server.base_url, "--config", str(config), "-p", "go", "--yes", "--output-format", "json"]
        env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
        env["XDG_STATE_HOME"] = str(tmp_path / "state")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        server.assert_done()
    assert proc.returncode == 3, proc.stderr
    result = json.loads(proc.stdout)
    assert result["exit_reason"] == "time_budget" and result["exit_code"] == 3
    assert "agent.time_budget" in result["answer"]
    assert "time budget (agent.time_budget) ran out" in json.dumps(result["tool_calls"])


@pytest.mark.timeout(30)  # without the deadline the retry would sleep out the 60 s Retry-After first
def test_a_retry_that_would_start_after_the_budget_is_not_waited_for(tmp_path):
    error = error_body("overloaded", 503, "ServiceUnavailableError")
    busy = Reply(status=503, error=error, headers={"Retry-After": "60"})
    with FakeVLLM([busy]) as server:
        outcome, agent, events = run_agent(server, tmp_path, 2)  # assert_done: no second request
    assert_stopped_by_budget(outcome, events, 2)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("503" in n and "the time budget runs out first" in n for n in notices)
    assert agent.conversation.entries[-1].content == "work on it"


@pytest.mark.timeout(30)
def test_a_summary_request_stops_at_the_budget_too(tmp_path):
    """Compaction's summary request gets the task's deadline: a stalled one ends with the budget."""
    conversation = Conversation()
    conversation.add_user("first task")
    for i in range(6):
        call = ToolCall(f"c{i}", "read", {"path": f"f{i}.py"})
        conversation.add_turn(AssistantTurn(content=f"step {i}", tool_calls=[call]))
        conversation.add_results([ToolResult(call.id, "read", "text", "x " * 300)], "native")
    silent = Reply(content="never", stall_after_bytes=0)
    with FakeVLLM([silent]) as server:
        config = VllmConfig(base_url=server.base_url, model=server.model, timeout=60, stream_idle_timeout=60)
        client = ModelClient(config, system_prompt=lambda text_mode, defs: "SYSTEM")
        client.resolve_model()
        with pytest.raises(DeadlineReached):
            client.compact(conversation, [], lambda e: None, force=True, deadline=time.monotonic() + 1)
        server.assert_done()
    assert server.requests and "tools" not in server.requests[0]


def test_a_partial_reply_in_text_mode_is_kept_as_a_text_mode_turn(tmp_path):
    long_reply = Reply(content="word " * 400, chunk_size=4, latency=0.02)
    with FakeVLLM([long_reply], mode="noparser") as server:
        outcome, agent, events = run_agent(server, tmp_path, 1, enable_function_calling=False)
    assert_stopped_by_budget(outcome, events, 1)
    partial = agent.conversation.entries[-1]
    assert partial.partial and partial.via == "text" and partial.content.startswith("word ")


def test_the_last_half_second_counts_as_used_up():
    """exec refuses to start with less than 0.5 s left; the loop must not then ask the model again."""
    now = [0.0]
    budget = Budget(2, clock=lambda: now[0])
    now[0] = 1.4
    assert not budget.expired()
    now[0] = 1.6
    assert budget.expired()
