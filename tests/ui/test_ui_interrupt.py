"""Ctrl-C during a task, through the real loop, client, executor and fake server: a running command's
whole tree dies and its result says so, a streamed reply is kept as partial, and the conversation
stays valid for the next request (every call id has exactly one result)."""

import os
import signal
import time
from pathlib import Path

import pytest

from vllm_bot.agent.interrupts import close_open_calls
from vllm_bot.agent.loop import Agent
from vllm_bot.config import AgentConfig, ContextConfig, ToolsConfig, VllmConfig
from vllm_bot.conversation import ToolResults
from vllm_bot.events import TaskFinished, TextDelta, ToolOutput
from vllm_bot.model.client import ModelClient
from vllm_bot.prompts import message
from vllm_bot.safety.approval import ApprovalGate
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools import ToolExecutor

INTERRUPTED_RESULT, NOT_RUN_RESULT = message("interrupted"), message("interrupted_not_run")

FULL_TEXT = "I will explain this slowly, piece by piece, so that the user can interrupt me midway."


def make_agent(server, workspace, on_event, gate=None):
    client = ModelClient(
        VllmConfig(base_url=server.base_url, model=server.model, timeout=10),
        system_prompt=lambda text_mode, defs: "You are a coding agent.",
        context=ContextConfig(),
    )
    client.resolve_model()
    executor = ToolExecutor(workspace, ToolsConfig(exec_timeout=30), state_dir=workspace / ".vllm-bot")
    kw = {"gate": gate} if gate else {}
    return Agent(client, executor, AgentConfig(), on_event, **kw)


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_dead(pid, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def last_results(agent):
    return [e for e in agent.conversation.entries if isinstance(e, ToolResults)][-1].results


def test_ctrl_c_during_exec_kills_the_tree_and_the_session_goes_on(tmp_path):
    command = "sleep 300 & echo $! > child.pid; echo started; wait"
    script = [
        Reply(calls=[Call("exec", {"command": command}), Call("read", {"path": "child.pid"})]),
        Reply(content="Understood, stopped."),
    ]
    events = []

    def on_event(event):
        events.append(event)
        if isinstance(event, ToolOutput) and "started" in event.text:
            os.kill(os.getpid(), signal.SIGINT)  # what the terminal sends on Ctrl-C

    with FakeVLLM(script) as server:
        agent = make_agent(server, tmp_path, on_event)
        with agent.cancel.sigint():
            outcome = agent.run("run the long command")
        child = int((tmp_path / "child.pid").read_text())
        assert wait_dead(child), "the command's background child survived Ctrl-C"
        assert outcome.reason == "interrupted" and outcome.exit_code == 3
        exec_result, read_result = last_results(agent)
        assert exec_result.is_error and "Interrupted by the user" in exec_result.value
        assert "the command was killed" in exec_result.value and "started" in exec_result.value
        assert read_result.value == NOT_RUN_RESULT
        assert isinstance(events[-1], TaskFinished) and events[-1].reason == "interrupted"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
        second = agent.run("why did you stop?")
        server.assert_done()  # the next request carried exactly one result per call id
    assert second.answer == "Understood, stopped."


def test_ctrl_c_while_streaming_keeps_the_partial_reply(tmp_path):
    seen = []

    def expect_partial(body):
        assistant = [m for m in body["messages"] if m["role"] == "assistant"]
        assert len(assistant) == 1 and assistant[0]["content"] == "".join(seen)

    script = [
        Reply(content=FULL_TEXT, chunk_size=6, latency=0.01),
        Reply(content="Sorry, continuing.", expect=expect_partial),
    ]

    def on_event(event):
        if isinstance(event, TextDelta):
            seen.append(event.text)
            if len(seen) == 3:
                os.kill(os.getpid(), signal.SIGINT)

    with FakeVLLM(script) as server:
        agent = make_agent(server, tmp_path, on_event)
        with agent.cancel.sigint():
            outcome = agent.run("explain")
        turn = agent.conversation.entries[-1]
        assert turn.partial and turn.tool_calls == [] and turn.finish_reason == "interrupted"
        assert (
            turn.content == "".join(seen) and FULL_TEXT.startswith(turn.content) and turn.content != FULL_TEXT
        )
        assert outcome.reason == "interrupted" and outcome.answer == turn.content
        agent.run("go on")
        server.assert_done()


def test_ctrl_c_at_an_approval_prompt_answers_every_call(tmp_path):
    def confirm(call, preview, reason, scope):
        raise KeyboardInterrupt  # prompt_toolkit raises it for Ctrl-C

    gate = ApprovalGate("ask", confirm)
    script = [
        Reply(calls=[Call("exec", {"command": "touch a"}), Call("exec", {"command": "touch b"})]),
        Reply(content="Fine."),
    ]
    with FakeVLLM(script) as server:
        agent = make_agent(server, tmp_path, lambda e: None, gate=gate)
        outcome = agent.run("make files")
        first, second = last_results(agent)
        assert (first.value, second.value) == (INTERRUPTED_RESULT, NOT_RUN_RESULT)
        assert outcome.reason == "interrupted"
        assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
        agent.run("ok")
        server.assert_done()


def test_close_open_calls_repairs_a_turn_left_without_results(tmp_path):
    with FakeVLLM([Reply(calls=[Call("read", {"path": "x"})])]) as server:
        agent = make_agent(server, tmp_path, lambda e: None)
        agent.conversation.add_user("task")
        turn = agent.client.complete(agent.conversation, agent.executor.definitions, lambda e: None)
        agent.conversation.add_turn(turn)
    assert close_open_calls(agent.conversation) == 1
    assert last_results(agent)[0].tool_call_id == turn.tool_calls[0].id
    assert close_open_calls(agent.conversation) == 0


def test_a_keyboard_interrupt_inside_exec_still_kills_the_tree(tmp_path):
    """Without the SIGINT routing (or on a second Ctrl-C) the exception unwinds exec: no survivors."""
    executor = ToolExecutor(tmp_path, ToolsConfig(exec_timeout=30), state_dir=tmp_path / ".vllm-bot")

    def on_output(text):
        if "started" in text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        executor.execute(
            "exec", {"command": "sleep 300 & echo $! > child.pid; echo started; wait"}, on_output=on_output
        )
    assert wait_dead(int((tmp_path / "child.pid").read_text()))
