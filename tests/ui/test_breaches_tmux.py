"""Issue 15's breaches 2 and 3 in the interactive session (the headless runs are tests/safety): a
"read-only" command that evaluates a subscript and `git status` in a planted repository ask in the
default auto-edit mode, and in full-auto they run in the sandbox without reaching outside the
workspace or running the planted config's program."""

from sandbox_helpers import needs_bwrap
from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = [needs_tmux, needs_bwrap]


def declined(body):
    assert "the user declined this exec call" in body["messages"][-1]["content"]


def ran_both(body):
    evaluated, status = [m["content"] for m in body["messages"][-2:]]
    assert "Exit code" in evaluated and "declined" not in evaluated, evaluated
    # git in the sandbox refuses a directory laid out as a bare repository
    assert "safe.bareRepository" in status or "not a git repository" in status, status


def plant(folder, marker):
    """`folder` laid out as a repository whose config runs `touch marker` from `git status`."""
    (folder / "objects").mkdir(parents=True)
    (folder / "refs" / "heads").mkdir(parents=True)
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        f'[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "touch {marker}"\n'
    )


def test_evaluating_builtins_and_planted_repositories_ask_then_stay_inside(terminal, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    pwned, ran_git = outside / "PWNED", tmp_path / "project" / "FSMONITOR-RAN"
    evaluating = f"test -v 'a[$(touch {pwned})]'"
    script = [
        Reply(calls=[Call("exec", {"command": evaluating})]),
        Reply(content="Left it.", expect=declined),
        Reply(calls=[Call("exec", {"command": "cd sub && git status"})]),
        Reply(content="Left that too.", expect=declined),
        Reply(
            calls=[Call("exec", {"command": evaluating}), Call("exec", {"command": "cd sub && git status"})]
        ),
        Reply(content="Done.", expect=ran_both),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        plant(ws / "sub", ran_git)
        for task, command, answer in [
            ("check a", "$ test -v", "Left it."),
            ("status of sub", "$ cd sub && git status", "Left that too."),
        ]:
            term.type(task)
            term.keys("Enter")
            screen = term.wait_for("Esc: just no", after=task)  # asked, in the default auto-edit mode
            assert command in screen.rsplit(task, 1)[1]
            term.keys("Escape")
            term.prompt(after=answer)
        term.type("/approval full-auto")
        term.keys("Enter")
        term.wait_for("Approval mode: full-auto.")
        term.type("both again")
        term.keys("Enter")
        term.prompt(after="Done.")  # ran without asking, in the sandbox
        term.keys("C-d")
        assert term.exit_code() == 0
        server.assert_done()
    assert not pwned.exists() and not ran_git.exists()
