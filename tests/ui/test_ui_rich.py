"""The rich terminal UI, driven by the same events the loop emits, rendered into a real rich Console."""

import io
import re

import pytest
from rich.console import Console
from rich.markdown import Markdown

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult, Usage
from vllm_bot.config import UiConfig
from vllm_bot.events import (
    CallsDetected,
    FirstToken,
    ModeSwitched,
    Notice,
    ReasoningDelta,
    RequestStarted,
    TaskFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFinished,
    UsageReported,
)
from vllm_bot.safety.policy import grant_scope
from vllm_bot.ui.plain import PlainUI
from vllm_bot.ui.rich_ui import RichUI

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def make_ui(color=False, answers=None, **config):
    out = io.StringIO()
    console = Console(
        file=out, force_terminal=True, width=100, height=40, color_system="standard" if color else None
    )
    asked = []

    def ask(question):
        asked.append(question)
        return answers.pop(0)

    ui = RichUI(UiConfig(**config), console=console, ask=ask)
    return ui, out, asked


def plain(out):
    return ESCAPES.sub("", out.getvalue())


def reply(ui, text, reasoning="", pieces=4):
    ui(RequestStarted("native", 3))
    if reasoning:
        ui(ReasoningDelta(reasoning))
    for i in range(0, len(text), pieces):
        ui(TextDelta(text[i : i + pieces]))
    ui(TurnFinished(AssistantTurn(text), 2.0, 0.5))


def test_a_streamed_markdown_reply_is_printed_once_block_by_block_and_the_live_region_ends():
    ui, out, _ = make_ui()
    printed = []
    print_for_good = ui.console.print

    def record(*objects, **kw):
        printed.extend(objects)
        return print_for_good(*objects, **kw)

    ui.console.print = record
    text = "# Plan\n\nFirst I **read** the file.\n\n```python\nprint('hi')\n\nx = 1\n```\n\nThen I fix it."
    reply(ui, text, reasoning="secret chain of thought")
    ui(TaskFinished("done", text, 0, 1))
    blocks = [o.markup for o in printed if isinstance(o, Markdown)]
    assert "".join(blocks) == text  # every block printed for good exactly once, in order
    assert blocks[2].startswith("```python") and blocks[2].endswith("```\n\n")  # a fence stays whole
    assert not ui._region.active
    shown = plain(out)
    assert "secret chain of thought" not in shown
    assert re.search(r"Thought for \d+\.\ds, 4 words", shown)
    assert "First I read the file." in shown and "**" not in shown.split("Thought for")[1]


def test_reasoning_on_shows_it_dimmed():
    ui, out, _ = make_ui(color=True, show_reasoning=True)
    reply(ui, "Answer.", reasoning="I should check the tests first.")
    assert "\x1b[2;3mI should check the tests first." in out.getvalue()  # dim italic


def test_exec_shows_the_command_a_bounded_live_tail_and_the_exit_code():
    ui, out, _ = make_ui(output_lines=5)
    call = ToolCall("c1", "exec", {"command": "yes | head -n 500000"})
    ui(ToolCallStarted(call))
    chunk = "".join(f"y {i}\n" for i in range(10_000))
    for _ in range(50):  # 500,000 lines, ~4 MB of output
        ui(ToolOutput("c1", chunk))
    ui(ToolCallFinished(call, ToolResult("c1", "exec", "text", "Exit code 0 (1.2 s).\n[...]"), 1.2))
    shown = plain(out)
    assert "● $ yes | head -n 500000" in shown
    assert "… 499,995 earlier lines" in shown
    assert "y 9999" in shown and "y 9994" not in shown.split("earlier lines")[1]
    assert "⎿ Exit code 0 (1.2 s)." in shown
    assert len(out.getvalue()) < 20_000


