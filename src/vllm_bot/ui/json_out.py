"""Headless JSON output (`--output-format json | stream-json`), documented in docs/output-schema.md
and checked against resources/output-schema.json.

Both are consumers of the same events as the terminal UI. `json` prints one result object when the
task ends; `stream-json` prints every event as one JSON line as it happens, then the same result
object as the last line. Output is ASCII-only JSON (non-ASCII is escaped), one object per line.
"""

from __future__ import annotations

import json
import time
from typing import Any, TextIO

from ..calls import Usage
from ..events import (
    Debug,
    Event,
    IterationStarted,
    ModeSwitched,
    Notice,
    SessionStarted,
    SubagentEvent,
    TaskFinished,
    ToolCallFinished,
    ToolOutput,
    UsageReported,
    to_json,
)
from .display import clip

SCHEMA_VERSION = 1
STREAM_OUTPUT_LIMIT = 65_536  # characters of one call's live output sent as tool_output events
SUMMARY_CHARS = 300
OUTPUT_CUT_NOTE = (
    "\n[... further live output of this call is not streamed; its tool_call_finished result has the "
    "output as the model sees it ...]\n"
)


def dumps(data: Any) -> str:
    """One line of JSON: ASCII only (no encoding surprises in pipes), unknown types as strings."""
    return json.dumps(data, ensure_ascii=True, default=str, separators=(",", ":"))


def summarize_result(text: str) -> str:
    """The first non-empty line of a tool result, at most SUMMARY_CHARS characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return clip(line, SUMMARY_CHARS)


def usage_dict(usage: Usage | None) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens if usage else 0,
        "completion_tokens": usage.completion_tokens if usage else 0,
        "cached_tokens": usage.cached_tokens if usage else None,
    }


class ResultCollector:
    """Consumer that gathers what the final result object reports."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.model: str | None = None
        self.function_calling: bool | None = None
        self.calls: list[dict[str, Any]] = []
        self.notices: list[dict[str, str]] = []
        self.finished: TaskFinished | None = None
        self.iterations = 0  # so far: a task ended by an error has no TaskFinished
        self.usage: Usage | None = None  # the task's tokens so far
        self.subagents: list[dict[str, Any]] = []  # each delegate call's sub-agent, as it ended

    def __call__(self, event: Event) -> None:
        if isinstance(event, SessionStarted):
            self.model, self.function_calling = event.model, event.function_calling
        elif isinstance(event, ModeSwitched):
            self.function_calling = event.function_calling
        elif isinstance(event, ToolCallFinished):
            self.calls.append(
                {
                    "id": event.call.id,
                    "name": event.call.name,
                    "arguments": event.call.arguments,
                    "ok": not event.result.is_error,
                    "kind": event.result.kind,
                    "summary": summarize_result(event.result.as_text()),
                    "seconds": round(event.seconds, 3),
                }
            )
        elif isinstance(event, IterationStarted):
            self.iterations = event.iteration
        elif isinstance(event, UsageReported):
            self.usage = event.total
        elif isinstance(event, Notice) and event.level in ("warning", "error"):
            self.notices.append({"level": event.level, "message": event.message})
        elif isinstance(event, TaskFinished):
            self.finished = event
        elif isinstance(event, SubagentEvent) and isinstance(event.event, TaskFinished):
            done = event.event
            self.subagents.append(
                {"call_id": event.call_id, "reason": done.reason, "iterations": done.iterations,
                 "usage": usage_dict(done.usage)}
            )  # fmt: skip

    def result(
        self, *, error: str | None = None, exit_code: int | None = None, reason: str = "error"
    ) -> dict[str, Any]:
        """The result object; `error` (with its exit code) when the task stopped on a user-facing error."""
        done = self.finished
        usage = done.usage if done else self.usage
        if error is not None or done is None:
            answer, code, iterations = "", exit_code if exit_code is not None else 1, self.iterations
        else:
            reason, answer, code, iterations = done.reason, done.answer, done.exit_code, done.iterations
        return {
            "type": "result",
            "schema_version": SCHEMA_VERSION,
            "answer": answer,
            "exit_reason": reason,
            "exit_code": code,
            "iterations": iterations,
            "error": error,
            "model": self.model,
            "function_calling": self.function_calling,
            "usage": usage_dict(usage),
            "tool_calls": self.calls,
            "notices": self.notices,
            "duration_seconds": round(time.monotonic() - self.started, 3),
            **({"subagents": self.subagents} if self.subagents else {}),
        }


class JsonWriter:
    """`--output-format json`: nothing while the task runs, one object at the end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        pass

    def finish(self, result: dict[str, Any]) -> None:
        """The result object, on its own line (the last line of the output)."""
        self.out.write(dumps(result) + "\n")
        self.out.flush()


class StreamJsonWriter(JsonWriter):
    """`--output-format stream-json`: one line per event as it happens, the result object last;
    `debug` events only with --debug / DEBUG=1."""

    def __init__(self, out: TextIO, output_limit: int = STREAM_OUTPUT_LIMIT, debug: bool = False) -> None:
        super().__init__(out)
        self.output_limit = output_limit
        self.debug = debug
        self._streamed: dict[str, int] = {}  # call id -> characters of live output sent

    def __call__(self, event: Event) -> None:
        if isinstance(event, Debug) and not self.debug:
            return
        if isinstance(event, ToolOutput):
            event = self._capped(event)  # type: ignore[assignment]
            if event is None:
                return
        self.out.write(dumps(to_json(event)) + "\n")
        self.out.flush()

    def _capped(self, event: ToolOutput) -> ToolOutput | None:
        """A flood of output (hundreds of MB) is not copied into the stream: the first part, a note."""
        sent = self._streamed.get(event.call_id, 0)
        if sent > self.output_limit:
            return None
        room = self.output_limit - sent
        self._streamed[event.call_id] = sent + len(event.text)
        if len(event.text) <= room:
            return event
        self._streamed[event.call_id] = self.output_limit + 1
        return ToolOutput(event.call_id, event.text[:room] + OUTPUT_CUT_NOTE)


def writer_for(output_format: str, out: TextIO, debug: bool = False) -> JsonWriter | StreamJsonWriter | None:
    """The writer for an --output-format value (None for text)."""
    if output_format == "json":
        return JsonWriter(out)
    if output_format == "stream-json":
        return StreamJsonWriter(out, debug=debug)
    return None
