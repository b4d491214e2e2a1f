"""The terminal's plain-data layer: escaping, call titles, folding, Markdown blocks, the output tail,
approval answers and views, the status line, the banner's git status."""

import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.calls import AssistantTurn, ToolCall, Usage
from vllm_bot.doctor.report import wrap_hanging
from vllm_bot.events import RequestStarted, TaskFinished, TextDelta, TurnFinished, UsageReported
from vllm_bot.safety.policy import grant_scope
from vllm_bot.ui.approval_prompt import approval_view, parse_answer
from vllm_bot.ui.banner import BannerInfo, git_status
from vllm_bot.ui.display import (
    FENCE,
    MarkdownStream,
    TailBuffer,
    call_title,
    clip,
    columns,
    diff_lines,
    fold_head,
    fold_tail,
    format_arguments,
    printable_markdown,
    safe_text,
    split_diff,
)
from vllm_bot.ui.status import StatusLine, short_count


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("ls -la", "ls -la"),
        ("echo \x1b[31mred", "echo \\x1b[31mred"),
        ("rm -rf /tmp/x\u202e#txt.exe", "rm -rf /tmp/x\\u202e#txt.exe"),  # right-to-left override
        ("a\u2066b\u2069c", "a\\u2066b\\u2069c"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("bell\x07 and nul\x00", "bell\\x07 and nul\\x00"),
        ("c1 \x9b control", "c1 \\x9b control"),
        ("line1\nline2\tx", "line1\nline2\tx"),
        ("héllo wörld 日本", "héllo wörld 日本"),
        # invisible in a terminal (found by a red-team run): tag characters, a Hangul filler, the
        # line separator
        ("rm\U000e0020x", "rm\\U000e0020x"),
        ("a\u3164b", "a\\u3164b"),
        ("a\u2028b", "a\\u2028b"),
    ],
)
def test_safe_text_escapes_control_bidi_and_invisible_characters(raw, shown):
    assert safe_text(raw) == shown


def test_safe_text_can_flatten_newlines():
    assert safe_text("a\nb", keep_newlines=False) == "a\\x0ab"


@given(st.text())
def test_safe_text_output_has_no_control_or_bidi_characters(text):
    out = safe_text(text)
    assert all(ch in "\n\t" or (ord(ch) >= 0x20 and not 0x7F <= ord(ch) < 0xA0) for ch in out)
    assert not set(out) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


@pytest.mark.parametrize(
    "name, args, title",
    [
        ("read", {"path": "src/app.py"}, "Read src/app.py"),
        ("read", {"path": "a.py", "offset": 10, "limit": 50}, "Read a.py (lines 10-59)"),
        ("read", {"path": "a.py", "offset": 7}, "Read a.py (lines 7-end)"),
        ("write", {"path": "b.py", "content": "x = 1\ny = 2\n"}, "Write b.py (12 B, 2 lines)"),
        ("edit", {"path": "c.py", "oldText": "a", "newText": "b"}, "Edit c.py"),
        (
            "edit",
            {"path": "c.py", "oldText": "a", "newText": "b", "replace_all": True},
            "Edit c.py (every occurrence)",
        ),
        ("exec", {"command": "pytest -q"}, "$ pytest -q"),
        ("exec", {"command": "echo \x1b]0;pwned\x07"}, "$ echo \\x1b]0;pwned\\x07"),
        ("mcp__web__fetch", {"url": "http://x"}, 'mcp__web__fetch {"url": "http://x"}'),
    ],
)
def test_call_titles(name, args, title):
    assert call_title(ToolCall("id", name, args)) == title


def test_folding_keeps_head_or_tail_and_counts_the_rest():
    lines = [str(i) for i in range(10)]
    assert fold_head(lines, 3) == (["0", "1", "2"], 7)
    assert fold_tail(lines, 3) == (["7", "8", "9"], 7)
    assert fold_head(lines, 20) == (lines, 0)


def test_diff_lines_are_classified_for_colouring():
    summary, diff = split_diff(
        "Edited a.py: replaced 1 occurrence.\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n"
        "... (3 more diff lines not shown)"
    )
    assert summary == "Edited a.py: replaced 1 occurrence."
    kinds = [d.kind for d in diff_lines(diff)]
    assert kinds == ["header", "header", "hunk", "context", "remove", "add", "note"]


def test_tail_buffer_keeps_a_bounded_tail_of_a_flood():
    tail = TailBuffer(keep_chars=1000)
    chunk = "".join(f"line {i}\n" for i in range(10_000))
    for _ in range(50):  # ~4.4 MB through the buffer
        tail.feed(chunk)
    assert len(tail.text) <= 1000
    lines, before = tail.lines(3)
    assert lines == ["line 9997", "line 9998", "line 9999"]
    assert before == 500_000 - 3
    assert tail.total_chars == 50 * len(chunk)


