"""Keys while a task runs and at the prompt, in a real terminal: a message typed ahead is shown
queued and sent next, Esc stops the answer, Ctrl-J starts a new line, `!cmd` runs the user's own
command for the model to see, and folded output opens with Ctrl-O or /expand."""

import uuid
from pathlib import Path

from sandbox_helpers import STATUS
from test_repl_tmux import LONG_TEXT, last_user, sent
from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_tmux


def test_a_message_typed_while_a_command_runs_is_shown_queued_and_sent_when_the_task_ends(terminal):
    script = [
        Reply(content="Running.", calls=[Call("exec", {"command": "sleep 4; echo done-1"})]),
        Reply(content="First done."),
        Reply(content="Second done.", expect=last_user("and then the docs")),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, "--yes")
        term.type("run it")
        term.keys("Enter")
        term.wait_for("Ctrl-C stops it)", after="sleep 4")
        term.type("and then")
        screen = term.wait_for("> and then", after="Ctrl-C stops it)")  # under the live region
        term.type(" the docs")
        term.keys("Enter")
        screen = term.wait_for("queued", after="Ctrl-C stops it)")
        queued = screen.rsplit("Ctrl-C stops it)", 1)[1]
        assert "and then the docs" in queued.split("queued", 1)[1], queued
        assert "First done." not in screen  # the command still runs: nothing was sent yet
        term.prompt(after="Second done.")
        screen = term.screen()
        transcript = screen.split("> run it", 1)[1]
        assert "running" not in transcript and "queued" not in transcript, transcript  # no stale region
        assert transcript.index("First done.") < transcript.index("> and then the docs")
        assert transcript.index("> and then the docs") < transcript.index("Second done.")
        server.assert_done()


def test_esc_stops_a_streaming_answer_and_ctrl_j_starts_a_new_line(terminal):
    script = [
        Reply(content=LONG_TEXT, chunk_size=6, latency=0.03),
        Reply(content="Got two lines.", expect=last_user("first line\nsecond line")),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server)
        term.type("tell me a long story")
        term.keys("Enter")
        term.wait_for("word40")
        term.keys("Escape")
        screen = term.wait_for("Interrupted. The session goes on", after="tell me a long story")
        assert "word599" not in screen
        term.prompt(after="Interrupted. The session goes on")
        term.type("first line")
        term.keys("C-j")
        term.type("second line")
        term.wait_for("second line")
        assert "Got two lines." not in term.screen()  # Ctrl-J did not send
        term.keys("Enter")
        term.prompt(after="Got two lines.")
        server.assert_done()


def test_bang_runs_the_users_own_command_without_asking_and_the_model_sees_it(terminal):
    outside = Path("/var/tmp") / f"vllm-bot-bang-{uuid.uuid4().hex[:12]}"
    command = f"echo marker-$((40 + 2)); touch made-by-me.txt; touch {outside}"
    script = [
        Reply(
            content="I see marker-42.",
            expect=lambda body: (
                sent(f"$ {command}", role="user")(body),
                sent("marker-42", role="user")(body),
            ),
        )
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)  # auto-edit: a command of the model's would ask first
        try:
            term.type(f"!{command}")
            term.keys("Enter")
            screen = term.wait_for("Exit code", after=f"> !{command}")
            term.prompt(after="Exit code")
            shown = screen.rsplit(f"> !{command}", 1)[1]
            assert "marker-42" in shown and "Esc: just no" not in shown  # ran, never asked
            assert (ws / "made-by-me.txt").exists()
            assert outside.exists() != STATUS.active  # in the sandbox: read-only outside the workspace
            assert not server.requests  # nothing went to the model yet
            term.type("what did it print?")
            term.keys("Enter")
            term.prompt(after="I see marker-42.")
            server.assert_done()
        finally:
            outside.unlink(missing_ok=True)


def test_a_50000_character_line_folds_by_rows_and_opens_with_ctrl_o_and_expand(terminal):
    script = [
        Reply(content="Looking.", calls=[Call("exec", {"command": "cat big.txt; echo; echo last-line"})]),
        Reply(content="Done."),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server, "--yes", width=100, height=40)
        (ws / "big.txt").write_text("START" + "x" * 50_000 + "END")
        term.type("show it")
        term.keys("Enter")
        term.prompt(after="Done.")
        rows = term.screen(join=False).split("$ cat big.txt", 1)[1].split("Done.", 1)[0].splitlines()
        assert 3 <= len(rows) <= 14, rows  # output_lines (10) rows, the fold line and the exit code
        assert any("last-line" in row for row in rows) and any("END" in row for row in rows)
        assert not any("START" in row for row in rows)
        term.keys("C-o")  # at the prompt: the last folded output, as the model saw it (30,000 characters)
        screen = term.wait_for("last-line", after="START", history=2000)
        assert screen.rsplit("START", 1)[1].count("x") >= 29_000
        term.prompt(after="last-line")
        term.type("/expand")
        term.keys("Enter")
        screen = term.wait_for("END", after="> /expand", history=2000)  # "last-line" is in its $ line too
        assert screen.rsplit("> /expand", 1)[1].split("START", 1)[1].count("x") >= 29_000
        term.prompt(after="last-line")
        server.assert_done()
