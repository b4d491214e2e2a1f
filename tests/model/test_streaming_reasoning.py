"""Reasoning written in content, streamed by the fake vLLM server (no reasoning parser): what shows
live as the answer is the final answer, and the thinking goes to reasoning, in every marker form."""

import pytest

from vllm_bot.config import VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.events import ReasoningDelta, TextDelta
from vllm_bot.model.client import ModelClient
from vllm_bot.parsing import tidy
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

PLAN = "plan: read setup.py, then answer"
REPLIES = {
    "think": f"<think>\n{PLAN}\n</think>\n\nThe version is 1.2.",
    "seed": f"<seed:think>{PLAN}</seed:think>The version is 1.2.",
    "mistral": f"[THINK]{PLAN}[/THINK]\nThe version is 1.2.",
    "kimi": f"◁think▷{PLAN}◁/think▷The version is 1.2.",
    "harmony": f"<|channel|>analysis<|message|>{PLAN}<|end|>The version is 1.2.",
    "mid-reply": f"Let me see.\n<think>{PLAN}</think>\nThe version is 1.2.",
}


def stream_reply(content: str, chunk_size: int):
    events: list = []
    with FakeVLLM([Reply(content=content, chunk_size=chunk_size)]) as server:
        client = ModelClient(
            VllmConfig(base_url=server.base_url, model=server.model, timeout=10),
            system_prompt=lambda text_mode, defs: "SYSTEM",
        )
        conversation = Conversation()
        conversation.add_user("Which version?")
        turn = client.complete(conversation, TOOL_DEFINITIONS, events.append)
        server.assert_done()
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    return turn, shown, thought


@pytest.mark.parametrize("chunk_size", [1, 4, 1000])
@pytest.mark.parametrize("form", list(REPLIES))
def test_reasoning_forms_stream_to_reasoning_and_the_answer_is_what_was_shown(form, chunk_size):
    turn, shown, thought = stream_reply(REPLIES[form], chunk_size)
    assert tidy(shown) == turn.content
    assert turn.content.endswith("The version is 1.2.") and PLAN not in turn.content
    assert thought.strip() == PLAN and PLAN in turn.reasoning


@pytest.mark.parametrize("chunk_size", [1, 3])
def test_a_reasoning_tag_in_inline_code_stays_in_the_answer(chunk_size):
    content = "Put the plan in `<think>` tags; the reply after them is the answer.\n\nNothing else changes."
    turn, shown, thought = stream_reply(content, chunk_size)
    assert thought == "" and turn.reasoning == ""
    assert tidy(shown) == turn.content == content