def test_tail_buffer_counts_an_unterminated_last_line_and_cleans_escapes():
    tail = TailBuffer()
    tail.feed("a\nb\n\x1b[32mgreen\x1b[0m progress 10%\rprogress 100%")
    lines, before = tail.lines(2)
    assert lines == ["b", "progress 100%"] and before == 1


def _blocks(pieces):
    stream = MarkdownStream()
    taken = []
    for piece in pieces:
        stream.feed(piece)
        taken.append(stream.take_done())
    return stream, taken


def test_markdown_blocks_end_at_blank_lines_but_never_inside_a_code_fence():
    text = "# Title\n\nFirst para.\n\n```python\nx = 1\n\ny = 2\n```\n\nLast"
    stream, taken = _blocks([text[i : i + 3] for i in range(0, len(text), 3)])
    done = "".join(taken)
    assert done == "# Title\n\nFirst para.\n\n```python\nx = 1\n\ny = 2\n```\n\n"
    assert stream.live == "Last"
    assert stream.flush() == "Last"


def test_markdown_tilde_fence_is_not_closed_by_backticks():
    _stream, taken = _blocks(["~~~\n", "a\n", "```\n", "\n", "b\n", "~~~\n", "\n", "after"])
    assert "".join(taken) == "~~~\na\n```\n\nb\n~~~\n\n"


@given(st.lists(st.sampled_from(["a", " ", "\n", "```", "~~~", "#", "-", "x\n\n", "`"]), max_size=60))
def test_markdown_stream_loses_and_duplicates_nothing(pieces):
    stream, taken = _blocks(pieces)
    assert "".join(taken) + stream.flush() == "".join(pieces)


@pytest.mark.parametrize(
    "reply, approved, always, message",
    [
        ("y", True, False, None),
        ("Yes", True, False, None),
        ("a", True, True, None),
        ("always", True, True, None),
        ("n", False, False, None),
        ("no", False, False, None),
        ("n use ruff instead", False, False, "use ruff instead"),
        ("no, run the unit tests only", False, False, "run the unit tests only"),
        ("please read the README first", False, False, "please read the README first"),
        # the sentence reaches the model exactly as typed: commas, colons and all
        (
            "n don't create new files, edit calc.py instead",
            False,
            False,
            "don't create new files, edit calc.py instead",
        ),
        ("no: keep it, really; a, b", False, False, "keep it, really; a, b"),
        ("no-one asked for that", False, False, "no-one asked for that"),
        ("Yes.", True, False, None),
    ],
)
def test_parse_answer(reply, approved, always, message):
    answer = parse_answer(reply)
    assert (answer.approved, answer.always, answer.message) == (approved, always, message)


def test_parse_answer_asks_again_on_an_empty_reply():
    assert parse_answer("   ") is None


def test_approval_view_shows_exactly_what_will_run():
    view = approval_view(ToolCall("1", "exec", {"command": "curl x | sh\u202e"}), None, "not read-only")
    assert view.command == "curl x | sh\\u202e" and view.title == "Run this command?"
    preview = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b"
    view = approval_view(
        ToolCall("2", "edit", {"path": "a.py", "oldText": "a", "newText": "b"}), preview, "ask"
    )
    assert view.diff == preview and view.title == "Edit a.py?"
    write_preview = "create n.py (2 bytes, 1 line)\n--- a/n.py\n+++ b/n.py\n@@ -0,0 +1 @@\n+x"
    view = approval_view(ToolCall("3", "write", {"path": "n.py", "content": "x\n"}), write_preview, "ask")
    assert view.summary == "create n.py (2 bytes, 1 line)" and view.diff.startswith("--- a/n.py")
    view = approval_view(
        ToolCall("4", "edit", {"path": "a.py", "oldText": "zz", "newText": "b"}), None, "ask"
    )
    assert "would fail" in view.text and '"oldText": "zz"' in view.text
    mcp = "MCP tool fetch from server web (the server says: read-only)"
    view = approval_view(ToolCall("5", "mcp__web__fetch", {"url": "u"}), mcp, "external")
    assert view.text.startswith(mcp) and '"url": "u"' in view.text


def _turn_events(prompt, completion, seconds, first):
    usage = Usage(prompt, completion)
    return [
        RequestStarted("native", 3),
        TurnFinished(AssistantTurn("x", usage=usage), seconds, first),
        UsageReported(usage, usage, seconds, 32768),
    ]


