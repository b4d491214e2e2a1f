"""A server that dies in the middle of a call, and one tool that takes its time."""

import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("flaky")


@server.tool()
def crash() -> str:
    """Exit the server process while the call is running."""
    print("flaky: exiting in the middle of a call", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep, then say so."""
    time.sleep(seconds)
    return f"slept {seconds}"


if __name__ == "__main__":
    server.run()