def test_a_killed_command_says_so_and_output_escapes_are_neutralized():
    ui, out, _ = make_ui()
    call = ToolCall("c1", "exec", {"command": "sleep 100"})
    ui(ToolCallStarted(call))
    ui(ToolOutput("c1", "start\n\x1b]0;evil title\x07\x1b[2Jcleared?\n"))
    text = "Interrupted by the user after 3.0 s; the command was killed. Output so far:\nstart"
    ui(ToolCallFinished(call, ToolResult("c1", "exec", "error", text), 3.0))
    raw = out.getvalue()
    assert "\x1b]0;evil" not in raw and "\x1b[2J" not in raw
    shown = plain(out)
    assert "Interrupted by the user after 3.0 s; the command was killed. Output so far:\n" in shown
    assert "Output so far:\n  start\n" in shown  # the colon, then the output it announces


def test_the_headless_refusal_is_shortened_at_a_word_and_says_where_the_rest_is():
    err = io.StringIO()
    ui = PlainUI(stream_text=False, err=err)
    call = ToolCall("c5", "exec", {"command": "rm -rf build"})
    reason = "not run: it is not read-only, and nobody can approve it in this headless run (the user can "
    message = reason + "re-run with --yes). Continue without it, or finish and explain what is left to do."
    ui(ToolCallFinished(call, ToolResult("c5", "exec", "error", message), 0.0))
    assert message in err.getvalue()  # it fits: shown whole
    ui(ToolCallFinished(call, ToolResult("c5", "exec", "error", message * 4), 0.0))
    line = err.getvalue().splitlines()[-1]
    assert line.endswith("… (shortened here; --output-format stream-json has the whole result)")
    assert line.split("…")[0].rsplit(" ", 1)[1] in message.split()  # cut between words


def test_edit_result_is_a_coloured_diff():
    ui, out, _ = make_ui(color=True)
    call = ToolCall("c2", "edit", {"path": "a.py", "oldText": "old", "newText": "new"})
    ui(ToolCallStarted(call))
    diff = "Edited a.py: replaced 1 occurrence at line 2.\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x\n-old\n+new"
    ui(ToolCallFinished(call, ToolResult("c2", "edit", "text", diff), 0.01))
    raw = out.getvalue()
    assert "\x1b[32m    +new" in raw and "\x1b[31m    -old" in raw
    assert "Edited a.py: replaced 1 occurrence at line 2." in plain(out)


def test_write_shows_path_size_and_a_short_highlighted_preview():
    ui, out, _ = make_ui()
    content = "".join(f"line_{i} = {i}\n" for i in range(30))
    call = ToolCall("c3", "write", {"path": "gen.py", "content": content})
    ui(ToolCallStarted(call))
    ui(
        ToolCallFinished(
            call, ToolResult("c3", "write", "text", "Created gen.py (390 bytes, 30 lines)."), 0.0
        )
    )
    shown = plain(out)
    assert "Write gen.py (" in shown and "30 lines)" in shown
    assert "line_11 = 11" in shown and "line_12 = 12" not in shown and "… 18 more lines" in shown
    assert "Created gen.py" in shown


def test_read_shows_the_range_and_refused_calls_show_why():
    ui, out, _ = make_ui()
    call = ToolCall("c4", "read", {"path": "a.py", "offset": 10, "limit": 20})
    ui(ToolCallStarted(call))
    ui(ToolCallFinished(call, ToolResult("c4", "read", "text", "File a.py, lines 10-29 of 80:\n 10→x"), 0.0))
    refused = ToolCall("c5", "exec", {"command": "rm -rf build"})
    message = "not run: it is not read-only, and nobody can approve it in this headless run"
    ui(ToolCallFinished(refused, ToolResult("c5", "exec", "error", message), 0.0))
    shown = plain(out)
    assert "Read a.py (lines 10-29)" in shown and "File a.py, lines 10-29 of 80" in shown
    assert "10→x" not in shown
    assert "○ $ rm -rf build" in shown and "nobody can approve it" in shown


