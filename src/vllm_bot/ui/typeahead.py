"""Keys typed while a task runs (as in Claude Code): the line being typed and the messages queued with
Enter are shown under the live region and sent, in order, when the task ends; Esc stops the task as
Ctrl-C does; Ctrl-J starts a new line; Ctrl-O opens the last folded output.

A thread reads the terminal, which is kept without echo and line editing for the task's length: echoed
keys used to land in the live region and leave a stale spinner line in the transcript. Signals stay
on (Ctrl-C). The approval menu reads keys itself, so the thread is `paused()` while it asks.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import termios
import threading
from collections.abc import Callable, Iterator

from .keys import NAMES, decode_key

KEYS = {**NAMES, "\r": "enter", "\n": "new line", "\x08": "backspace", "\x0f": "ctrl-o", "\x15": "ctrl-u"}


def interrupt_main() -> None:
    """What Ctrl-C does, from another thread: SIGINT to the main thread, whose handler stops the task
    (a blocking read there is interrupted, as a process-wide signal would not reliably do)."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def between_tasks(mode: list) -> list:
    """The terminal from a task's end until the prompt takes it: line editing and signals as before,
    but no echo and Enter kept as Enter. A message typed in that moment reaches the prompt as typed
    and is sent; in the plain cooked mode it was echoed under the answer and its Enter arrived as
    Ctrl-J (a new line). `keeping_terminal` gives the terminal back as it was when the session ends."""
    mode = [*mode[:6], list(mode[6])]
    mode[0] &= ~termios.ICRNL
    mode[3] &= ~termios.ECHO
    return mode


@contextlib.contextmanager
def typed_line(fd: int | None = None) -> Iterator[None]:
    """For a line read with input() between tasks (/resume's question): echo on and Enter a newline,
    as the terminal was before the session; then as between tasks again."""
    try:
        fd = sys.stdin.fileno() if fd is None else fd
        mode = termios.tcgetattr(fd)
    except (termios.error, ValueError, OSError):  # not a terminal
        yield
        return
    cooked = [*mode[:6], list(mode[6])]
    cooked[0] |= termios.ICRNL
    cooked[3] |= termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, cooked)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, mode)


def read_line(question: str) -> str:
    """input(), in the terminal's mode for it (typed_line)."""
    with typed_line():
        return input(question)


@contextlib.contextmanager
def keeping_terminal(fd: int) -> Iterator[None]:
    """For the session: the terminal as between tasks (`between_tasks`: keys typed while the session
    starts reach the first prompt too); its mode as before, restored when the session ends."""
    try:
        original = termios.tcgetattr(fd)
    except termios.error:  # not a terminal
        yield
        return
    try:
        termios.tcsetattr(fd, termios.TCSANOW, between_tasks(original))
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, original)


class TypeAhead:
    """The typed-ahead line and queued messages, and the thread that reads them from `fd`.

    `lock` guards them (the UI's: the live view draws them under it); `on_change` redraws."""

    def __init__(
        self,
        fd: int,
        lock: threading.RLock,
        on_change: Callable[[], None],
        on_expand: Callable[[], None],
        on_escape: Callable[[], None] = interrupt_main,
    ) -> None:
        self.fd = fd
        self.lock = lock
        self.on_change, self.on_expand, self.on_escape = on_change, on_expand, on_escape
        self.line = ""
        self.queued: list[str] = []
        self._paused = False
        self._closing = False
        self._between_keys = threading.Lock()  # held while a key is read
        self._wake: tuple[int, int] | None = None  # a pipe that wakes the thread from select()

    def key(self, key: str) -> None:
        """Apply one key (a name from KEYS or a printable character)."""
        if key == "escape":
            if not self._closing:  # the task may have just ended
                self.on_escape()
            return
        if key == "ctrl-o":
            self.on_expand()
            return
        with self.lock:
            if key == "enter":
                if self.line.strip():
                    self.queued.append(self.line)
                self.line = ""
            elif key == "new line":
                self.line += "\n"
            elif key == "backspace":
                self.line = self.line[:-1]
            elif key == "ctrl-u":
                self.line = ""
            elif len(key) == 1:
                self.line += key
            else:
                return
            self.on_change()

    def give(self, queued: list[str], line: str) -> None:
        """Messages still waiting and an unfinished line, typed during an earlier task: shown again."""
        with self.lock:
            self.queued[:0] = queued
            self.line = line + self.line

    def take(self) -> tuple[list[str], str]:
        """The queued messages and the unfinished line, emptied."""
        with self.lock:
            taken = (self.queued, self.line)
            self.queued, self.line = [], ""
            return taken

    @contextlib.contextmanager
    def reading(self) -> Iterator[TypeAhead]:
        """Read keys for the duration; the terminal's mode is restored after."""
        try:
            saved = termios.tcgetattr(self.fd)
        except termios.error:
            yield self
            return
        mode = termios.tcgetattr(self.fd)
        mode[0] &= ~termios.ICRNL  # Enter reads as \r, Ctrl-J as \n
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)  # ISIG stays: Ctrl-C
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self.fd, termios.TCSANOW, mode)
        self._wake, self._closing, self._paused = os.pipe(), False, False
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        try:
            yield self
        finally:  # the terminal first: an Esc's SIGINT still on its way must not leave it in raw mode
            self._closing = True
            termios.tcsetattr(self.fd, termios.TCSANOW, between_tasks(saved))
            wake, self._wake = self._wake, None
            os.write(wake[1], b".")
            thread.join(timeout=2)
            os.close(wake[0])
            os.close(wake[1])

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Leave the keys to someone else (the approval menu) for the duration."""
        if self._wake is None or self._paused:
            yield
            return
        self._paused = True
        self._poke()
        with self._between_keys:  # a key being read is read whole; then the thread waits
            pass
        try:
            yield
        finally:
            self._paused = False
            self._poke()

    def _poke(self) -> None:
        if self._wake is not None:
            os.write(self._wake[1], b".")

    def _run(self) -> None:
        assert self._wake is not None
        wake = self._wake[0]  # closed only after this thread ended
        while not self._closing:
            ready = select.select([wake] if self._paused else [self.fd, wake], [], [])[0]
            if wake in ready:
                os.read(wake, 64)
            if self.fd not in ready:
                continue
            with self._between_keys:
                if self._paused or self._closing:
                    continue
                try:
                    key = decode_key(self.fd, KEYS)
                except (EOFError, OSError):
                    return  # the terminal is gone
            self.key(key)
