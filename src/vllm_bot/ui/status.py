"""The status line after each task (tokens in/out, generation speed, context used of the window)
and the live footer while a task runs (elapsed time, tokens so far, context used).

`TaskStats` is an event consumer; `StatusLine.extras` is the hook for more fields (e.g. a telemetry
consumer's prefix-cache hit rate): each extra is a callable returning a short string or None.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..events import (
    Event,
    PlanUpdated,
    ReasoningDelta,
    RequestStarted,
    SessionStarted,
    SubagentEvent,
    TaskFinished,
    TextDelta,
    TurnFinished,
    UsageReported,
)

StatusField = Callable[[], str | None]
CHARS_PER_TOKEN = 4  # the footer's estimate for tokens still streaming (usage comes at the end)


def short_count(n: int) -> str:
    """1234 -> '1.2k', 32768 -> '32.8k', 999 -> '999'."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def short_duration(seconds: float) -> str:
    """4.25 -> '4.2s', 75 -> '1m 15s', 3700 -> '1h 01m'."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)  # rounded, like the seconds below a minute
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def context_share(used: int, window: int) -> str:
    """'context 4.1k/32.8k (12%)'."""
    return f"context {short_count(used)}/{short_count(window)} ({100 * used / window:.0f}%)"


@dataclass
class TaskStats:
    """Figures for the current task, fed by events; `reset` at the start of the next one."""

    prompt_tokens: int = 0  # summed over the task's requests
    completion_tokens: int = 0
    generation_seconds: float = 0.0  # time spent streaming tokens (after the first one)
    requests: int = 0
    context_used: int | None = None  # the last request: prompt + completion
    context_window: int | None = None  # kept across tasks
    last_context: int | None = None  # context_used, kept across tasks (the footer's first figure)
    started: float | None = None  # monotonic time of the task's first request
    streamed_chars: int = 0  # text and reasoning of the request streaming now (no usage yet)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestStarted):
            self.started = self.started or time.monotonic()
            self.streamed_chars = 0
            if event.attempt == 1 and event.mode != "summary":
                self.requests += 1
        elif isinstance(event, (TextDelta, ReasoningDelta)):
            self.streamed_chars += len(event.text)
        elif isinstance(event, TurnFinished):
            first = event.first_token_seconds or 0.0
            self.generation_seconds += max(0.0, event.seconds - first)
        elif isinstance(event, UsageReported):
            self.streamed_chars = 0
            self.prompt_tokens += event.usage.prompt_tokens
            self.completion_tokens += event.usage.completion_tokens
            self.context_used = event.usage.prompt_tokens + event.usage.completion_tokens
            self.last_context = self.context_used
            self.context_window = event.context_window or self.context_window
        elif isinstance(event, SessionStarted):
            self.context_window = event.context_window or self.context_window
        elif isinstance(event, SubagentEvent) and isinstance(event.event, UsageReported):
            self.prompt_tokens += event.event.usage.prompt_tokens  # a sub-agent's tokens count too
            self.completion_tokens += event.event.usage.completion_tokens

    def reset(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.requests = self.streamed_chars = 0
        self.generation_seconds = 0.0
        self.context_used = self.started = None

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed over the task; known once two tokens came after the first one's wait."""
        if self.completion_tokens < 2 or self.generation_seconds <= 0:
            return None
        return self.completion_tokens / self.generation_seconds


@dataclass
class StatusLine:
    """Consumes events; `text()` is the line shown after a task (None before any usage arrived)."""

    stats: TaskStats = field(default_factory=TaskStats)
    extras: list[StatusField] = field(default_factory=list)
    last: str | None = None
    tasks: str | None = None  # the task list's count, `tasks 3/7` (kept across tasks)

    def __call__(self, event: Event) -> None:
        if isinstance(event, PlanUpdated):
            self.tasks = f"tasks {event.done}/{len(event.steps)}" if event.steps else None
        if isinstance(event, TaskFinished):
            self.last = self.text()
            self.stats.reset()
            return
        self.stats(event)

    def text(self) -> str | None:
        s = self.stats
        if not s.prompt_tokens and not s.completion_tokens:
            return None
        parts = [f"in {short_count(s.prompt_tokens)}", f"out {short_count(s.completion_tokens)}"]
        speed = s.tokens_per_second
        if speed is not None:
            parts.append(f"{speed:.1f} tok/s")
        if s.context_used is not None and s.context_window:
            parts.append(context_share(s.context_used, s.context_window))
        if self.tasks:
            parts.append(self.tasks)
        for extra in self.extras:
            value = extra()
            if value:
                parts.append(value)
        return " · ".join(parts)

    def footer(self, now: float | None = None) -> str | None:
        """The live footer while a task runs: `task 12.3s · in 3.4k · out ~560 · context 4.1k/32.8k (12%)`.
        Tokens still streaming (their usage comes at the end of the reply) are estimated: `~`; the
        prompt's tokens are left out until the server counted them (not `in 0` while it reads them)."""
        s = self.stats
        if s.started is None:
            return None
        elapsed = (time.monotonic() if now is None else now) - s.started
        streaming = (s.streamed_chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        out = f"out {'~' if streaming else ''}{short_count(s.completion_tokens + streaming)}"
        parts = [f"task {short_duration(elapsed)}"]
        if s.prompt_tokens:
            parts.append(f"in {short_count(s.prompt_tokens)}")
        parts.append(out)
        if s.last_context is not None and s.context_window:
            parts.append(context_share(s.last_context, s.context_window))
        if self.tasks:
            parts.append(self.tasks)
        return " · ".join(parts)