def test_status_line_after_the_task_and_the_extras_hook():
    ui, out, _ = make_ui()
    ui.status.extras.append(lambda: "cache 90%")
    ui(RequestStarted("native", 2))
    usage = Usage(2000, 200)
    ui(TurnFinished(AssistantTurn("hi", usage=usage), 4.0, 2.0))
    ui(UsageReported(usage, usage, 4.0, 32768))
    ui(TaskFinished("done", "hi", 0, 1, usage))
    assert "in 2.0k · out 200 · 100.0 tok/s · context 2.2k/32.8k (7%) · cache 90%" in plain(out)


def test_interrupted_task_notices_and_mode_switch():
    ui, out, _ = make_ui()
    ui(RequestStarted("native", 2))
    ui(TextDelta("partial ans"))
    ui(Notice("warning", "Lost the connection; retrying in 2 s"))
    ui(ModeSwitched(False, "tool choice unsupported", "start vllm with --enable-auto-tool-choice"))
    ui(CallsDetected([], "native"))
    ui(TaskFinished("interrupted", "partial ans", 3, 1))
    shown = plain(out)
    assert "partial ans" in shown and "Interrupted." in shown
    assert "warning: Lost the connection" in shown and "--enable-auto-tool-choice" in shown
    assert not ui._region.active


def test_confirm_shows_the_command_and_returns_the_answer():
    ui, out, asked = make_ui(answers=["", "n use ruff instead"])
    answer = ui.confirm(ToolCall("c", "exec", {"command": "pip install x\u202e"}), None, "not read-only")
    assert (answer.approved, answer.message) == (False, "use ruff instead")
    assert len(asked) == 2  # an empty reply asks again
    shown = plain(out)
    assert "Run this command?" in shown and "$ pip install x\\u202e" in shown and "not read-only" in shown


def test_confirm_shows_the_diff_and_always_is_remembered_by_the_caller():
    ui, out, _ = make_ui(color=True, answers=["a"])
    preview = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b"
    answer = ui.confirm(
        ToolCall("c", "edit", {"path": "a.py", "oldText": "a", "newText": "b"}), preview, "ask"
    )
    assert answer.approved and answer.always
    assert "\x1b[32m    +b" in out.getvalue() and "Edit a.py?" in plain(out)


def test_confirm_treats_end_of_input_as_no():
    ui, _, _ = make_ui()

    def eof(question):
        raise EOFError

    ui.ask = eof
    assert not ui.confirm(ToolCall("c", "exec", {"command": "ls"}), None, "why").approved


def test_banner_and_say_print_model_text_literally():
    from vllm_bot.ui.banner import BannerInfo

    ui, out, _ = make_ui()
    info = BannerInfo(
        "m[bold]x", "http://h/v1", 32768, False, "on", "auto-edit", "sandbox: OFF", "/w", label="DEMO"
    )
    ui.banner(info)
    ui.say("[red]not markup[/red]")
    shown = plain(out)
    assert "DEMO" in shown and "m[bold]x" in shown and "[red]not markup[/red]" in shown


def test_confirm_shows_what_always_would_grant():
    exec_call = ToolCall("c", "exec", {"command": "pytest -q"})
    ui, out, _ = make_ui(answers=["y"])
    assert ui.confirm(exec_call, None, "not read-only", grant_scope(exec_call)).approved
    assert "always: run commands starting with `pytest` without asking" in plain(out)
    err = io.StringIO()
    plain_ui = PlainUI(stream_text=False, err=err)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO("a\n"))
        assert plain_ui.confirm(
            exec_call, None, "not read-only", grant_scope(exec_call, sandboxed=False)
        ).always
    assert "always: run this exact command without asking" in err.getvalue()


def test_the_spinner_stops_saying_waiting_once_a_reply_of_only_tool_calls_streams():
    ui, _, _ = make_ui()

    def live_line():
        screen = Console(file=io.StringIO(), width=100)
        screen.print(ui._view)
        return screen.file.getvalue()

    ui(RequestStarted("native", 3))
    assert "Waiting for the model" in live_line()
    ui(FirstToken())
    assert "Receiving the reply" in live_line()
    ui(TurnFinished(AssistantTurn("", [ToolCall("1", "read", {"path": "a"})]), 1.0, 0.2))
    assert not ui._region.active
