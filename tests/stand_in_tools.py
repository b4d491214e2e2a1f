"""A minimal executor for write and exec (the real one lives in the `tools` package, on another
branch): real file writes and real shell commands, enough to drive the loop end to end."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from vllm_bot.calls import ToolCall, ToolResult, error_result, text_result
from vllm_bot.tools.definitions import TOOL_DEFINITIONS


class StandInTools:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.definitions = TOOL_DEFINITIONS

    def execute_call(self, call: ToolCall, **_: Any) -> ToolResult:
        args = call.arguments
        if call.name == "write":
            path = self.workspace / args["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"])
            return text_result(call, f"wrote {args['path']}")
        if call.name == "exec":
            done = subprocess.run(
                args["command"], shell=True, cwd=self.workspace, capture_output=True, text=True
            )
            return text_result(call, f"exit {done.returncode}\n{done.stdout}{done.stderr}")
        return error_result(call, f"{call.name} is not available in this test")

    def preview(self, name: str, args: dict[str, Any]) -> str | None:
        return None

    def prefetch(self, calls: list[ToolCall]) -> None:
        pass


def agent_session(
    ws: Path,
    base_url: str,
    *,
    approval: str = "full-auto",
    resume: str | None = None,
    latest: bool = False,
    auto_commit: bool = False,
    checkpoints: bool = True,
    emit: Any = None,
) -> Any:
    """What Session wires together, minus the tools package: a real client, the real approval gate
    and loop, history wired in as session.py does. Returns a session-like namespace (slash commands
    accept it)."""
    from types import SimpleNamespace

    from vllm_bot.agent.loop import Agent
    from vllm_bot.config import Config
    from vllm_bot.config.statedir import workspace_state_dir
    from vllm_bot.events import ignore
    from vllm_bot.history.store import History, resumed_message
    from vllm_bot.model.client import ModelClient
    from vllm_bot.safety.approval import ApprovalGate
    from vllm_bot.ui import fanout
    from vllm_bot.ui.recap import plain_lines

    config = Config()
    config.vllm.base_url = base_url
    config.vllm.timeout = 20
    config.agent.approval = approval  # type: ignore[assignment]
    config.git.auto_commit = auto_commit
    config.git.checkpoints = checkpoints
    client = ModelClient(config.vllm, system_prompt=lambda text_mode, definitions: "SYSTEM")
    client.resolve_model()
    said: list[str] = []
    session = SimpleNamespace(
        config=config, workspace=ws, state_dir=workspace_state_dir(ws), client=client, said=said
    )
    session.say = said.append
    session.front = SimpleNamespace(recap=lambda parts: said.extend(plain_lines(parts)))
    session.consumers = [emit or ignore]
    session.emit = fanout(session.consumers)
    session.add_consumer = session.consumers.append
    gate = ApprovalGate(approval, None)
    session.agent = Agent(client, StandInTools(ws), config.agent, session.emit, gate=gate)
    session.history = History(config, ws, session.state_dir, session.agent.conversation, session.emit, client)

    def resume_session(wanted: str | None) -> None:
        loaded = session.history.resume(wanted)
        client.function_calling = client.function_calling and loaded.function_calling is not False
        session.agent.usage = loaded.usage()
        said.append(resumed_message(loaded))

    session.resume = resume_session
    if latest or resume:
        resume_session(None if latest else resume)
    gate.before_change = session.history.before_change
    session.add_consumer(session.history.on_event)
    return session
