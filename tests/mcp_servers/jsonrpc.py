"""A raw JSON-RPC MCP server over stdio, written without the SDK, so it can say what no SDK server
would: a tool listing with a malformed tool in it, two tools with one name.

`python jsonrpc.py SPEC.json`, where the file holds {"tools": [...]} exactly as they go on the wire,
and optionally "capabilities" (the initialize result's) and "resources". It speaks the 2025-11-25
handshake (`server/discover` gets "method not found", as from any server before 2026-07-28).
A tool call answers which listed tool ran: the first one with the name called."""

import json
import sys

VERSION = "2025-11-25"


def answer(spec, method, params):
    """(result, error) for one request."""
    if method == "initialize":
        capabilities = spec.get("capabilities", {"tools": {}})
        info = {"name": "jsonrpc", "version": "1"}
        return {"protocolVersion": VERSION, "capabilities": capabilities, "serverInfo": info}, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        return {"tools": spec["tools"]}, None
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments") or {}
        index = next((i for i, t in enumerate(spec["tools"]) if t.get("name") == name), None)
        text = f"{name} (listed at {index}) called with {json.dumps(arguments, sort_keys=True)}"
        return {"content": [{"type": "text", "text": text}]}, None
    if method == "resources/list":
        return {"resources": spec.get("resources", [])}, None
    if method == "resources/templates/list":
        return {"resourceTemplates": []}, None
    return None, {"code": -32601, "message": f"Method not found: {method}"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or an answer to something we never ask
        result, error = answer(spec, message["method"], message.get("params") or {})
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        reply.update({"error": error} if error else {"result": result})
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
