"""The status line after each task: tokens in/out, generation speed, context used of the window.

`TaskStats` is an event consumer; `StatusLine.extras` is the hook for more fields (e.g. a telemetry
consumer's prefix-cache hit rate): each extra is a callable returning a short string or None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..events import Event, RequestStarted, TaskFinished, TurnFinished, UsageReported

StatusField = Callable[[], str | None]


def short_count(n: int) -> str:
    """1234 -> '1.2k', 32768 -> '32.8k', 999 -> '999'."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


@dataclass
class TaskStats:
    """Figures for the current task, fed by events; `reset` at the start of the next one."""

    prompt_tokens: int = 0  # summed over the task's requests
    completion_tokens: int = 0
    generation_seconds: float = 0.0  # time spent streaming tokens (after the first one)
    requests: int = 0
    context_used: int | None = None  # the last request: prompt + completion
    context_window: int | None = None  # kept across tasks

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestStarted) and event.attempt == 1 and event.mode != "summary":
            self.requests += 1
        elif isinstance(event, TurnFinished):
            first = event.first_token_seconds or 0.0
            self.generation_seconds += max(0.0, event.seconds - first)
        elif isinstance(event, UsageReported):
            self.prompt_tokens += event.usage.prompt_tokens
            self.completion_tokens += event.usage.completion_tokens
            self.context_used = event.usage.prompt_tokens + event.usage.completion_tokens
            self.context_window = event.context_window or self.context_window

    def reset(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.requests = 0
        self.generation_seconds = 0.0
        self.context_used = None

    @property
    def tokens_per_second(self) -> float | None:
        if self.completion_tokens <= 0 or self.generation_seconds <= 0.05:
            return None
        return self.completion_tokens / self.generation_seconds


@dataclass
class StatusLine:
    """Consumes events; `text()` is the line shown after a task (None before any usage arrived)."""

    stats: TaskStats = field(default_factory=TaskStats)
    extras: list[StatusField] = field(default_factory=list)
    last: str | None = None

    def __call__(self, event: Event) -> None:
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
            share = 100 * s.context_used / s.context_window
            parts.append(
                f"context {short_count(s.context_used)}/{short_count(s.context_window)} ({share:.0f}%)"
            )
        for extra in self.extras:
            value = extra()
            if value:
                parts.append(value)
        return " · ".join(parts)
