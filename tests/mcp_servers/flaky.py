"""A server for the fault cases: it dies in the middle of a call, takes its time, reports progress,
notices cancellation, sends log messages, changes its tool list; with FLAKY_JUNK set it writes a line
that is not an MCP message on its stdout first."""

import os
import sys
import time
import warnings

import anyio
from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")  # ctx.info() & co. are deprecated in 2026-07-28; we still test them
server = MCPServer("flaky")
if os.environ.get("FLAKY_JUNK"):  # before the handshake: a line that is not an MCP message
    os.write(1, b"flaky: hello from a print() that should have gone to stderr\n")


def say(text: str) -> None:
    print(f"flaky: {text}", file=sys.stderr, flush=True)


@server.tool()
def crash() -> str:
    """Exit the server process while the call is running."""
    say("exiting in the middle of a call")
    os._exit(3)


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep, then say so."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def wait(seconds: float) -> str:
    """Wait (without blocking the server); says on stderr when the client cancels it."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        say(f"cancelled after a request to wait {seconds:g} s")
        raise
    return f"waited {seconds}"


@server.tool()
async def work(steps: int, interval: float, ctx: Context, then_wait: float = 0) -> str:
    """Report progress every `interval` seconds for `steps` steps (then wait `then_wait` seconds)."""
    for step in range(1, steps + 1):
        await anyio.sleep(interval)
        await ctx.report_progress(step, steps, f"step {step}")
    await anyio.sleep(then_wait)
    return f"worked {steps} steps"


@server.tool()
async def chatter(ctx: Context) -> str:
    """Send log messages: an info, two warnings and an error."""
    await ctx.info("starting the chatter")
    await ctx.warning("the disk is almost full")
    await ctx.warning("the disk is still almost full")
    await ctx.error("the cache could not be written")
    return "chattered"


@server.tool()
def whoami(ctx: Context) -> str:
    """The name and version the client introduced itself with."""
    params = ctx.request_context.session.client_params
    info = params.client_info if params else None
    return f"{info.name} {info.version}" if info else "(the client did not say)"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `extra` and tell the client its tools changed."""

    def extra(x: int) -> int:
        """Return x + 1."""
        return x + 1

    server.add_tool(extra)
    await ctx.notify_tools_changed()
    return "added extra"


if __name__ == "__main__":
    server.run()
