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
        screen = term.wait_for("(Ctrl-C stops it)", after="out-1")
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
