"""A short account of what a task did so far, for when a limit stops it (no model request).

It is kept from the task's events as they happen, not read back from the conversation: compaction
folds old turns into a summary, and the account must still count every call the task made.
"""

from __future__ import annotations

from ..events import Emit, Event, ToolCallFinished, TurnFinished


class Progress:
    """Event consumer: calls per tool, files changed, the last command and the model's last words."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.counts: dict[str, int] = {}
        self.changed: list[str] = []
        self.last_command: str | None = None
        self.last_failed = False
        self.last_text = ""

    def watch(self, emit: Emit) -> Emit:
        """`emit`, with every event noted here first."""

        def both(event: Event) -> None:
            self(event)
            emit(event)

        return both

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnFinished):
            self.last_text = event.turn.content.strip() or self.last_text
            for call in event.turn.tool_calls:
                self.counts[call.name] = self.counts.get(call.name, 0) + 1
        elif isinstance(event, ToolCallFinished):
            call, failed = event.call, event.result.is_error
            path = call.arguments.get("path")
            if call.name in ("write", "edit") and isinstance(path, str) and not failed:
                self.changed += [] if path in self.changed else [path]
            if call.name == "exec":
                self.last_command, self.last_failed = str(call.arguments.get("command")), failed

    def summary(self) -> str:
        """`Progress: 3 read calls; changed a.py, b.py; last command: pytest -q (failed).`"""
        counts = self.counts.items()
        parts = [
            ", ".join(f"{n} {name} call{'s' if n != 1 else ''}" for name, n in counts) or "no tool calls"
        ]
        if self.changed:
            more = " ..." if len(self.changed) > 10 else ""
            parts.append("changed " + ", ".join(self.changed[:10]) + more)
        if self.last_command:
            parts.append(f"last command: {self.last_command[:80]} ({'failed' if self.last_failed else 'ok'})")
        summary = "Progress: " + "; ".join(parts) + "."
        if self.last_text:
            summary += f" The model's last words: {self.last_text[:300]}"
        return summary
