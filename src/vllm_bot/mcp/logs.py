"""One log file per MCP server (`.vllm-bot/mcp/<name>.log`): its stderr, what the SDK says about it,
and the log messages the server sends. None of it reaches the user's terminal; the first warning of
each kind becomes one line for the user.

The SDK logs through the standard `logging` module (`mcp.*` and a logger named `client`); with no
handler configured, Python prints its warnings and tracebacks on stderr, over our UI. While a manager
runs, those loggers write into the log of the server whose task logged (a context variable, which
anyio's tasks inherit from the task that started them).
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

SDK_LOGGERS = ("mcp", "mcp_types", "client")  # mcp.client.session logs as "client"
WARNING_LEVELS = ("warning", "error", "critical", "alert", "emergency")  # MCP's, shown to the user once
CLIENT_MARK = "[mcp-client]"  # our lines in the log; the stderr tail quoted in errors skips them
SERVER_MARK = "[server-log]"

Warn = Callable[[str, str], None]  # (kind, one-line message) -> shown once per server and kind


class ServerLog:
    """The open log of one server connection; every write is a whole line, flushed."""

    def __init__(self, file: TextIO, path: Path | None, warn: Warn) -> None:
        self.file = file
        self.path = path
        self.warn = warn
        self.muted = False  # set while the connection is taken down: warnings then only go to the file
        self._lock = threading.Lock()

    def write(self, mark: str, text: str) -> None:
        with self._lock:
            if self.file.closed:
                return
            for line in text.splitlines() or [""]:
                self.file.write(f"{mark} {line}\n")
            self.file.flush()

    def server_message(self, level: str, logger: str | None, data: Any) -> None:
        """A `notifications/message` from the server: logged; the first warning or worse shown."""
        text = data if isinstance(data, str) else repr(data)
        self.write(SERVER_MARK, f"{level}{f' {logger}' if logger else ''}: {text}")
        if level in WARNING_LEVELS and not self.muted:
            first = (text.strip().splitlines() or [""])[0][:200]
            self.warn("server-log", f"it logged {'an' if level[0] in 'aeiou' else 'a'} {level}: {first}")

    def close(self) -> None:
        with self._lock:
            self.file.close()


def open_log(log_dir: Path | None, filename: str, warn: Warn, *, fresh: bool) -> tuple[ServerLog, str | None]:
    """The log for one connection (appended to after a restart, so the crash stays readable), or a
    log to the null device and the reason when the directory cannot be written."""
    if log_dir is not None:
        path = log_dir / filename
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            if fresh:
                path.write_text("", encoding="utf-8")
            # Append mode: the server's stderr shares this file description, so neither overwrites.
            file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by ServerLog.close)
        except OSError as e:
            null = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
            return ServerLog(null, None, warn), f"no log file ({e}); its stderr is dropped"
        return ServerLog(file, path, warn), None
    return ServerLog(open(os.devnull, "w", encoding="utf-8"), None, warn), None


def stderr_tail(path: Path | None, lines: int = 3) -> str:
    """ "; its stderr ends: ..." with the last lines the server itself wrote, if any."""
    if path is None or not path.is_file():
        return ""
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 4000))
        text = f.read().decode("utf-8", "replace")
    own = (CLIENT_MARK, SERVER_MARK)
    last = [s.strip() for s in text.splitlines() if s.strip() and not s.startswith(own)][-lines:]
    return f"; its stderr ends: {' | '.join(last)[:300]}" if last else ""


def has_content(path: Path | None) -> bool:
    try:
        return path is not None and path.stat().st_size > 0
    except OSError:
        return False


# -- the SDK's loggers --------------------------------------------------------------------------------

CURRENT: contextvars.ContextVar[ServerLog | None] = contextvars.ContextVar("vllm_bot_mcp_log", default=None)


@contextmanager
def current(log: ServerLog) -> Iterator[None]:
    """Inside: what the SDK logs in this task (and the tasks it starts) goes to `log`."""
    token = CURRENT.set(log)
    try:
        yield
    finally:
        CURRENT.reset(token)


class _ToServerLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        log = CURRENT.get()
        if log is None:
            return  # no server's task logged it (a teardown detail): nothing to tie it to
        try:
            log.write(CLIENT_MARK, f"{record.levelname} {record.name}: {self.format(record)}")
        except (OSError, ValueError):
            return
        if record.levelno >= logging.WARNING and not log.muted:
            log.warn("sdk", _summary(record))


def _summary(record: logging.LogRecord) -> str:
    message = record.getMessage()
    if "parse JSONRPC message" in message:
        return "it wrote a line on stdout that is not an MCP message (ignored)"
    first = (message.strip().splitlines() or [""])[0][:160]
    return f"the MCP client reported: {first}"


_routing = {"users": 0}
_saved: dict[str, bool] = {}
_handler = _ToServerLog()
_lock = threading.Lock()


def route_sdk_logs() -> None:
    """Send the SDK's loggers to the servers' logs (counted: each call needs one `unroute_sdk_logs`)."""
    with _lock:
        _routing["users"] += 1
        if _routing["users"] > 1:
            return
        for name in SDK_LOGGERS:
            logger = logging.getLogger(name)
            _saved[name] = logger.propagate
            logger.addHandler(_handler)
            logger.propagate = False


def unroute_sdk_logs() -> None:
    with _lock:
        _routing["users"] -= 1
        if _routing["users"] > 0:
            return
        for name in SDK_LOGGERS:
            logger = logging.getLogger(name)
            logger.removeHandler(_handler)
            logger.propagate = _saved.pop(name, True)