def test_status_line_sums_a_task_and_shows_speed_and_context():
    status = StatusLine(extras=[lambda: "cache 87%", lambda: None])
    for event in _turn_events(1000, 100, 3.0, 1.0) + _turn_events(1500, 300, 5.0, 1.0):
        status(event)
    status(TaskFinished("done", "ok", 0, 2))
    assert status.last == "in 2.5k · out 400 · 66.7 tok/s · context 1.8k/32.8k (5%) · cache 87%"
    status(TaskFinished("done", "ok", 0, 0))  # a task without requests has no figures
    assert status.last is None


def test_status_line_has_a_speed_whenever_two_tokens_were_generated():
    status = StatusLine()
    for event in _turn_events(50, 3, 0.52, 0.5):  # a short, fast answer: 3 tokens in 20 ms
        status(event)
    status(TaskFinished("done", "ok", 0, 1))
    assert "150.0 tok/s" in str(status.last)
    for event in _turn_events(50, 1, 0.6, 0.5):  # one token: no speed to speak of
        status(event)
    status(TaskFinished("done", "ok", 0, 1))
    assert "tok/s" not in str(status.last)


def test_live_footer_shows_task_time_tokens_so_far_and_context():
    status = StatusLine()
    assert status.footer() is None  # no task running
    status(RequestStarted("native", 3))
    started = status.stats.started
    assert status.footer(started + 2.0) == "task 2.0s · out 0"  # no `in 0`: not counted yet
    for event in _turn_events(3000, 100, 3.0, 1.0)[1:]:
        status(event)
    status(RequestStarted("native", 5))
    status(TextDelta("x" * 41))  # still streaming: estimated, marked with ~
    shown = status.footer(started + 75.0)
    assert shown == "task 1m 15s · in 3.0k · out ~111 · context 3.1k/32.8k (9%)"
    status(TaskFinished("done", "ok", 0, 2))
    assert status.footer() is None
    status(RequestStarted("native", 7))  # the next task starts from the last known context
    assert status.footer(status.stats.started).endswith("context 3.1k/32.8k (9%)")


@pytest.mark.parametrize(
    "n, shown", [(0, "0"), (999, "999"), (1000, "1.0k"), (32768, "32.8k"), (2_500_000, "2.5M")]
)
def test_short_count(n, shown):
    assert short_count(n) == shown


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_git_status_branch_and_dirty_count(tmp_path):
    assert git_status(tmp_path) == ""  # not a repository
    _git(tmp_path, "init", "-q", "-b", "main")
    assert git_status(tmp_path) == "main, clean"
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    assert git_status(tmp_path) == "main, 2 changed files"


def test_banner_rows_say_when_the_window_is_assumed_and_shorten_the_sandbox():
    info = BannerInfo(
        model="m",
        base_url="http://h/v1",
        context_window=8192,
        window_assumed=True,
        function_calling="on",
        approval="auto-edit",
        sandbox="sandbox: bubblewrap - " + ", ".join(f"layer {i}" for i in range(30)),
        workspace="/w",
        git=lambda: "main, clean",
        label="DEMO",
    )
    rows = dict(info.rows())
    assert "assumed" in rows["context"] and rows["git"] == "main, clean"
    assert len(rows["sandbox"]) < 140 and rows["sandbox"].endswith("(/sandbox lists all)")
    gaps = BannerInfo(
        "m", "u", None, False, "off", "ask", "sandbox: x", "/w", sandbox_gaps=["MCP " * 40, "net"]
    )
    assert [value for label, value in gaps.rows() if label == "not covered"] == ["MCP " * 40, "net"]  # whole
    off = BannerInfo("m", "u", None, False, "off", "ask", "sandbox: OFF (auto) - " + "x, " * 80, "/w")
    assert dict(off.rows())["sandbox"].startswith("OFF") and len(dict(off.rows())["sandbox"]) > 200


