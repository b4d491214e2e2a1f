"""The optional wall-clock budget of one task (`agent.time_budget`).

The loop checks it before each model turn and each tool call. Its deadline also goes down to the
model client, which stops a streaming reply at the next chunk once it passes (watchdog.py), and to
the tools, where exec cuts a command's timeout to the time that is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..calls import AssistantTurn, ToolCall, ToolResult
from ..conversation import answer_calls
from ..prompts import message

LAST_MOMENT = 0.5  # seconds: with less left no request or call starts (exec refuses to start, too)


class OutOfTime(Exception):
    """The budget ran out while the model was replying; `turn` holds what had streamed, if anything."""

    def __init__(self, turn: AssistantTurn | None = None) -> None:
        super().__init__("the time budget ran out")
        self.turn = turn


class Budget:
    """`seconds` of wall clock from now; None: no limit."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.deadline = None if seconds is None else clock() + seconds

    def expired(self) -> bool:
        """Used up, or too nearly to start anything: a model request would be cut at once."""
        return self.deadline is not None and self.clock() >= self.deadline - LAST_MOMENT

    def message(self) -> str:
        return f"Stopped: the time budget of {self.seconds:g} s (agent.time_budget) is used up."


def not_run_results(calls: list[ToolCall], done: list[ToolResult]) -> list[ToolResult]:
    """`done` plus a result for every call after it that the budget left unrun (one result per id)."""
    return answer_calls(calls, done, message("budget_not_run"))
