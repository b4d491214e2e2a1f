"""`/doctor` in an interactive session: the same checks for the session's server and model; the
session then follows the verdict (native tool calls on or off)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ...doctor import Debug, run_checks
from ...doctor.sandbox_check import sandbox_check
from .registry import command


@command("doctor", "Check the server: tool calls, parsers, reasoning, usage; suggest vllm serve flags")
def _doctor(session: Any, arg: str) -> None:
    config = dataclasses.replace(
        session.config, vllm=dataclasses.replace(session.config.vllm, model=session.client.model)
    )
    local = lambda: [sandbox_check(config, session.workspace)]  # noqa: E731
    # With DEBUG on (or /debug), the probes go into the session's own trace, as its requests do.
    debug = Debug(session.trace) if getattr(session, "trace", None) is not None else None
    report = run_checks(config, session.say, mcp_rows(session), local, debug)
    follow_verdict(session, report.mode)


def mcp_rows(session: Any) -> Callable[[], list[dict[str, Any]]] | None:
    """The session's own MCP servers as they are now (no second connection)."""
    from ...mcp.report import server_row

    manager = getattr(getattr(session, "mcp", None), "manager", None)
    if manager is None or not manager.servers:
        return None
    return lambda: [server_row(s) for s in manager.snapshot()]


def follow_verdict(session: Any, mode: str | None) -> None:
    """Switch the session's tool-call mode to what the doctor found (never against the config)."""
    client = session.client
    if mode == "native" and not client.function_calling and session.config.vllm.enable_function_calling:
        client.function_calling = True
        session.say("Native function calling is on again for this session.")
    elif mode == "text" and client.function_calling:
        client.function_calling = False
        session.say("Switched this session to the text protocol.")
