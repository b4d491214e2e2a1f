"""Long sessions on a small window and an imperfect server, through the real loop and tools (issue 7)."""

import pytest

from vllm_bot.agent.loop import Agent
from vllm_bot.config import AgentConfig, ContextConfig, SystemPromptConfig, ToolsConfig, VllmConfig
from vllm_bot.events import Notice, TaskFinished
from vllm_bot.model.client import ModelClient
from vllm_bot.model.retry import Retrier, RetryPolicy
from vllm_bot.prompts import SystemPrompts
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools import ToolExecutor

COMPACT_MARK = "You compress a coding agent's earlier work"


def summarizer(body):
    if COMPACT_MARK in body["messages"][0]["content"]:
        return Reply(content="Summary: read many files, nothing changed yet.")
    return None


def make_agent(server, workspace, window=None, max_iterations=50):
    config = VllmConfig(base_url=server.base_url, model=server.model, timeout=10)
    retrier = Retrier(RetryPolicy(jitter=0.0), sleep=lambda s: None)
    client = ModelClient(
        config,
        system_prompt=SystemPrompts(
            SystemPromptConfig(), str(workspace)
        ),  # the real one, as sessions send it
        context=ContextConfig(),
        retrier=retrier,
    )
    client.resolve_model()
    executor = ToolExecutor(workspace, ToolsConfig(exec_timeout=10), state_dir=workspace / ".vllm-bot")
    events = []
    agent = Agent(client, executor, AgentConfig(max_iterations=max_iterations), events.append)
    return agent, events


def test_200_calls_on_a_4096_token_window_with_50kb_outputs(tmp_path):
    for i in range(10):
        (tmp_path / f"f{i}.txt").write_text(
            "".join(f"file {i} line {n} " + "x" * 40 + "\n" for n in range(900))
        )
    assert (tmp_path / "f0.txt").stat().st_size > 50_000
    script = [
        Reply(content=f"Step {n}.", calls=[Call("read", {"path": f"f{n % 10}.txt"})]) for n in range(200)
    ]
    script.append(Reply(content="All 200 reads done."))
    with FakeVLLM(script, max_model_len=4096, auto_reply=summarizer) as server:
        agent, events = make_agent(server, tmp_path, max_iterations=250)
        outcome = agent.run("Read the files again and again.")
        server.assert_done()
        biggest = max(server.prompt_tokens(body) for body in server.requests)
        system = server.requests[-1]["messages"][0]["content"]
    assert system.startswith(SystemPromptConfig().role) and "How to work" in system
    assert outcome.exit_code == 0 and outcome.answer == "All 200 reads done."
    assert biggest < 4096  # never a context-length error: every request fitted
    assert len(server.auto_replied) >= 1  # compaction summarized along the way
    assert any("Compacted the conversation" in e.message for e in events if isinstance(e, Notice))


def test_a_retried_turn_never_executes_a_call_twice(tmp_path):
    call = Call("exec", {"command": "echo ran >> log.txt"})
    # sample offsets across the stream (the client-level test cuts at every byte)
    cuts = list(range(0, 1400, 37))
    script = []
    for cut in cuts:
        script += [Reply(calls=[call], cut_at_byte=cut, chunk_size=16)]
    script += [Reply(calls=[call], chunk_size=16), Reply(content="done")]
    with FakeVLLM(script, model="m", max_model_len=32768) as server:
        config = VllmConfig(base_url=server.base_url, model="m", timeout=10, retry_attempts=len(cuts) + 1)
        client = ModelClient(
            config,
            system_prompt=lambda t, d: "sys",
            retrier=Retrier(RetryPolicy(attempts=len(cuts) + 1), sleep=lambda s: None),
        )
        client.answered = True
        executor = ToolExecutor(tmp_path, ToolsConfig(), state_dir=tmp_path / ".vllm-bot")
        agent = Agent(client, executor, AgentConfig(), lambda e: None)
        outcome = agent.run("log once")
        server.assert_done()
    assert outcome.answer == "done"
    assert (tmp_path / "log.txt").read_text() == "ran\n"


def test_unrecoverable_server_stops_with_a_clear_message_not_a_crash(tmp_path):
    from vllm_bot.errors import ModelServerError
    from vllm_bot.testing.wire import error_body

    failing = [Reply(status=502, error=error_body("Bad Gateway", 502, "BadGatewayError"))] * 5
    with FakeVLLM(failing) as server:
        agent, events = make_agent(server, tmp_path)
        with pytest.raises(ModelServerError, match="Gave up after 5 attempts"):
            agent.run("anything")
        server.assert_done()
    assert not any(isinstance(e, TaskFinished) for e in events)
