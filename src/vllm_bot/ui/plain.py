"""The plain front end: no colours, no cursor tricks. Used when output is not a terminal and for
headless runs (progress on stderr, the final answer on stdout, printed by the caller)."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from ..events import (
    Event,
    ModeSwitched,
    Notice,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)


def describe_call(name: str, arguments: dict) -> str:
    """A one-line summary: `read src/app.py`, `exec pytest -q`."""
    for key in ("path", "command"):
        if isinstance(arguments.get(key), str):
            return f"{name} {arguments[key]}"
    return f"{name} {json.dumps(arguments, ensure_ascii=False)[:80]}"


class PlainUI:
    def __init__(self, *, stream_text: bool, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.stream_text = stream_text  # interactive: print the answer as it arrives
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._mid_line = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta) and self.stream_text:
            self.out.write(event.text)
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, TurnFinished) and self.stream_text and self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        elif isinstance(event, ToolCallStarted):
            self._err(f"-> {describe_call(event.call.name, event.call.arguments)}")
        elif isinstance(event, ToolCallFinished):
            first = event.result.as_text().strip().splitlines()[:1]
            status = "failed" if event.result.is_error else "ok"
            self._err(f"   {event.call.name} {status}: {first[0][:160] if first else ''}")
        elif isinstance(event, ModeSwitched):
            self._err(f"note: function calling is off for this session: {event.reason}\n      {event.hint}")
        elif isinstance(event, Notice):
            self._err(f"{event.level}: {event.message}")

    def _err(self, text: str) -> None:
        self.err.write(text + "\n")
        self.err.flush()
