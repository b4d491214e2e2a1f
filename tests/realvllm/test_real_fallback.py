"""Server B (no tool flags): vLLM 0.32 answers tools with HTTP 400 for `auto`, `required` and a named
tool alike; the agent falls back to its text protocol once and goes on."""

from __future__ import annotations

import pytest
from agent_runs import forced, run_agent, text_call

from vllm_bot.model.server_errors import FALLBACK_MARKERS

REFUSALS = {
    "auto": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    "required": 'tool_choice="required" requires --tool-call-parser to be set',
    "read": 'tool_choice=function "read" requires --tool-call-parser to be set',
}


@pytest.mark.parametrize("tool_choice", list(REFUSALS))
def test_the_400_for_tools_falls_back_to_the_text_protocol(server_b, tmp_path, tool_choice):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    mark = server_b.log_size()
    run = run_agent(
        ws,
        server_b,
        "Read notes.txt.",
        forced(text_call("read", {"path": "notes.txt"}), grammar=True),
        "--max-iterations",
        "2",
        output="stream-json",
        vllm={"tool_choice": tool_choice},
    )

    [switch] = run.of_type("mode_switched")
    sent = "required" if tool_choice == "read" else tool_choice  # a named choice goes out as required
    assert switch["function_calling"] is False and switch["reason"] == REFUSALS[sent], run.describe()
    assert "--enable-auto-tool-choice --tool-call-parser" in switch["hint"]
    result = run.result
    assert result["function_calling"] is False
    assert [(c["name"], c["ok"]) for c in result["tool_calls"]] == [("read", True)] * 2
    modes = [e["mode"] for e in run.of_type("request_started")]
    assert modes == ["native", "text", "text"]  # one refused request, then text mode for good
    log = server_b.log_since(mark)
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 400') == 1
    assert log.count('"POST /v1/chat/completions HTTP/1.1" 200') == 2


def test_tools_without_tool_choice_get_the_same_400_the_agent_falls_back_on(server_b):
    """The agent always names a tool_choice; a request that leaves it out is refused like `auto`."""
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    answer = server_b.chat({"messages": [{"role": "user", "content": "hi"}], "tools": tools, "max_tokens": 4})
    assert answer.status == 400
    message = answer.json()["error"]["message"]
    assert message == REFUSALS["auto"]
    assert any(marker in message for marker in FALLBACK_MARKERS)
