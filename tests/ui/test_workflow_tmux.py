"""Plan mode, the task list and sub-agents in a real terminal (tmux, the fake server): the screen is
checked for what matters, not for golden frames (issue 37)."""

from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_tmux
PLAN = "## Plan\n\n1. Make **add** return a + b\n2. Run the check"
STEPS = [
    {"text": "read app.py", "status": "completed"},
    {"text": "fix add", "status": "in_progress"},
    {"text": "run the check", "status": "pending"},
]


def test_shift_tab_enters_plan_mode_and_an_approved_plan_continues_in_auto_edit(terminal):
    script = [
        Reply(calls=[Call("write", {"path": "app.py", "content": "x\n"})]),
        Reply(calls=[Call("present_plan", {"plan": PLAN})]),
        Reply(calls=[Call("write", {"path": "app.py", "content": "def add(a, b):\n    return a + b\n"})]),
        Reply(content="Done: add fixed."),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
        for _ in range(2):  # auto-edit → full-auto → plan
            term.keys("BTab")
        screen = term.wait_for("Approval mode: plan.")
        assert "plan mode: nothing changes until you approve a plan" in term.wait_for("plan mode:")
        term.type("fix add")
        term.keys("Enter")
        screen = term.wait_for("Yes, and carry it out in auto-edit mode")
        assert "plan mode is on" in screen  # the write before the plan was refused
        assert "Make add return a + b" in screen and "**" not in screen.split("The plan")[-1]  # Markdown
        assert (ws / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
        term.keys("y")
        term.wait_for("Done: add fixed.")
        assert "Approval mode: auto-edit." in term.screen()
        assert (ws / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
        server.assert_done()


def test_the_task_list_shows_in_the_transcript_above_the_input_and_in_the_status(terminal):
    script = [
        Reply(calls=[Call("update_plan", {"steps": STEPS})]),
        Reply(content="Working on it."),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server)
        term.type("fix add")
        term.keys("Enter")
        screen = term.wait_for("tasks 1/3", after="Working on it.")
        assert "Task list (tasks 1/3)" in screen and "✔ read app.py" in screen and "▶ fix add" in screen
        prompt_area = term.wait_for("○ run the check", after="tasks 1/3")  # above the next input
        assert "▶ fix add" in prompt_area.split("tasks 1/3")[-1]
        server.assert_done()


def test_a_subagent_is_folded_under_its_call(terminal):
    conversations = {
        "where is add": [
            Reply(calls=[Call("delegate", {"task": "SUB: find add"})]),
            Reply(content="It is in app.py."),
        ],
        "SUB: find add": [
            Reply(calls=[Call("exec", {"command": "grep -n 'def add' app.py"})]),
            Reply(content="app.py:1 defines add"),
        ],
    }
    with FakeVLLM(conversations=conversations) as server:
        term, ws = terminal(server)
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
        term.type("where is add")
        term.keys("Enter")
        screen = term.wait_for("It is in app.py.")
        after_call = screen.split("delegate")[-2] + screen.split("delegate")[-1]
        assert "Delegate: SUB: find add" in screen and "↳ $ grep -n 'def add' app.py" in screen, screen
        assert "sub-agent done after 2 requests" in screen
        assert "app.py:1 defines add" in after_call
