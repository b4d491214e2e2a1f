"""What one agent run did, counted from its `--output-format stream-json` events as they arrive.

Calls that never started (no `tool_call_started`) were malformed (their `tool_call_finished` names
the `problem`: unknown tool, arguments that do not fit, call syntax the parser could not read:
"unparsed") or refused by the approval policy.
"""

from __future__ import annotations

import json
from typing import Any

# Lines the batch never needs to decode (the bulk of the stream): skipped by their start.
SKIPPED = tuple(
    f'{{"type":"{kind}"'.encode()
    for kind in ("text_delta", "reasoning_delta", "tool_output", "first_token", "debug")
)


class Tally:
    """Counts from one run's events; `result` is its final result object (None if it never came)."""

    def __init__(self) -> None:
        self.iteration = 0
        self.replies = 0  # model replies received (none: the agent never reached the model)
        self.tokens = 0  # prompt + completion so far
        self.completion_tokens = 0
        self.modes: list[str] = []  # request modes in order of first use: "native", "text"
        self.fell_back = False
        self.calls = 0  # tool calls answered
        self.calls_from_text = 0  # calls the parser found in reply text (text mode, or leaked)
        self.tool_errors = 0  # calls that ran and failed (non-zero exit, no match, ...)
        self.malformed = 0
        self.unparsed = 0
        self.refused = 0
        self.result: dict[str, Any] | None = None
        self._started: set[str] = set()

    def feed(self, line: bytes) -> None:
        """One line of the child's stdout."""
        if line.startswith(SKIPPED) or not line.strip():
            return
        try:
            event = json.loads(line)
        except ValueError:
            return  # not ours to judge: the stream is checked against its schema elsewhere
        if isinstance(event, dict):
            self.observe(event)

    def observe(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "iteration_started":
            self.iteration = int(event.get("iteration") or 0)
        elif kind == "turn_finished":
            self.replies += 1
        elif kind == "request_started" and event.get("mode") in ("native", "text"):
            if event["mode"] not in self.modes:
                self.modes.append(event["mode"])
        elif kind == "mode_switched" and event.get("function_calling") is False:
            self.fell_back = True
        elif kind == "calls_detected" and event.get("source") == "text":
            self.calls_from_text += len(event.get("calls") or [])
        elif kind == "usage_reported":
            usage = event.get("usage") or {}
            self.completion_tokens += int(usage.get("completion_tokens") or 0)
            self.tokens += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        elif kind == "tool_call_started":
            self._started.add(str((event.get("call") or {}).get("id")))
        elif kind == "tool_call_finished":
            self._finished(event)
        elif kind == "result":
            self.result = event

    def _finished(self, event: dict[str, Any]) -> None:
        call = event.get("call") or {}
        result = event.get("result") or {}
        self.calls += 1
        failed = result.get("kind") == "error"
        if str(call.get("id")) in self._started:
            self.tool_errors += failed
        elif event.get("problem"):
            self.malformed += 1
            self.unparsed += bool((call.get("metadata") or {}).get("error"))
        else:
            self.refused += 1

    @property
    def mode(self) -> str | None:
        """The tool-call mode used: "native", "text", or "native+text" after a fallback."""
        return "+".join(self.modes) or None