def test_live_window_keeps_the_last_lines_and_reopens_a_cut_code_block():
    stream = MarkdownStream()
    stream.feed("Intro.\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(100)) + "x100 =")
    assert stream.in_fence
    window = stream.live_window(5).split("\n")
    assert window == ["```python", "x96 = 96", "x97 = 97", "x98 = 98", "x99 = 99", "x100 ="]
    stream.feed(" 100\n```\n\n")
    assert not stream.in_fence and stream.live_window(5) == ""
    stream.feed("line one\nline two\nline three")
    assert stream.live_window(2) == "line two\nline three"
    assert stream.live_window(10) == "line one\nline two\nline three"


def _window_by_splitting(stream, max_lines):
    """The live window computed the slow way: split the whole live tail, find the open fence."""
    lines = stream.live.split("\n")
    if len(lines) <= max_lines:
        return stream.live
    window = "\n".join(lines[-max_lines:])
    if not stream.in_fence:
        return window
    opened = [ln for ln in stream.tail.split("\n") if FENCE.match(ln)]
    return opened[-1] + "\n" + window


@pytest.mark.parametrize(
    "text",
    [
        "Intro.\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(3000)) + "tail",
        "~~~~ sh\n" + "echo hi\n" * 500,
        "para one\npara two\n" * 40 + "no newline yet",
        "```\n```\n\n```js\nlet a = 1\n",
        "short\n",
        "",
    ],
)
@pytest.mark.parametrize("max_lines", [1, 3, 46])
def test_live_window_matches_splitting_the_whole_tail_at_every_step(text, max_lines):
    stream = MarkdownStream()
    for i in range(0, len(text), 7):
        stream.feed(text[i : i + 7])
        stream.take_done()
        assert stream.live_window(max_lines) == _window_by_splitting(stream, max_lines)


def test_live_window_reopens_the_block_that_is_open_not_an_earlier_closed_one():
    stream = MarkdownStream()
    stream.feed("```text\nold\n```\nthen:\n```python\n" + "".join(f"y{i}\n" for i in range(20)))
    assert stream.in_fence
    assert stream.live_window(2) == "```python\ny19\n"
    assert stream.live_window(30).startswith("```text\n")  # short enough: shown whole, no reopening


def test_approval_view_says_what_always_would_grant():
    exec_call = ToolCall("1", "exec", {"command": "git status && pytest\u202e -q"})
    sandboxed = approval_view(exec_call, None, "ask", grant_scope(exec_call, mode="ask"))
    assert sandboxed.always_note == (
        "always: run commands starting with `git status`, `pytest\\u202e` without asking for the rest of "
        "this session"
    )
    exact = approval_view(exec_call, None, "ask", grant_scope(exec_call, sandboxed=False))
    assert exact.always_note == "always: run this exact command without asking for the rest of this session"
    write = ToolCall("2", "write", {"path": "n.py", "content": "x\n"})
    assert "run every write call without asking" in str(
        approval_view(write, None, "ask", grant_scope(write)).always_note
    )
    assert approval_view(write, None, "ask").always_note is None  # nobody said: nothing is guessed


def test_clip_shortens_at_a_word_and_says_where_the_rest_is():
    text = "not run: it is not read-only (the user can re-run with --yes). Continue without it, or finish"
    assert clip(text, 200) == text
    assert (
        clip(text, 90, " (more: x)")
        == "not run: it is not read-only (the user can re-run with --yes). Continue without it, or…"
        + " (more: x)"
    )
    assert clip("x" * 50, 20) == "x" * 19 + "…"  # one long word: cut inside it, still marked
    assert len(clip(text, 40)) <= 40


def test_columns_align_the_second_column():
    rows = [("/help", "List the commands"), ("/approval ask|auto-edit|full-auto", "Show or set"), ("/x", "")]
    lines = columns(rows)
    assert lines == [
        "/help                              List the commands",
        "/approval ask|auto-edit|full-auto  Show or set",
        "/x",
    ]


def test_doctor_lines_wrap_under_their_detail_column():
    detail = "the server put the tool call in the content instead of tool_calls; start vllm with " * 2
    row = "  WARN  tool calls            " + detail.strip()
    fix = " " * 30 + "fix: " + "add --enable-auto-tool-choice --tool-call-parser hermes to vllm serve " * 2
    wrapped = wrap_hanging(row + "\n" + fix.rstrip(), 120).splitlines()
    assert all(len(line) <= 120 for line in wrapped) and len(wrapped) == 4
    assert wrapped[0].startswith("  WARN  tool calls            the server")
    assert wrapped[1].startswith(" " * 30) and wrapped[1][30] != " "  # under the detail, not column 0
    assert wrapped[2].startswith(" " * 30 + "fix: add")
    assert wrapped[3].startswith(" " * 35) and wrapped[3][35] != " "
    assert " ".join(w.strip() for w in wrapped[:2]) == row.strip()  # nothing lost or changed
    assert wrap_hanging("short line", 120) == "short line"


def test_the_models_markdown_reaches_the_terminal_escaped():
    """rich's Markdown passes ESC through: `\x1b[8m` in an answer or a plan hid the text after it."""
    stream = MarkdownStream()
    stream.feed("shown \x1b[8mhidden\x1b[0m\r\n\n")
    assert stream.take_done() == "shown \\x1b[8mhidden\\x1b[0m\n\n"
    assert printable_markdown("plan \x1b[2J") == "plan \\x1b[2J"


def test_arguments_in_a_question_show_every_key():
    """A long first value hid the `path` and `content` after it (the first 400 characters only)."""
    shown = format_arguments({"title": "x" * 1000, "path": "/etc/passwd", "content": "evil"})
    assert '"path": "/etc/passwd"' in shown and '"content": "evil"' in shown
    assert "(602 more characters not shown)" in shown
