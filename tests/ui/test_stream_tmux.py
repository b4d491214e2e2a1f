"""A streamed Markdown answer ends on the screen exactly as the model wrote it, even while both cores
are busy: every line once, in order (the live view and the final print must not race)."""

import contextlib
import re
import subprocess
import sys

from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_tmux
MARKER = re.compile(r"\b[A-Z]\d\d\d\b")
ROUNDS = 3


def markdown_answer(round_: int) -> str:
    """About 45 lines of headings, paragraphs, bullets, a numbered list and a code block; every line
    carries a unique marker (H101, P102, ...) so a missing or doubled line is seen."""
    n = round_ * 100
    lines = [f"# Plan H{n + 1:03d}", ""]
    for section in range(1, 4):
        lines += [
            f"## Step H{n + 10 * section:03d}",
            "",
            f"Paragraph P{n + section:03d} says what comes.",
            "",
        ]
        lines += [f"- bullet B{n + 10 * section + i:03d} with *some* text" for i in range(1, 6)]
        lines += [""]
        lines += [f"{i}. numbered N{n + 10 * section + i:03d} item" for i in range(1, 4)]
        lines += [""]
    lines += ["```python", *[f"x = {i}  # code C{n + i:03d}" for i in range(1, 6)], "```", ""]
    lines += [f"Last paragraph P{n + 99:03d} ends it."]
    return "\n".join(lines)


@contextlib.contextmanager
def busy_cores(count: int = 2):
    """`count` processes spinning a core each, killed on the way out."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in spinners:
            proc.kill()
        for proc in spinners:
            proc.wait(timeout=10)


def answer_region(screen: str, task: str) -> str:
    """The screen after the task's prompt line up to the status line that ends the task."""
    after = screen.split(f"> {task}", 1)[1]
    return after.split("\n> ", 1)[0]


def test_a_markdown_answer_streamed_in_tiny_chunks_under_cpu_load_shows_every_line_once(terminal):
    answers = [markdown_answer(r + 1) for r in range(ROUNDS)]
    script = [Reply(content=text, chunk_size=2, latency=0.0005) for text in answers]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, height=30, width=100)
        with busy_cores():
            for round_, text in enumerate(answers, start=1):
                task = f"round {round_}"
                term.type(task)
                term.keys("Enter")
                term.wait_for("\n>", after=f"P{round_ * 100 + 99:03d}", timeout=120)
                shown = answer_region(term.screen(history=5000), task)
                expected = MARKER.findall(text)
                assert MARKER.findall(shown) == expected, shown
        server.assert_done()


def test_a_live_footer_shows_time_tokens_and_context_while_a_task_runs(terminal):
    story = " ".join(f"w{i}" for i in range(400))
    script = [
        Reply(content="First."),
        Reply(content="Let me look.", calls=[Call("exec", {"command": "echo out-1; sleep 3; echo out-2"})]),
        Reply(content=story, chunk_size=4, latency=0.02),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, "--yes")
        term.type("warm up")
        term.keys("Enter")
        term.prompt(after="First.")
        term.type("run it")
        term.keys("Enter")
        screen = term.wait_for("Ctrl-C stops it)", after="out-1")
        live = screen.rsplit("out-1", 1)[1]
        assert re.search(
            r"\ntask \d+\.\ds · in [\d.k]+ · out [\d.k]+ · context [\d.k]+/32\.8k \(\d+%\)", live
        ), live
        screen = term.wait_for("out ~", after="w50 ")  # the reply streams: its tokens are estimated
        assert re.search(r"\ntask \d+\.\ds · in [\d.k]+ · out ~\d+ · context ", screen.rsplit("w50 ", 1)[1])
        screen = term.wait_for("\n>", after="w399")
        assert "task " not in screen.rsplit("w399", 1)[1]  # the footer goes with the task
        assert "· out ~" not in screen and "out-2" in screen  # drawn in place, never left behind
        server.assert_done()


def long_paragraphs(round_: int) -> str:
    """Paragraphs of about 500 characters (wrapped in the live region, so its lines are long) and a
    list, every few words a unique marker (W101, ...)."""
    n, parts = round_ * 100, []
    for p in range(4):
        words = [f"word W{n + p * 20 + i:03d} and some more text around it" for i in range(12)]
        parts.append(" ".join(words) + ".")
    parts.append("\n".join(f"- a list item L{n + i:03d} with text enough to be long" for i in range(8)))
    return "\n\n".join(parts)


def test_resizing_the_window_while_an_answer_streams_shows_every_line_once(terminal):
    """120x40 -> 80x30 -> 200x50 during the stream, as a user drags the window: the region drawn at
    one width is erased at the next (the terminal re-wraps its lines), never left behind, and what
    was printed above it is never erased. Checked after each resize: a later one can hide the damage
    an earlier one did (growing joins the re-wrapped lines, and an erase too tall clears stale ones)."""
    answers = [long_paragraphs(r + 1) for r in range(2)]
    script = [Reply(content=text, chunk_size=3, latency=0.01) for text in answers]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, width=120, height=40, size_env=False)
        for round_, text in enumerate(answers, start=1):
            n = round_ * 100
            task = f"round {round_}"
            term.type(task)
            term.keys("Enter")
            term.wait_for(f"W{n + 25:03d}", after=task)  # in the middle of the second paragraph
            for (width, height), then in [((80, 30), f"W{n + 47:03d}"), ((200, 50), f"L{n + 2:03d}")]:
                term.resize(width, height)
                shown = answer_region(term.wait_for(then, after=task), task)
                markers = MARKER.findall(shown)
                assert len(markers) == len(set(markers)), shown  # no line twice
            term.wait_for("\n>", after=f"L{n + 7:03d}", timeout=60)
            shown = answer_region(term.screen(history=5000), task)
            assert MARKER.findall(shown) == MARKER.findall(text), shown
            term.resize(120, 40)
        server.assert_done()


def test_the_footer_says_no_input_tokens_before_the_server_counted_them(terminal):
    story = " ".join(f"w{i}" for i in range(300))
    with FakeVLLM([Reply(content=story, chunk_size=4, latency=0.02)]) as server:
        term, _ = terminal(server)
        term.type("first task")
        term.keys("Enter")
        screen = term.wait_for("out ~", after="w40 ")  # the first request: no usage has come back yet
        footer = [ln for ln in screen.rsplit("w40 ", 1)[1].splitlines() if ln.startswith("task ")]
        assert footer and re.match(r"task \d+\.\ds · out ~\d+", footer[-1]), footer
        assert "in 0" not in screen
        term.prompt(after="w299")
        server.assert_done()
