"""Opening one MCP server with the official SDK (stdio or streamable HTTP) and describing failures.

Everything here is async and runs on the manager's event-loop thread.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .. import __version__
from ..config import McpServerConfig
from ..config.statedir import user_state_dir
from ..safety.sandbox.paths import host_search_path
from .logs import CLIENT_MARK
from .screen import Rejected, ToolScreen

MAX_PAGES = 50  # pages of a listing; a server that paginates forever cannot hang start-up
HTTP_TIMEOUT = 30.0  # connect/write seconds for HTTP servers (reads are bounded by our call timeout)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class StartError(Exception):
    """The server cannot even be launched as configured; the message is for the user."""


def target(config: McpServerConfig) -> str:
    """`stdio: npx -y server` or `http: https://host/mcp`, for status lines."""
    if config.command is not None:
        return "stdio: " + shlex.join([config.command, *config.args])
    return f"http: {config.url}"


def expand(value: str, where: str, environ: Any = None) -> str:
    """Replace `${VAR}` with our environment's value (secrets stay out of config.json)."""
    environ = os.environ if environ is None else environ

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise StartError(f"environment variable {name} is not set (used in {where})")
        return str(environ[name])

    return _VAR.sub(lookup, value)


@dataclass
class Hooks:
    """What the loop thread wants to hear from one connection (all called on the loop thread)."""

    on_message: Callable[[Any], Awaitable[None]]  # server notifications and transport errors
    on_log: Callable[[Any], Awaitable[None]]  # notifications/message (LoggingMessageNotificationParams)
    on_eof: Callable[[], None]  # the server's stream ended: its process exited or it hung up
    screen: ToolScreen  # the connection's tool listings, screened before the SDK reads them


async def open_client(
    stack: AsyncExitStack, key: str, config: McpServerConfig, workspace: Path, errlog: TextIO, hooks: Hooks
) -> Any:
    """An entered `mcp.Client` for the server; its resources are released when `stack` closes."""
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp_types import Implementation

    options: dict[str, Any] = {
        "client_info": Implementation(name="vllm-bot", version=__version__),
        "message_handler": hooks.on_message,
        "logging_callback": hooks.on_log,
        "log_level": "info",  # 2026-07-28 servers send log messages only to requests that ask
    }
    if config.command is not None:
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            # and PATH without relative entries or ones in the workspace (`./node_modules/.bin`)
            env={"PATH": host_search_path([workspace])}
            | {k: expand(v, f"{key}.env.{k}") for k, v in config.env.items()},
            # the user's own servers start in our state directory, not in the workspace: there
            # `npx PKG` or `python -m MODULE` would find a copy the model wrote (the project's
            # servers name the workspace as their `cwd`: config/layers.py)
            cwd=str(workspace / config.cwd) if config.cwd else str(user_state_dir()),
        )
        # The server's stderr goes to a log file, not over our terminal; failures quote its tail.
        transport = watched(stdio_client(params, errlog=errlog), hooks)
    else:
        transport = await _http_transport(stack, key, config, hooks)
    client = await stack.enter_async_context(Client(transport, **options))
    hooks.screen.version = client.protocol_version
    return client


async def _http_transport(stack: AsyncExitStack, key: str, config: McpServerConfig, hooks: Hooks) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {k: expand(v, f"{key}.headers.{k}") for k, v in config.headers.items()}
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(HTTP_TIMEOUT, read=None))
    )
    assert config.url is not None  # McpServerConfig.check: exactly one of command / url
    return watched(streamable_http_client(config.url, http_client=http), hooks)


@asynccontextmanager
async def watched(transport: Any, hooks: Hooks) -> AsyncIterator[tuple[Any, Any]]:
    """`transport` with its streams relayed through the connection's screen, and the end of the
    server's stream noticed even while no request is waiting (a server killed while idle)."""
    import anyio

    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(hooks.screen.received(item))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # our side closed first: a shutdown, not the server leaving
            hooks.on_eof()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                yield receive, hooks.screen.writes(write)
            finally:
                group.cancel_scope.cancel()


async def list_all_tools(
    client: Any, screen: ToolScreen, *, fresh: bool = False
) -> tuple[list[dict[str, Any]], list[Rejected]]:
    """(every tool the server lists that the SDK can read, in MCP wire form: name, description,
    inputSchema, annotations; the ones the screen took out). `fresh`: past the SDK's response cache
    (after the server said its tools changed)."""
    mode = "refresh" if fresh else "use"
    rejected: list[Rejected] = []

    async def fetch(cursor: str | None) -> Any:
        page = await client.list_tools(cursor=cursor, cache_mode=mode)
        # The screen's last answer for this page: the one just read, or the one the SDK cached.
        rejected.extend(screen.rejected.get(cursor, []))
        return page

    return await _pages(fetch, "tools"), rejected


async def list_all_prompts(client: Any, *, fresh: bool = False) -> list[dict[str, Any]]:
    mode = "refresh" if fresh else "use"
    return await _pages(lambda cursor: client.list_prompts(cursor=cursor, cache_mode=mode), "prompts")


async def list_all_resources(client: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(resources, resource templates) in wire form; a server without templates has none."""
    from mcp import MCPError

    resources = await _pages(lambda c: client.list_resources(cursor=c, cache_mode="refresh"), "resources")
    try:
        templates = await _pages(
            lambda c: client.list_resource_templates(cursor=c, cache_mode="refresh"), "resource_templates"
        )
    except MCPError:
        templates = []
    return resources, templates


async def offers_resources(client: Any, log: Any) -> bool:
    """Whether a server that declares resources has any, or a URI template: the resource tools are
    offered only for those (time and git servers declare the capability and list nothing). One page
    each is enough to know. A server that refuses to list them offers none."""
    import pydantic
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    for fetch, attribute in (
        (client.list_resources, "resources"),
        (client.list_resource_templates, "resource_templates"),
    ):
        try:
            page = await fetch(cache_mode="refresh")
        except (MCPError, pydantic.ValidationError) as e:
            if isinstance(e, MCPError) and e.code == CONNECTION_CLOSED:
                raise
            log.write(CLIENT_MARK, f"listing {attribute} failed: {type(e).__name__}: {e}")
            continue
        if getattr(page, attribute):
            return True
    return False


async def _pages(fetch: Callable[[str | None], Awaitable[Any]], attribute: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(
            t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in getattr(page, attribute)
        )
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def describe_failure(exc: BaseException, config: McpServerConfig) -> str:
    """One phrase for the user: why the server could not start or stopped answering."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    exc = leaf(exc)
    if isinstance(exc, StartError):
        return str(exc)
    if isinstance(exc, FileNotFoundError) and config.command is not None:
        return f"command not found: {config.command}"
    if isinstance(exc, PermissionError) and config.command is not None:
        return f"command is not executable: {config.command}"
    if isinstance(exc, OSError) and config.command is not None:
        return f"cannot run {config.command}: {exc.strerror or exc}"
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server process exited" if config.command else "the server closed the connection"
    if isinstance(exc, MCPError):
        return f"the server answered with an error: {exc.message}"
    import httpx2  # the SDK's HTTP client
    import pydantic

    if isinstance(exc, httpx2.HTTPError):
        return f"HTTP error talking to {config.url}: {str(exc) or type(exc).__name__}"
    if isinstance(exc, pydantic.ValidationError):  # one line, not pydantic's many
        errors = exc.errors()
        where = ".".join(str(part) for part in errors[0]["loc"]) if errors else ""
        message = errors[0]["msg"] if errors else str(exc)
        return f"its answer is not valid MCP ({where + ': ' if where else ''}{message})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
