"""Front ends: consumers of loop events (plain text, DEBUG log, JSON; rich in the terminal UI)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..events import Event


def fanout(consumers: Iterable[Callable[[Event], None]]) -> Callable[[Event], None]:
    """One emit that feeds every consumer in order."""
    targets = list(consumers)

    def emit(event: Event) -> None:
        for target in targets:
            target(event)

    return emit
