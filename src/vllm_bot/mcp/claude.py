"""Claude-style MCP settings: a `.mcp.json` (`{"mcpServers": {NAME: {"type": "stdio" | "http", ...}}}`)
read as `mcp.servers` entries, and the message that says how to move a `mcpServers` key of our own
config over to `mcp.servers`.

`${VAR}` and `${VAR:-default}` work as Claude Code reads them: in `command`, `args` and `url` they are
replaced when the file is read (a server whose variable is not set is skipped with a warning); in
`env` and `headers` `${VAR}` stays for the server's start (mcp/connection.py), only the default of an
unset `${VAR:-default}` is filled in here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

MCP_JSON = ".mcp.json"
CLAUDE_KEY = "mcpServers"
ENTRY_KEYS = ("type", "command", "args", "env", "url", "headers")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpJsonError(Exception):
    """A malformed entry; the message names the key and the file."""


class Unset(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _expand(value: str, env: Mapping[str, str] | None, keep_unset: bool) -> str:
    """`value` with its variables filled in from `env` (None: as written)."""

    def lookup(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if env is None:
            return match.group(0)
        if name in env:
            return match.group(0) if keep_unset else env[name]
        if default is not None:
            return default
        if keep_unset:
            return match.group(0)  # mcp/connection.py names the missing variable when it starts
        raise Unset(name)

    return _VAR.sub(lookup, value)


_SHAPES = {
    "command": "a string",
    "url": "a string",
    "args": "a list of strings",
    "env": "an object of strings",
}


def _check_shape(value: Any, key: str, where: str, source: str) -> None:
    if key in ("command", "url"):
        ok = isinstance(value, str)
    elif key == "args":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if not ok:
        shape = _SHAPES.get(key, "an object of strings")
        raise McpJsonError(f"{source}: '{where}.{key}' must be {shape}, got {json.dumps(value)[:60]}")


def entry_to_server(name: str, entry: Any, source: str, env: Mapping[str, str] | None) -> dict[str, Any]:
    """One `mcpServers` entry as an `mcp.servers` entry (`env` None: variables kept as written).
    Raises McpJsonError (bad entry) or Unset (a variable in command/args/url is not set)."""
    where = f"{CLAUDE_KEY}.{name}"
    if not isinstance(entry, dict):
        raise McpJsonError(f"{source}: '{where}' must be an object")
    for key in entry:
        if key not in ENTRY_KEYS:
            raise McpJsonError(f"{source}: unknown key '{where}.{key}' (known: {', '.join(ENTRY_KEYS)})")
    if "type" not in entry and "command" not in entry and "url" not in entry:
        raise McpJsonError(f"{source}: '{where}' needs 'command' (type stdio) or 'url' (type http)")
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    for key in ("command", "args", "env", "url", "headers"):
        if key in entry:
            _check_shape(entry[key], key, where, source)
    wanted = {"stdio": ("command", ("args", "env")), "http": ("url", ("headers",))}.get(kind)
    if wanted is None:
        raise McpJsonError(
            f'{source}: \'{where}.type\' is {json.dumps(kind)}; vllm-bot speaks "stdio" and "http" '
            "(streamable HTTP)"
        )
    needed, optional = wanted
    if not isinstance(entry.get(needed), str):
        raise McpJsonError(f"{source}: '{where}' (type {kind}) needs '{needed}'")
    stray = [k for k in ("command", "args", "env", "url", "headers") if k in entry]
    stray = [k for k in stray if k != needed and k not in optional]
    if stray:
        raise McpJsonError(f"{source}: '{where}.{stray[0]}' does not go with type {kind}")
    server: dict[str, Any] = {needed: _expand(entry[needed], env, keep_unset=False)}
    if kind == "stdio" and "args" in entry:
        server["args"] = [_expand(a, env, keep_unset=False) for a in entry["args"]]
    for key in ("env", "headers"):
        if key in entry:
            server[key] = {k: _expand(v, env, keep_unset=True) for k, v in entry[key].items()}
    return server


def servers_from(
    data: Any, source: str, env: Mapping[str, str]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], list[str]]:
    """A `.mcp.json` document -> ({name: mcp.servers entry}, {name: the raw entry}, warnings)."""
    if not isinstance(data, dict):
        raise McpJsonError(f"{source}: the top level must be a JSON object")
    unknown = [k for k in data if k != CLAUDE_KEY]
    if unknown:
        raise McpJsonError(f"{source}: unknown key '{unknown[0]}' (a .mcp.json holds '{CLAUDE_KEY}')")
    entries = data.get(CLAUDE_KEY, {})
    if not isinstance(entries, dict):
        raise McpJsonError(f"{source}: '{CLAUDE_KEY}' must be an object of servers by name")
    servers: dict[str, dict[str, Any]] = {}
    warnings = []
    for name, entry in entries.items():
        try:
            servers[name] = entry_to_server(name, entry, source, env)
        except Unset as e:
            warnings.append(f"{source}: MCP server {name} skipped: environment variable {e.name} is not set")
    return servers, dict(entries), warnings


def move_message(data: dict[str, Any], source: str) -> str:
    """The error for a `mcpServers` key in our config: the exact `mcp.servers` to write instead."""
    head = (
        f"{source}: unknown key '{CLAUDE_KEY}': that is the Claude Code / .mcp.json name. vllm-bot reads "
        "MCP servers from 'mcp.servers'"
    )
    try:
        entries = data[CLAUDE_KEY].items()
        servers = {name: entry_to_server(name, e, source, None) for name, e in entries}
    except (McpJsonError, Unset, AttributeError) as e:
        return f"{head} (each entry: command, args, env or url, headers; no 'type'). {e}"
    converted = json.dumps({"mcp": {"servers": servers}}, indent=2)
    where = [v for s in servers.values() for k, v in s.items() if k in ("command", "args", "url")]
    variables = _VAR.search(json.dumps(where)) is not None
    note = " ('${VAR}' in command, args and url is filled in only in a .mcp.json: write the values)"
    return (
        f"{head}. Replace '{CLAUDE_KEY}' with this (the same servers, without 'type')"
        f"{note if variables else ''}:\n{converted}\n"
        f"or move the '{CLAUDE_KEY}' object as it is into a {MCP_JSON} in the workspace, which vllm-bot "
        "reads (see docs/mcp.md)."
    )
