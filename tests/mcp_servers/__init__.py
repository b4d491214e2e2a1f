"""Small MCP servers written with the official SDK, started over stdio (or HTTP) by the tests."""
