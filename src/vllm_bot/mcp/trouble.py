"""What the model is told when an MCP request does not end with a result: the server rejected it,
the connection went (and whether a restart is coming), it timed out, or the user cancelled it."""

from __future__ import annotations

from ..config import McpConfig
from .connection import describe_failure, leaf
from .invocation import TimedOut
from .schema import McpTool
from .state import ServerState


def call_failure(
    state: ServerState, tool: McpTool | None, exc: BaseException, will_restart: bool
) -> tuple[str, str | None]:
    """(the message, the reason the connection is gone or None when it is not)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    error = leaf(exc)
    what = f"{tool.name} on MCP server {state.name}" if tool else f"MCP server {state.name}"
    if isinstance(error, MCPError) and error.code != CONNECTION_CLOSED:
        fix = " Check the arguments against the tool's parameters." if tool else ""
        return f"MCP server {state.name} rejected the request: {error.message}.{fix}", None
    reason = describe_failure(error, state.config)
    if not isinstance(error, MCPError):
        import httpx2  # the SDK's HTTP client: a broken connection to an HTTP server

        if not isinstance(error, httpx2.TransportError):
            return f"{what} failed: {reason}.", None
    doing = f" while running {tool.name}" if tool else ""
    if will_restart:
        next_step = (
            "vllm-bot is restarting it: its tools should work again in a few seconds. Retry once if "
            "the call is worth it, or continue without them."
        )
    else:
        next_step = (
            "It was restarted once already and stopped again, so it stays stopped unless the user "
            f"restarts it (/mcp restart {state.name}); continue without its tools."
        )
    return f"MCP server {state.name} stopped{doing} ({reason}). {next_step}", reason


def timed_out(e: TimedOut, state: ServerState, seconds: float, config: McpConfig) -> str:
    """Why a request with a timeout of `seconds` was cut off, in the same words for the user's notice
    and the model's result."""
    if e.capped:
        return f"kept reporting progress past mcp.max_call_time ({max(config.max_call_time, seconds):g} s)"
    setting = f"mcp.servers.{state.name}.timeout" if state.config.timeout else "mcp.timeout"
    if e.progressed:
        return f"reported progress, then nothing for {seconds:g} s ({setting})"
    return f"did not answer within {seconds:g} s ({setting})"


def timeout_message(why: str, tool: McpTool | None = None) -> str:
    """What the model is told about a request cut off for `why` (a `timed_out` phrase)."""
    what = f"{tool.name} on MCP server {tool.server}" if tool else "the request"
    advice = " Try a smaller request, or continue without this tool." if tool else ""
    return f"{what} {why} and was cancelled.{advice}"


def cancelled_message(tool: McpTool) -> str:
    return (
        f"Interrupted by the user before it finished: {tool.name} on MCP server {tool.server} was "
        "cancelled (the server was told to stop)."
    )
