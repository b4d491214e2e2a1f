"""Where a resumed conversation left off, and how to come back (plain lines, no terminal)."""

from pathlib import Path

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
from vllm_bot.cliargs import program_name
from vllm_bot.config.layers import load_layers
from vllm_bot.conversation import Conversation
from vllm_bot.safety.approval import Answer, ApprovalGate
from vllm_bot.ui.recap import come_back_hint, recap_lines


def conversation(turns):
    conv = Conversation()
    for task, calls, answer in turns:
        conv.add_user(task)
        if calls:
            conv.add_turn(AssistantTurn("", [ToolCall(str(i), *c) for i, c in enumerate(calls)]))
            conv.add_results([ToolResult(str(i), c[0], "text", "ok") for i, c in enumerate(calls)], "native")
        if answer is not None:
            conv.add_turn(AssistantTurn(answer))
    return conv


def test_the_last_turns_with_calls_folded_and_the_latest_answer_longer():
    long_answer = "\n".join(f"line {i}" for i in range(20))
    conv = conversation(
        [
            ("first task", [], "first answer"),
            ("second task", [("read", {"path": "a.py"})], "second\nanswer\nthree\nfour"),
            ("third task", [("exec", {"command": f"echo {i}"}) for i in range(6)], None),
            ("fourth task\nwith a second line", [("edit", {"path": "b.py"})], long_answer),
        ]
    )
    lines = recap_lines(conv.entries)
    assert lines[0] == "Where you left off (last 3 of 4 turns):"
    assert "> first task" not in lines
    i = lines.index("> second task")
    assert lines[i + 1] == "  ● 1 tool call: Read a.py"
    assert lines[i + 2 : i + 6] == ["  second", "  answer", "  three", "  … 1 more line"]
    j = lines.index("> third task")
    assert lines[j + 1] == "  ● 6 tool calls: $ echo 0 · $ echo 1 · $ echo 2 · $ echo 3 · +2 more"
    assert lines[j + 2] == "  (no answer yet: the task stopped before the model finished)"
    k = lines.index("> fourth task")
    assert lines[k + 1] == "  with a second line" and lines[k + 2] == "  ● 1 tool call: Edit b.py"
    assert "  line 11" in lines and "  line 12" not in lines and lines[-1] == "  … 8 more lines"


def test_nothing_to_recap_in_a_new_conversation():
    assert recap_lines([]) == []


def test_the_way_back_names_the_command_the_user_ran(tmp_path, monkeypatch):
    assert program_name("cli.py") == "python cli.py"
    assert program_name("/home/me/vllm-bot/cli.py") == "python /home/me/vllm-bot/cli.py"
    assert program_name("/usr/local/bin/vllm-bot") == "vllm-bot"
    monkeypatch.chdir(tmp_path)
    assert come_back_hint(tmp_path, "vllm-bot") == "To continue this session later: vllm-bot --continue"
    other = tmp_path / "my project"
    assert come_back_hint(other, "cli.py") == (
        f"To continue this session later: python cli.py --continue --workspace '{other}'"
    )
    assert Path.cwd() == tmp_path


def test_a_declined_call_is_shown_as_declined():
    conv = Conversation()
    conv.add_user("clean up")
    calls = [ToolCall("1", "read", {"path": "a.py"}), ToolCall("2", "exec", {"command": "rm -rf build"})]
    conv.add_turn(AssistantTurn("", calls))
    gate = ApprovalGate("ask", lambda call, preview, reason, scope: Answer(False))
    declined = gate(calls[1])
    assert declined is not None
    conv.add_results([ToolResult("1", "read", "text", "1: x"), declined], "native")
    conv.add_turn(AssistantTurn("OK, I left it."))
    assert "  ● 2 tool calls: Read a.py · $ rm -rf build (declined)" in recap_lines(conv.entries)


def test_the_way_back_keeps_the_flags_that_chose_the_server_and_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config_file = tmp_path / "my config.json"
    config_file.write_text("{}")
    overrides = {"vllm.base_url": "http://gpu-box:8000/v1", "vllm.model": "qwen", "vllm.api_key": "sk-secret"}
    config = load_layers(config_file, {}, overrides, None, None)
    hint = come_back_hint(tmp_path, "vllm-bot", config)
    assert hint.startswith(
        f"To continue this session later: vllm-bot --continue --config '{config_file}' "
        "--base-url http://gpu-box:8000/v1 --model qwen"
    ), hint
    assert "sk-secret" not in hint and "--api-key" in hint  # said, never shown
    plain = load_layers(None, {}, {}, None, None)  # from the config files: the way back needs nothing
    assert (
        come_back_hint(tmp_path, "vllm-bot", plain) == "To continue this session later: vllm-bot --continue"
    )
