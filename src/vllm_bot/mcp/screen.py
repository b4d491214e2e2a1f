"""Tool listings screened before the SDK reads them.

The SDK validates a `tools/list` answer as a whole: one malformed tool (an inputSchema of type
"string", no inputSchema, no name) would make it reject every tool of the server. A connection's
transport streams pass through a ToolScreen, which takes each tool the SDK would reject out of the
answer and keeps it, with the SDK's reason, for the listing to report as skipped. The SDK then reads
a listing it accepts, so its own per-tool state (output schemas, cached listings) matches ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HANDSHAKE_VERSION = "2025-11-25"  # what the SDK validates with before a version is negotiated


@dataclass
class Rejected:
    """A listed tool the SDK cannot read, as the server sent it."""

    tool: Any
    problem: str  # the SDK's first objection: `inputSchema.type: Input should be 'object'`


@dataclass
class ToolScreen:
    """One connection's screen (loop thread only)."""

    version: str | None = None  # the negotiated protocol version, once there is one
    waiting: dict[Any, str | None] = field(default_factory=dict)  # tools/list request id -> its cursor
    rejected: dict[str | None, list[Rejected]] = field(default_factory=dict)  # by cursor: the last answer's

    def sent(self, item: Any) -> None:
        from mcp_types import JSONRPCRequest

        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest) and message.method == "tools/list":
            self.waiting[message.id] = (message.params or {}).get("cursor")

    def received(self, item: Any) -> Any:
        """`item` as the SDK should read it: a tools/list answer without the tools it would reject."""
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCError, JSONRPCResponse

        message = getattr(item, "message", None)
        if not isinstance(message, (JSONRPCResponse, JSONRPCError)) or message.id not in self.waiting:
            return item
        cursor = self.waiting.pop(message.id)
        if isinstance(message, JSONRPCError):
            return item
        result, self.rejected[cursor] = screened(message.result, self.version or HANDSHAKE_VERSION)
        if not self.rejected[cursor]:
            return item
        return SessionMessage(message.model_copy(update={"result": result}), item.metadata)

    def writes(self, stream: Any) -> _NotedWrites:
        """`stream` (the transport's write stream) with each message shown to this screen first."""
        return _NotedWrites(stream, self.sent)


class _NotedWrites:
    """A write stream that shows each message to `note` before sending it."""

    def __init__(self, stream: Any, note: Callable[[Any], None]) -> None:
        self.stream = stream
        self.note = note

    async def send(self, item: Any) -> None:
        self.note(item)
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _NotedWrites:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self.stream.__aexit__(*exc)  # type: ignore[no-any-return]


def screened(result: dict[str, Any], version: str) -> tuple[dict[str, Any], list[Rejected]]:
    """(`result` without the tools the SDK would reject, those tools with the reason)."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return result, []  # not a tool listing the SDK could read at all: its own error says so
    problems: dict[int, str] = {}
    for error in _errors(result, version):
        loc = error["loc"]
        if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int):
            where = ".".join(str(part) for part in loc[2:])
            problems.setdefault(loc[1], f"{where}: {error['msg']}" if where else error["msg"])
    if not problems:
        return result, []
    kept = [tool for i, tool in enumerate(tools) if i not in problems]
    return {**result, "tools": kept}, [Rejected(tools[i], problems[i]) for i in sorted(problems)]


def _errors(result: dict[str, Any], version: str) -> list[Any]:
    """What the SDK finds wrong with a tools/list result: its per-version check, then its model's."""
    import pydantic
    from mcp_types import ListToolsResult, methods

    errors: list[Any] = []
    try:
        methods.validate_server_result("tools/list", version, result)
    except pydantic.ValidationError as e:
        errors.extend(e.errors())
    except (KeyError, ValueError):
        pass  # a version the SDK has no check for: it skips the check too
    try:
        ListToolsResult.model_validate(result, by_name=False)
    except pydantic.ValidationError as e:
        errors.extend(e.errors())
    return errors
