"""One editor session: our Session for the editor's folder, its prompts, modes and models.

Everything here runs on the worker (main) thread. The workspace is the folder the editor names
(`cwd`), with the same rules as a headless run: a home-directory workspace needs --allow-home, and a
project's own safety settings wait for trust (--trust-project or an earlier yes in the terminal), since
nobody can be asked. The editor's MCP servers join ours as one more config layer ("editor"), checked by
the same rules; a name our config already uses keeps ours.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..agent.interrupts import close_open_calls
from ..cliargs import UsageError, home_workspace, overrides_from, trust_policy
from ..config import Config, ConfigError, load_config
from ..config.layers import apply_layer
from ..errors import UserFacingError
from ..events import Notice
from ..session import Session
from . import options
from .front import AcpFront, Channel
from .worker import Worker

STOP_REASONS = {  # the task's end -> ACP stop reason; any other limit: end_turn, with its message shown
    "done": "end_turn",
    "max_iterations": "max_turn_requests",
    "truncated": "max_tokens",
    "interrupted": "cancelled",
}


def load_workspace_config(args: argparse.Namespace, cwd: str) -> tuple[Path, Config]:
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise UsageError(f"cwd must be an absolute path to a directory, not {cwd!r}")
    workspace = Path(cwd).resolve()
    home_workspace(workspace, allowed=args.allow_home)
    config = load_config(
        args.config, overrides=overrides_from(args), workspace=workspace, trust=trust_policy(args)
    )
    return workspace, config


def join_editor_servers(config: Config, servers: list[Any]) -> list[str]:
    """Add the editor's MCP servers (stdio and HTTP) to `config`; warnings for those left out."""
    warnings = []
    for server in servers:
        name = server.name
        if name in config.mcp.servers:
            warnings.append(
                f"the editor's MCP server '{name}' has the name of one in your config; yours is used"
            )
            continue
        kind = getattr(server, "type", None)
        if kind == "http":
            entry: dict[str, Any] = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
        elif kind is None and hasattr(server, "command"):
            entry = {
                "command": server.command,
                "args": list(server.args),
                "env": {e.name: e.value for e in server.env},
            }
            if getattr(server, "cwd", None):
                entry["cwd"] = server.cwd
        else:
            warnings.append(
                f"the editor's MCP server '{name}' speaks {kind}; vLLM Bot starts stdio and HTTP ones"
            )
            continue
        try:
            apply_layer(config, {"mcp": {"servers": {name: entry}}}, "the editor's session/new", "editor")
        except ConfigError as e:
            warnings.append(f"the editor's MCP server '{name}' was not started: {e}")
    return warnings


class AcpSession:
    """Our Session with its ACP front end; built by `open` on the worker thread."""

    def __init__(self, session: Session, front: AcpFront) -> None:
        self.session = session
        self.front = front
        self.id = front.session_id
        self.cancelled = False  # cancelled before its prompt started

    @classmethod
    def open(
        cls,
        args: argparse.Namespace,
        channel: Channel,
        cwd: str,
        mcp_servers: list[Any],
        resume: str | None = None,
    ) -> AcpSession:
        """A new session in `cwd` (or the saved one `resume` names: our --resume), connected (or
        offline: the first prompt says why and tries again)."""
        workspace, config = load_workspace_config(args, cwd)
        warnings = join_editor_servers(config, mcp_servers)
        front = AcpFront(channel, str(workspace))
        session = Session(config, workspace, headless=True, front=front, resume=resume)
        session.gate.confirm = front.confirm  # the editor answers the approval questions
        session.workflow.presenter.choose = front.choose_plan  # and plan mode's
        front.attach(session)
        try:
            session.start(offline_ok=True)
        except UserFacingError:
            session.close()
            raise
        for warning in warnings:
            session.emit(Notice("warning", warning))
        front.shown = options.shown(session)
        return cls(session, front)

    def prompt(self, worker: Worker, text: str) -> str:
        """Run `text` as one task; the ACP stop reason. A user-facing error (server unreachable)
        propagates, with the conversation kept consistent for the next prompt."""
        agent = self.session.agent
        if self.cancelled:
            self.cancelled = False
            return "cancelled"
        self.front.begin_turn()
        try:
            with worker.task(self, agent.cancel):
                outcome = self._run(text)
        except KeyboardInterrupt:  # Ctrl-C (session/cancel) outside the loop's own handling
            self._close_calls()
            return "cancelled"
        except UserFacingError:
            self._close_calls()
            raise
        finally:
            self.front.end_turn()
        if self.front.ended_by_user:
            return "end_turn"
        return STOP_REASONS.get(outcome.reason, "end_turn")

    def _run(self, text: str) -> Any:
        session = self.session
        session.reconnect()  # after an offline start: try the server again (raises while it is down)
        session.mcp.sync(wait=True)
        session.refresh_instructions()
        return session.agent.run(session.task_message(text))

    def _close_calls(self) -> None:
        close_open_calls(self.session.agent.conversation)
        self.front.send(self.front.updates.close_open_calls())

    def set_mode(self, mode: str) -> None:
        """The editor's choice of mode (worker thread: plan mode changes the toolbox)."""
        options.check_mode(self.session, mode)
        self.front.shown = (mode, self.session.client.model)  # the editor knows: no update for it
        self.session.workflow.set_mode(mode, "chosen in the editor")

    def set_model(self, name: str) -> None:
        options.set_model(self.session, name)
        self.front.shown = options.shown(self.session)

    def close(self) -> None:
        self.session.close()
