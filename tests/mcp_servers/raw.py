"""A low-level server that lists awkward tool definitions and returns every kind of content.

Tools whose schemas cannot be sent (a dangling $ref, an array schema, an invalid schema, an empty
name) must be skipped by the client; names with dots or 80 characters must be made valid.
"""

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LONG = "a_really_long_tool_name_" + "x" * 56
OBJECT = {"type": "object", "properties": {"n": {"type": "integer", "title": "N"}}}
TOOLS = [
    types.Tool(name="get.issue", description="Dotted name.", input_schema=OBJECT),
    types.Tool(name="get_issue", description="Underscore name.", input_schema=OBJECT),
    types.Tool(name=LONG, description="A long name.", input_schema=OBJECT),
    types.Tool(
        name="with_defs",
        description="Uses $defs.",
        input_schema={
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"type": "object", "title": "Item", "properties": {"id": {"type": "string"}}}},
        },
    ),
    types.Tool(
        name="dangling",
        description="Bad ref.",
        input_schema={"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}},
    ),
    types.Tool(
        name="invalid_schema",
        description="Type typo.",
        input_schema={"type": "object", "properties": {"x": {"type": "strng"}}},
    ),
    types.Tool(name="", description="No name at all.", input_schema=OBJECT),
    types.Tool(name="kinds", description="Every kind of content.", input_schema=OBJECT),
    types.Tool(name="data", description="Structured content.", input_schema=OBJECT),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    if params.name == "data":
        n = (params.arguments or {}).get("n", 0)
        value = {"n": n, "square": n * n}
        import json

        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(value))], structured_content=value
        )
    if params.name == "kinds":
        return types.CallToolResult(
            content=[
                types.TextContent(text="three blocks follow"),
                types.ImageContent(data="aGVsbG8gd29ybGQ=", mime_type="image/png"),
                types.EmbeddedResource(
                    resource=types.TextResourceContents(
                        uri="file:///notes.txt", text="note text", mime_type="text/plain"
                    )
                ),
                types.ResourceLink(
                    name="report", uri="https://example.com/report.pdf", mime_type="application/pdf"
                ),
            ]
        )
    return types.CallToolResult(
        content=[types.TextContent(text=f"called {params.name} with {params.arguments}")]
    )


server = Server("raw", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
