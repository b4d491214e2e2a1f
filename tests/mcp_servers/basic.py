"""Two tools (one returns text, one fails), a resource, a resource template and a prompt.
`python basic.py [--http PORT]`."""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("basic")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text unchanged, prefixed with "echo: "."""
    return f"echo: {text}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"cannot do that: {reason}")


@server.resource("note://greeting", mime_type="text/plain", description="A short greeting.")
def greeting() -> str:
    return "hello from basic"


@server.resource("note://numbers/{n}", mime_type="text/plain", description="The number n, spelled out.")
def number(n: str) -> str:
    return f"number {n}"


@server.prompt(description="Ask for a review of one file.")
def review(path: str, focus: str = "bugs") -> str:
    return f"Review {path} and look for {focus}."


if len(sys.argv) == 3 and sys.argv[1] == "--http":

    @server.tool()
    def authorization(ctx: Context) -> str:
        """The Authorization header this HTTP request carried."""
        return (ctx.headers or {}).get("authorization", "(none)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
