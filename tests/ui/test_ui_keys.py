"""Approvals by single keys: the menu in the rich UI, and keys read from a real pseudo-terminal."""

import io
import os
import pty
import threading
import tty

import pytest
from rich.console import Console

from vllm_bot.calls import ToolCall
from vllm_bot.config import UiConfig
from vllm_bot.safety.policy import grant_scope
from vllm_bot.ui.keys import read_key
from vllm_bot.ui.rich_ui import RichUI

pytestmark = pytest.mark.timeout(30)
CALL = ToolCall("c", "exec", {"command": "pytest -q"})


def menu_ui(keys, lines=()):
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, height=40, color_system=None)
    keys, lines, asked = list(keys), list(lines), []

    def ask(question):
        asked.append(question)
        return lines.pop(0)

    return RichUI(UiConfig(), console=console, ask=ask, read_key=lambda: keys.pop(0)), out, asked


@pytest.mark.parametrize(
    "keys, approved, always",
    [
        (["y"], True, False),
        (["1"], True, False),
        (["a"], True, True),
        (["2"], True, True),
        (["escape"], False, False),
    ],
)
def test_one_key_answers_the_menu(keys, approved, always):
    ui, out, asked = menu_ui(keys)
    answer = ui.confirm(CALL, None, "not read-only", grant_scope(CALL))
    assert (answer.approved, answer.always, answer.message) == (approved, always, None)
    assert asked == []  # no Enter, no typed line
    shown = out.getvalue()
    assert "1. Yes  (y)" in shown
    assert "2. Yes, and don't ask again for commands starting with `pytest` this session  (a)" in shown
    assert "3. No, and tell it what to do instead  (n; Esc: just no)" in shown


def test_no_asks_what_to_do_instead_and_passes_it_on_unchanged():
    ui, out, asked = menu_ui(["x", "", "n"], ["don't run tests, edit calc.py instead"])
    answer = ui.confirm(CALL, None, "not read-only", grant_scope(CALL))
    assert (answer.approved, answer.message) == (False, "don't run tests, edit calc.py instead")
    assert len(asked) == 1 and "What should it do instead?" in asked[0]  # other keys were ignored
    assert "→ No" in out.getvalue()


def test_three_then_enter_is_a_plain_no_and_ctrl_d_is_no():
    ui, _, _ = menu_ui(["3"], [""])
    answer = ui.confirm(CALL, None, "why", None)
    assert (answer.approved, answer.message) == (False, None)

    def eof():
        raise EOFError

    ui.read_key = eof
    assert not ui.confirm(CALL, None, "why", None).approved


@pytest.fixture
def tty_pair():
    """(parent, child) of a pseudo-terminal; the child already out of line mode, as it is when a key
    arrives while read_key waits (in line mode the terminal itself would eat a Backspace)."""
    parent, child = pty.openpty()
    tty.setcbreak(child)
    yield parent, child
    os.close(parent)
    os.close(child)


@pytest.mark.parametrize(
    "typed, key",
    [
        (b"y", "y"),
        (b"\r", "enter"),
        (b"\x1b", "escape"),
        (b"\x1b[A", ""),
        ("é".encode(), "é"),
        (b"\x7f", "backspace"),
    ],
)
def test_read_key_from_a_terminal(tty_pair, typed, key):
    parent, child = tty_pair
    os.write(parent, typed)
    assert read_key(child, flush=False) == key


def test_read_key_drops_keys_typed_before_the_question_and_restores_the_terminal(tty_pair):
    import termios

    parent, child = tty_pair
    before = termios.tcgetattr(child)
    os.write(parent, b"y\r")  # typed ahead, before the menu was shown
    found = []
    reader = threading.Thread(target=lambda: found.append(read_key(child)))
    reader.start()
    reader.join(0.3)
    assert not found  # the typed-ahead keys did not answer
    os.write(parent, b"n")
    reader.join(5)
    assert found == ["n"]
    assert termios.tcgetattr(child) == before


def test_read_key_ctrl_d_is_end_of_input(tty_pair):
    parent, child = tty_pair
    os.write(parent, b"\x04")
    with pytest.raises(EOFError):
        read_key(child, flush=False)


def test_between_tasks_enter_stays_enter_and_the_session_gives_the_terminal_back():
    """After a task the terminal waits for the prompt without echo and with Enter kept as \\r (typed in
    that moment, a message and its Enter reach the prompt as typed); /resume's and /undo's questions
    read their line with echo and Enter as a newline; the session's end restores the mode it found."""
    import termios

    from vllm_bot.ui.typeahead import TypeAhead, keeping_terminal, typed_line

    parent, child = pty.openpty()
    try:
        original = termios.tcgetattr(child)
        assert original[0] & termios.ICRNL and original[3] & termios.ECHO  # a fresh pty: cooked
        with keeping_terminal(child):
            typing = TypeAhead(child, threading.RLock(), lambda: None, lambda: None)
            with typing.reading():
                pass  # a task
            between = termios.tcgetattr(child)
            assert not between[0] & termios.ICRNL and not between[3] & termios.ECHO
            assert between[3] & termios.ICANON and between[3] & termios.ISIG  # line editing, Ctrl-C
            with typed_line(child):
                os.write(parent, b"3\r")
                assert os.read(child, 100) == b"3\n"  # a line for input()
            assert termios.tcgetattr(child) == between
            os.write(parent, b"next task\r")  # typed before the prompt is back
            tty.setraw(child, termios.TCSANOW)  # the prompt takes the terminal (as prompt_toolkit does)
            assert os.read(child, 100) == b"next task\r"  # Enter, not Ctrl-J
        assert termios.tcgetattr(child) == original
    finally:
        os.close(parent)
        os.close(child)
