"""How often the agent asks the server to count tokens (issue 22): far from every decision never, near
one (compaction, the window) for the new messages only, each text once. Counted at the fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vllm_bot.agent.loop import Agent
from vllm_bot.config import AgentConfig, ContextConfig, ToolsConfig, VllmConfig
from vllm_bot.model.client import ModelClient
from vllm_bot.model.tokens import message_text
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools import ToolExecutor

COMPACT_MARK = "You compress a coding agent's earlier work"


def summary_reply(body: dict[str, Any]) -> Reply | None:
    if COMPACT_MARK in body["messages"][0]["content"]:
        return Reply(content="SUMMARY: read the files one by one; nothing changed.")
    return None


def run_session(ws: Path, turns: int, window: int, lines: int) -> FakeVLLM:
    """`turns` reads of distinct files of `lines` lines each, then an answer."""
    for i in range(turns):
        (ws / f"f{i}.txt").write_text("".join(f"file {i} line {k}: some words here\n" for k in range(lines)))
    script = [Reply(content=f"step {i}", calls=[Call("read", {"path": f"f{i}.txt"})]) for i in range(turns)]
    with FakeVLLM([*script, Reply(content="done")], max_model_len=window, auto_reply=summary_reply) as server:
        client = ModelClient(
            VllmConfig(base_url=server.base_url, model=server.model),
            system_prompt=lambda text_mode, defs: "You are a coding agent.",
            context=ContextConfig(),
        )
        client.resolve_model()
        agent = Agent(
            client, ToolExecutor(ws, ToolsConfig()), AgentConfig(max_iterations=turns + 5), lambda e: None
        )
        agent.run("read every file")
        server.assert_done()
    return server


def test_a_long_session_far_from_the_window_never_asks_the_server_to_count(tmp_path: Path) -> None:
    server = run_session(tmp_path, turns=200, window=131072, lines=3)
    chat = [b for b in server.requests if COMPACT_MARK not in b["messages"][0]["content"]]
    assert len(chat) == 201 and server.auto_replied == []  # it stayed far from compaction
    assert server.side_requests.count("/tokenize") == 0  # each reply's usage anchors the next estimate


def test_near_compaction_the_server_counts_each_text_at_most_once(tmp_path: Path) -> None:
    server = run_session(tmp_path, turns=40, window=8192, lines=40)
    assert server.auto_replied  # the history reached the budget and was compacted
    asked = server.side_requests.count("/tokenize")
    assert asked > 0  # near the decision the estimate is not trusted
    texts = {message_text(m) for body in server.requests for m in body["messages"]}
    # once per distinct text (and the tool list), never per request; and each compaction's transcript
    # once, to fit its summary request into the window (model/context.py)
    assert asked <= len(texts) + 1 + len(server.auto_replied)
