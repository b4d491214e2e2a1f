"""MCP servers as extra tool sources: config -> connections (official `mcp` SDK) -> tool definitions.

Nothing here imports the SDK at import time; a session without `mcp.servers` never loads it.
"""
