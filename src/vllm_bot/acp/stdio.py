"""The protocol's own stdin and stdout: newline-delimited JSON-RPC 2.0, and nothing else on stdout.

`claim_stdio` moves the editor's pipes to private descriptors before anything else runs: file
descriptor 1 then points at stderr and 0 at /dev/null, so a stray print, a log line or a command's
child process can neither write into the protocol stream nor read the editor's next message.

`LineTransport` is the SDK's message transport over those descriptors. Unlike the SDK's own stdio
transport it answers a line that is not JSON (-32700) or not a JSON-RPC message (-32600) with an
error, as JSON-RPC 2.0 says, instead of dropping it silently.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from typing import Any

log = logging.getLogger("vllm_bot.acp")

MAX_LINE = 50 * 2**20  # one message; the SDK's own limit (images, embedded files)


def claim_stdio() -> tuple[int, int]:
    """(read fd, write fd) of the protocol; fd 0 becomes /dev/null and fd 1 a copy of stderr."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return read_fd, write_fd


def error_message(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def problem(message: Any) -> str | None:
    """Why a decoded line is not a JSON-RPC 2.0 request, notification or response (None: it is one)."""
    if not isinstance(message, dict):
        return "a message is one JSON object (batches are not part of ACP)"
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be "2.0"'
    request_id = message.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (str, int))):
        return 'the "id" member must be a string, a number or null'
    if "method" in message:
        if not isinstance(message["method"], str):
            return 'the "method" member must be a string'
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return 'the "params" member must be an object'
        return None
    if "id" not in message or ("result" not in message and "error" not in message):
        return 'a message needs a "method" (a request) or an "id" with a "result" or "error" (a response)'
    return None


class LineTransport:
    """An `acp` Transport: `receive()` the next valid message (None at end of input), `send()` one."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._write_fd = write_fd
        self._write_lock = threading.Lock()
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        reader = threading.Thread(target=self._read, args=(read_fd, loop), name="acp-stdin", daemon=True)
        reader.start()

    def _read(self, read_fd: int, loop: asyncio.AbstractEventLoop) -> None:
        """A thread: whole lines from the editor, in order; None at end of input. A plain blocking read
        works for every kind of descriptor (pipe, file, terminal), which asyncio's pipes do not."""
        with os.fdopen(read_fd, "rb", buffering=65536) as stream:
            while True:
                line = stream.readline(MAX_LINE + 1)
                if len(line) > MAX_LINE:
                    while line and not line.endswith(b"\n"):  # the rest of the oversized line
                        line = stream.readline(MAX_LINE)
                    line = b"\0too large"
                loop.call_soon_threadsafe(self._lines.put_nowait, line or None)
                if not line:
                    return

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._lines.get()
            if line is None:
                return None
            if not line.strip():
                continue
            if line == b"\0too large":
                await self.send(error_message(-32600, f"Invalid request: a message over {MAX_LINE} bytes"))
                continue
            try:
                message = json.loads(line)
            except ValueError as e:  # UnicodeDecodeError is one too
                log.warning("not JSON: %s", e)
                await self.send(error_message(-32700, f"Parse error: the line is not JSON ({e})"))
                continue
            why = problem(message)
            if why is None:
                return dict(message)
            request_id = message.get("id") if isinstance(message, dict) else None
            valid_id = isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
            await self.send(
                error_message(-32600, f"Invalid request: {why}", request_id if valid_id else None)
            )

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self._write_lock:  # whole lines: the editor parses one message per line
            view = memoryview(data)
            while view:
                view = view[os.write(self._write_fd, view) :]

    async def close(self) -> None:
        with self._write_lock:
            try:
                os.close(self._write_fd)
            except OSError:
                pass
