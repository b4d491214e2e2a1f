"""Saves the conversation after every step: an event consumer that appends to the session file.

It holds the agent's Conversation and writes each entry once, as soon as it exists: the assistant
turn when its reply finished (TurnFinished), each tool result when its call finished, the turn's
results entry at the next step. When the history no longer starts with what was saved (/clear,
compaction), a "reset" record and the whole new history are written.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ..conversation import Conversation, Entry
from ..events import (
    Event,
    IterationStarted,
    ModeSwitched,
    TaskFinished,
    TelemetryReported,
    ToolCallFinished,
    TurnFinished,
    to_json,
)
from .session_codec import entry_to_dict, result_to_dict
from .sessions import FORMAT_VERSION, SessionLog


class SessionRecorder:
    def __init__(
        self,
        log: SessionLog,
        conversation: Conversation,
        meta: Callable[[], dict[str, Any]],
        *,
        saved: list[Entry] | None = None,
    ) -> None:
        self.log = log
        self.conversation = conversation
        self.meta = meta  # called once, when the file is first written
        self._saved: list[Entry] = list(saved or [])  # entries in the file, in order (by identity)
        self._prewritten: Entry | None = None  # a turn written from its event before it was appended
        self._started = log.exists

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            self.sync()
            self._write_entry(event.turn)
            self._prewritten = event.turn
        elif isinstance(event, ToolCallFinished):
            self.sync()
            self._write({"type": "result", "result": result_to_dict(event.result)})
        elif isinstance(event, IterationStarted):
            self.sync()
        elif isinstance(event, ModeSwitched):
            self._write({"type": "mode", "function_calling": event.function_calling})
        elif isinstance(event, TelemetryReported):  # speed and cache figures; loading ignores them
            self._write(to_json(event) | {"type": "telemetry"})
        elif isinstance(event, TaskFinished):
            self.sync()
            self._write(
                {
                    "type": "task",
                    "reason": event.reason,
                    "exit_code": event.exit_code,
                    "iterations": event.iterations,
                }
            )

    def sync(self) -> None:
        """Write the entries added since the last write (all of them after a reset)."""
        entries = self.conversation.entries
        saved = self._saved
        # by identity, at C speed: this runs three times a turn over the whole history
        if len(entries) < len(saved) or not all(map(operator.is_, entries, saved)):
            self._write({"type": "reset"})
            saved.clear()
        for entry in entries[len(saved) :]:
            if entry is self._prewritten:
                self._prewritten = None  # written from its event already
            else:
                self._write_entry(entry)
            saved.append(entry)

    def _write_entry(self, entry: Entry) -> None:
        self._write({"type": "entry", "entry": entry_to_dict(entry)})

    def _write(self, record: dict[str, Any]) -> None:
        if not self._started:
            self._started = True
            self.log.write({"type": "meta", "version": FORMAT_VERSION, **self.meta()})
        self.log.write(record)

    def close(self) -> None:
        self.sync()
        self.log.close()
