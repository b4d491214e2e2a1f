"""The parts the loop is handed: a model client, a tool executor and an approval gate.

The loop knows them only by these shapes, so it imports no SDK, UI or git code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..calls import AssistantTurn, CheckedCall, ToolCall, ToolResult
from ..conversation import Conversation
from ..events import Emit


class Client(Protocol):
    def complete(
        self,
        conversation: Conversation,
        definitions: list[dict[str, Any]],
        emit: Emit,
        *,
        deadline: float | None = None,  # past it: DeadlineReached, at the latest at the next chunk
    ) -> AssistantTurn: ...

    @property
    def context_window(self) -> int | None: ...


class Executor(Protocol):
    definitions: list[dict[str, Any]]

    def execute_call(self, call: CheckedCall, **kw: Any) -> ToolResult: ...

    def prefetch(self, calls: list[CheckedCall]) -> None: ...  # a turn's calls, before they run in order


Gate = Callable[[CheckedCall], ToolResult | None]  # None: run it; a result: refused (and why)


def allow_all(call: ToolCall) -> ToolResult | None:
    return None
