"""DEBUG=1: one `[DEBUG] ...` line per interesting event on stderr."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from ..events import (
    CallsDetected,
    Debug,
    Event,
    IterationStarted,
    ModeSwitched,
    RequestStarted,
    ToolCallFinished,
    TurnFinished,
    UsageReported,
)


class DebugLog:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def _line(self, text: str) -> None:
        self.stream.write(f"[DEBUG] {text}\n")
        self.stream.flush()

    def __call__(self, event: Event) -> None:
        if isinstance(event, IterationStarted):
            self._line(f"Iteration {event.iteration}")
        elif isinstance(event, RequestStarted):
            self._line(f"Request: {event.mode} mode, {event.messages} messages, attempt {event.attempt}")
        elif isinstance(event, CallsDetected):
            if event.source == "native":
                self._line(f"Function calling format detected: {len(event.calls)} calls")
            else:
                formats = ", ".join(event.formats)
                self._line(f"Tool calls found: {len(event.calls)} (text-based parsing: {formats})")
            for call in event.calls:
                args = json.dumps(call.arguments, ensure_ascii=False)
                problem = f" ERROR: {call.error}" if call.error else ""
                self._line(f"  {call.name}({args[:300]}) id={call.id}{problem}")
        elif isinstance(event, ModeSwitched):
            state = "on" if event.function_calling else "off (text fallback)"
            self._line(f"Function calling {state}: {event.reason}")
        elif isinstance(event, TurnFinished):
            ttft = f", first token {event.first_token_seconds:.2f}s" if event.first_token_seconds else ""
            self._line(f"Reply in {event.seconds:.2f}s{ttft}, finish_reason={event.turn.finish_reason}")
        elif isinstance(event, UsageReported):
            u = event.usage
            self._line(f"Tokens: prompt {u.prompt_tokens}, completion {u.completion_tokens}")
        elif isinstance(event, ToolCallFinished):
            self._line(f"Tool {event.call.name} -> {event.result.kind} in {event.seconds:.2f}s")
        elif isinstance(event, Debug):
            self._line(event.message)
