"""Front ends: consumers of loop events (plain text, DEBUG log, JSON; rich in the terminal UI).

A front end is an event consumer (`__call__(event)`) that also offers what the session needs from
the user's side: `banner(info)`, `say(text)`, `error(text)`, `confirm(call, preview, reason,
scope) -> Answer`, `stop_live()`, `debug_stream()` and a `status` line (see ui.status).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..config import UiConfig
from ..events import Event
from .plain import PlainUI


def fanout(consumers: Sequence[Callable[[Event], None]]) -> Callable[[Event], None]:
    """One emit that feeds every consumer in order; consumers added to the list later are fed too."""

    def emit(event: Event) -> None:
        for target in consumers:
            target(event)

    return emit


def is_terminal(needs_input: bool = True) -> bool:
    """Is there a terminal to draw on (and to type into, when `needs_input`)?"""
    if not sys.stdout.isatty():
        return False
    return sys.stdin.isatty() or not needs_input


def front_end(config: UiConfig, *, headless: bool, needs_input: bool = True) -> Any:
    """The rich terminal UI when there is a terminal, else the plain one (headless: progress only)."""
    if headless:
        return PlainUI(stream_text=False)
    if is_terminal(needs_input):
        from .rich_ui import RichUI

        return RichUI(config)
    return PlainUI(stream_text=True)
