"""Single key presses from the terminal (the approval menu): no Enter needed, Esc told apart from the
escape sequences that arrow and function keys send. Ctrl-C still raises KeyboardInterrupt."""

from __future__ import annotations

import os
import select
import sys
import termios
import tty
from collections.abc import Callable

ESCAPE_WAIT = 0.05  # an arrow key's sequence arrives at once; a lone Esc is followed by nothing
NAMES = {"\r": "enter", "\n": "enter", "\x1b": "escape", "\x7f": "backspace", "\t": "tab", "\x04": "ctrl-d"}


def read_key(fd: int | None = None, *, flush: bool = True) -> str:
    """One key: a character ('y', '2', 'é'), or 'enter', 'escape', 'backspace', 'tab'; '' for a key
    with no meaning here (an arrow). Raises EOFError on Ctrl-D or a closed terminal.

    `flush` drops keys typed before the question was shown, so a stray Enter or `y` typed ahead
    cannot answer a question the user has not seen."""
    fd = sys.stdin.fileno() if fd is None else fd
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)  # no echo, no line editing; signals (Ctrl-C) stay on
        if flush:
            termios.tcflush(fd, termios.TCIFLUSH)
        key = decode_key(fd)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    if key == "ctrl-d":
        raise EOFError
    return key


def decode_key(fd: int, names: dict[str, str] = NAMES) -> str:
    """The next key on `fd` (a terminal already in a mode without line editing): its name in `names`,
    a printable character, or '' for anything else. Raises EOFError when the terminal is closed."""
    first = os.read(fd, 1)
    if not first:
        raise EOFError
    if first == b"\x1b":
        return "escape" if not _pending(fd) else ""
    data = first
    while _continues(data):  # the rest of a UTF-8 character
        more = os.read(fd, 1)
        if not more:
            break
        data += more
    text = data.decode("utf-8", "replace")
    return names.get(text, text if text.isprintable() else "")


def _pending(fd: int) -> bool:
    """Swallow what follows an Esc at once (an escape sequence); True when there was any."""
    found = False
    while select.select([fd], [], [], ESCAPE_WAIT)[0]:
        if not os.read(fd, 64):
            break
        found = True
    return found


def _continues(data: bytes) -> bool:
    lead = data[0]
    need = 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4 if lead >> 3 == 0b11110 else 1
    return len(data) < need


def terminal_key_reader() -> Callable[[], str] | None:
    """`read_key` when stdin is a terminal, else None (answers are then typed lines)."""
    return read_key if sys.stdin.isatty() else None
