"""Catch a model that repeats itself: the same call again and again, A-B-A-B ping-pong, or the same
error over and over. First a note to the model suggesting another approach, then a stop.

Only consecutive repetition counts, so legitimate patterns (running the tests after each edit,
reading many different files) never trigger it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..calls import ToolCall, ToolResult


@dataclass
class GuardVerdict:
    action: Literal["ok", "note", "stop"]
    message: str = ""


OK = GuardVerdict("ok")


def call_signature(call: ToolCall) -> str:
    return call.name + " " + json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)


def _trailing_run(items: Sequence[str]) -> int:
    """How many items at the end are equal to the last one."""
    if not items:
        return 0
    n = 1
    while n < len(items) and items[-1 - n] == items[-1]:
        n += 1
    return n


def _trailing_alternation(items: Sequence[str]) -> int:
    """Length of the A-B-A-B tail (A != B); 0 if the last two are equal."""
    if len(items) < 2 or items[-1] == items[-2]:
        return 0
    n = 2
    while n < len(items) and items[-1 - n] == items[-1 - n + 2]:
        n += 1
    return n


class LoopGuard:
    def __init__(self, warn_after: int = 3, stop_after: int = 5) -> None:
        self.warn_after = warn_after
        self.stop_after = stop_after
        # Only the tail matters (the longest pattern checked is A-B x stop_after); a whole task's
        # signatures would keep every written file's content alive after compaction dropped it.
        self.calls: deque[str] = deque(maxlen=2 * stop_after + 1)
        self.errors: deque[str] = deque(maxlen=2 * stop_after + 1)
        self._warned: set[str] = set()

    def reset(self) -> None:
        self.calls.clear()
        self.errors.clear()
        self._warned.clear()

    def observe(self, calls: list[ToolCall], results: list[ToolResult]) -> GuardVerdict:
        verdict = OK
        for call, result in zip(calls, results, strict=True):
            self.calls.append(call_signature(call))
            self.errors.append(result.as_text()[:500] if result.is_error else "")
            verdict = self._worst(verdict, self._check(call))
        return verdict

    def _check(self, call: ToolCall) -> GuardVerdict:
        same = _trailing_run(self.calls)
        if same >= self.stop_after:
            return GuardVerdict("stop", f"the model made the same {call.name} call {same} times in a row")
        pingpong = _trailing_alternation(self.calls)
        if pingpong >= 2 * self.stop_after:
            return GuardVerdict("stop", f"the model alternated between the same two calls {pingpong} times")
        errors = _trailing_run(self.errors) if self.errors[-1] else 0
        if errors >= self.stop_after:
            return GuardVerdict("stop", f"the same error came back {errors} times in a row")
        if same >= self.warn_after:
            return self._note(
                "same",
                f"You have made exactly this {call.name} call {same} times in a row with "
                "the same arguments. It will not give a different result. Try another approach "
                "or, if you are done, give your final answer.",
            )
        if pingpong >= 2 * self.warn_after:
            return self._note(
                "pingpong",
                "You are alternating between the same two calls without progress. "
                "Step back, reconsider the problem and try something different.",
            )
        if errors >= self.warn_after:
            return self._note(
                "errors",
                f"The same error has come back {errors} times in a row. Read the error "
                "message carefully and change your approach instead of repeating it.",
            )
        return OK

    def _note(self, key: str, message: str) -> GuardVerdict:
        """A note once per kind of repetition (the stop comes later if it goes on)."""
        if key in self._warned:
            return OK
        self._warned.add(key)
        return GuardVerdict("note", message)

    @staticmethod
    def _worst(a: GuardVerdict, b: GuardVerdict) -> GuardVerdict:
        rank = {"ok": 0, "note": 1, "stop": 2}
        return b if rank[b.action] > rank[a.action] else a
