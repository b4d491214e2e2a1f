"""The interactive session in a real terminal: tmux runs `python cli.py` against the fake server, the
test types with send-keys (and pastes with bracketed paste) and reads the screen with capture-pane."""

import os
import time

from tmux_terminal import gone, needs_tmux, running

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_tmux
LONG_TEXT = " ".join(f"word{i}" for i in range(600))


def last_user(expected):
    def check(body):
        users = [m for m in body["messages"] if m["role"] == "user"]
        assert users[-1]["content"] == expected, f"last user message {users[-1]['content']!r}"

    return check


def sent(needle, role=None):
    def check(body):
        text = "\n".join(str(m.get("content")) for m in body["messages"] if role in (None, m["role"]))
        assert needle in text, f"{needle!r} not in the request"

    return check


def test_task_slash_command_multiline_paste_and_history(terminal):
    script = [
        Reply(content="Hello! **Ready** to help.", expect=last_user("say hello")),
        Reply(content="Got two lines.", expect=last_user("first line\nsecond line")),
        Reply(content="Got the paste.", expect=last_user("pasted one\npasted two\npasted three")),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        screen = term.screen()
        assert server.model in screen and "32,768 tokens" in screen and "auto-edit" in screen
        term.type("say hello")
        term.keys("Enter")
        screen = term.wait_for("context ", after="Hello! Ready to help.")
        assert "> say hello" in screen, screen
        assert "**" not in screen.split("> say hello")[1]  # Markdown was rendered
        term.type("/tok")
        term.wait_for("Show how the context window is used")  # the completion menu
        term.keys("Tab")
        term.wait_for("> /tokens")
        term.keys("Enter")
        term.wait_for("compaction starts at")
        term.type("first line")
        term.keys("Escape", "Enter")  # Esc Enter: a new line, not send
        term.type("second line")
        term.keys("Enter")
        term.wait_for("Got two lines.")
        term.prompt(after="Got two lines.")  # bracketed paste needs the next prompt to be running
        term.paste("pasted one\npasted two\npasted three")
        term.wait_for("pasted three")
        assert "Got the paste." not in term.screen()  # the paste's newlines did not send it
        term.keys("Enter")
        term.wait_for("Got the paste.")
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
        server.assert_done()
    history = (ws / ".vllm-bot" / "history").read_text()
    assert "+say hello" in history and "+first line\n+second line" in history
    assert oct((ws / ".vllm-bot" / "history").stat().st_mode & 0o777) == "0o600"


def test_ctrl_c_stops_a_command_and_a_reply_and_the_session_goes_on(terminal, tmp_path):
    token = f"{400 + os.getpid() % 1000}.{time.time_ns() % 1000:03d}"
    script = [
        Reply(
            content="Running it.", calls=[Call("exec", {"command": f"sleep {token} & echo started; wait"})]
        ),
        Reply(content="OK, I stopped.", expect=sent("Interrupted by the user after", role="tool")),
        Reply(content=LONG_TEXT, chunk_size=6, latency=0.03),
        Reply(content="Continuing.", expect=sent("word0 word1 word2", role="assistant")),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, "--yes")
        term.type("run the command")
        term.keys("Enter")
        term.wait_for("Ctrl-C stops it", after="started")
        assert running(token)
        term.keys("C-c")
        term.wait_for("the command was killed")
        screen = term.wait_for("Interrupted. The session goes on")
        so_far = screen.split("the command was killed. Output so far:\n", 1)  # the colon, the output
        assert len(so_far) == 2 and so_far[1].splitlines()[0].strip() == "started", screen
        assert gone(token), "the command's process tree survived Ctrl-C"
        term.type("what happened?")
        term.keys("Enter")
        term.wait_for("OK, I stopped.")
        term.type("tell me a long story")
        term.keys("Enter")
        term.wait_for("word40")
        term.keys("C-c")
        term.wait_for("Interrupted. The session goes on", after="tell me a long story")
        assert "word599" not in term.screen()
        term.type("go on")
        term.keys("Enter")
        term.prompt(after="Continuing.")
        term.keys("C-c")  # at an empty prompt: asks to confirm
        term.prompt(after="press Ctrl-C again to exit")
        assert not term.exit_file.exists()
        term.keys("C-c")
        assert term.exit_code() == 0
        server.assert_done()


def test_approval_menu_takes_single_keys_and_no_carries_what_to_do_instead(terminal):
    old = "def total(xs):\n    return sum(xs)\n"
    instead = "don't create new files, edit calc.py instead"
    script = [
        Reply(
            calls=[Call("edit", {"path": "calc.py", "oldText": "sum(xs)", "newText": "sum(x for x in xs)"})]
        ),
        Reply(
            calls=[Call("exec", {"command": "touch approved.txt"})],
            expect=sent(f"The user said: {instead}", role="tool"),  # exactly as typed
        ),
        Reply(
            calls=[Call("exec", {"command": "touch refused.txt"})], expect=sent("Exit code 0", role="tool")
        ),
        Reply(content="Done.", expect=sent("the user declined this exec call.", role="tool")),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        (ws / "calc.py").write_text(old)
        term.type("/approval ask")
        term.keys("Enter")
        term.wait_for("Approval mode: ask.")
        term.type("tidy calc.py")
        term.keys("Enter")
        screen = term.wait_for("3. No, and tell it what to do instead  (n; Esc: just no)")
        assert "Edit calc.py?" in screen and "-    return sum(xs)" in screen
        assert "+    return sum(x for x in xs)" in screen
        assert (
            "1. Yes  (y)" in screen
            and "2. Yes, and don't ask again for every edit call this session" in screen
        )
        term.keys("n")  # one key, no Enter
        term.wait_for("What should it do instead?")
        term.type(instead)
        term.keys("Enter")
        screen = term.wait_for("Esc: just no", after=instead)
        assert "$ touch approved.txt" in screen.rsplit(instead, 1)[1]
        term.keys("y")
        screen = term.wait_for("Esc: just no", after="touch refused.txt")
        term.keys("Escape")
        term.prompt(after="Done.")
        screen = term.screen()
        assert "→ Yes" in screen and screen.count("→ No") == 2
        assert (ws / "calc.py").read_text() == old and (ws / "approved.txt").exists()
        assert not (ws / "refused.txt").exists()
        term.keys("C-d")
        assert term.exit_code() == 0
        server.assert_done()


def test_a_message_typed_before_the_prompt_is_back_is_sent_as_typed(terminal):
    """Typed the moment an answer ends (before the prompt is drawn again), a message and its Enter
    reach the prompt as typed: before, the terminal was back in cooked mode there, so the keys were
    echoed under the answer and Enter arrived as Ctrl-J, a new line. (Keys typed before the program
    has started at all were converted by the terminal already: that Enter is still a new line.)"""
    turns = [("first", "One."), ("second", "Two."), ("third", "Three.")]
    with FakeVLLM([Reply(content=answer, expect=last_user(message)) for message, answer in turns]) as server:
        term, _ = terminal(server)
        for message, answer in turns:
            term.type(message)
            term.keys("Enter")
            term.wait_for(answer)
        screen = term.wait_for("\n>", after="Three.")
        assert len(server.requests) == 3, screen
        for message in ("first", "second", "third"):
            assert f"> {message}" in screen and f"\n{message}\n" not in screen, screen
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
    server.assert_done()
