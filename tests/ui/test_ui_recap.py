"""Where a resumed conversation left off, and how to come back (plain lines, no terminal)."""

from pathlib import Path

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult
from vllm_bot.cliargs import program_name
from vllm_bot.conversation import Conversation
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
