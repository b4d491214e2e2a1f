"""Coming back: a session opens with the server down and connects when a task is sent; leaving
says how to continue; --continue shows where the conversation left off."""

import socket

from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_tmux


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_session_opens_with_the_server_down_and_connects_when_a_task_is_sent(terminal, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    term, _ = terminal(None, "--base-url", url)
    screen = term.screen()
    assert f"{url} - NOT REACHABLE" in screen and f"Cannot reach the vLLM server at {url}" in screen
    assert "The session is open anyway: /doctor, /model, /resume and /help work" in screen
    for command, shown in [
        ("/help", "List the commands"),
        ("/resume", "No saved sessions"),
        ("/model", "Cannot reach"),
        ("/doctor", "Verdict: the agent cannot work with this server"),
    ]:
        term.type(command)
        term.keys("Enter")
        term.wait_for(shown, after=f"> {command}")
    term.type("hello")
    term.keys("Enter")
    term.wait_for("Cannot reach the vLLM server", after="> hello")
    term.prompt(after="> hello")
    with FakeVLLM([Reply(content="Hi, connected now.")], port=port) as server:
        term.type("hello again")
        term.keys("Enter")
        screen = term.wait_for("Hi, connected now.", after="> hello again")
        assert f"Connected to {url}: model {server.model}." in screen.rsplit("> hello again", 1)[1]
        term.prompt(after="Hi, connected now.")
        term.keys("C-d")
        assert term.exit_code() == 0
        server.assert_done()


def test_leaving_says_how_to_come_back_and_continue_shows_where_it_left_off(terminal):
    script = [
        Reply(content="Looking.", calls=[Call("read", {"path": "calc.py"})]),
        Reply(content="The bug is in add: it subtracts.\nFix: return a + b."),
        Reply(content="Second answer, short."),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        term.type("why does add fail?")
        term.keys("Enter")
        term.prompt(after="Fix: return a + b.")
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
        words = " ".join(term.screen().split())  # the line is wider than the terminal
        hint = f"To continue this session later: python {term.script_path} --continue --workspace {ws}"
        assert f"{hint} --base-url {server.base_url}" in words  # the same server when followed
        again, _ = terminal(server, "--continue", ready=None)  # the recap's "> task" is no prompt
        again.prompt(after="Fix: return a + b.")
        screen = again.screen()
        recap = screen.split("Where you left off:", 1)[1]
        assert "> why does add fail?" in recap
        assert "● 1 tool call: Read calc.py" in recap
        assert "The bug is in add: it subtracts." in recap and "Fix: return a + b." in recap
        again.type("and now?")
        again.keys("Enter")
        again.prompt(after="Second answer, short.")
        again.type("/resume")
        again.keys("Enter")
        again.wait_for("Resume which?")
        again.type("1")
        again.keys("Enter")
        screen = again.wait_for("Second answer, short.", after="Resumed session")
        assert "> and now?" in screen.rsplit("Resumed session", 1)[1]
        again.prompt(after="  Second answer, short.")  # the recap's last line, then the prompt
        again.keys("C-d")
        assert again.exit_code() == 0
        server.assert_done()


def test_the_recap_renders_the_answer_as_markdown_and_shows_a_declined_call_as_declined(terminal):
    script = [
        Reply(content="Cleaning up.", calls=[Call("exec", {"command": "rm -rf build"})]),
        Reply(content="**Stopped**, as you asked.\n\n- nothing was removed\n- `build` is still there"),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server)
        term.type("clean the build")
        term.keys("Enter")
        term.wait_for("Esc: just no")
        term.keys("Escape")
        term.prompt(after="is still there")
        term.keys("C-d")
        assert term.exit_code() == 0
        again, _ = terminal(server, "--continue", ready=None)
        again.prompt(after="is still there")
        recap = again.screen().split("Where you left off:", 1)[1]
        assert "● 1 tool call: $ rm -rf build (declined)" in recap, recap
        assert "Stopped, as you asked." in recap and "**" not in recap, recap
        assert "• nothing was removed" in recap and "`" not in recap, recap
        again.keys("C-d")
        assert again.exit_code() == 0
        server.assert_done()
