"""One agent session: builds the client, tools, gate and front ends from config and runs tasks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .approval import Answer, ApprovalGate
from .calls import ToolCall
from .capabilities import CapabilityCache, ModeMemory, configure
from .client import ModelClient
from .config import Config
from .errors import EXIT_OK
from .events import Emit, Notice, SessionStarted
from .history import attach_history
from .loop import Agent
from .mcp.bridge import McpTools
from .prompts import system_prompt
from .slash import UnknownCommand, dispatch
from .slash_core import ExitSession
from .statedir import workspace_state_dir
from .telemetry import for_session
from .toolbox import build_toolbox
from .trace import Trace
from .ui import fanout
from .ui.debuglog import DebugLog
from .ui.plain import PlainUI


class Session:
    emit: Emit
    agent: Agent

    def __init__(
        self,
        config: Config,
        workspace: Path,
        *,
        headless: bool,
        resume: str | None = None,
        latest: bool = False,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.headless = headless
        self.state_dir = workspace_state_dir(workspace)
        self.trace: Trace | None = None
        self._prompts: dict[tuple[bool, tuple[str, ...]], str] = {}
        if config.agent.debug:
            self.trace = Trace.in_state_dir(self.state_dir, secrets=[config.vllm.api_key])
            print(f"[DEBUG] Trace of raw requests and responses: {self.trace.path}", file=sys.stderr)
        self.client = ModelClient(
            config.vllm, system_prompt=self._system_prompt, trace=self.trace, context=config.context
        )
        self.capabilities = CapabilityCache()
        # Telemetry reports through the agent's emit, so the session file records them too.
        self.telemetry = for_session(config.telemetry, self.client, lambda e: self.agent.emit(e))
        consumers: list[Any] = [PlainUI(stream_text=not headless)]
        if config.agent.debug:
            consumers.append(DebugLog())
        consumers += [ModeMemory(self.capabilities, self.client, lambda e: self.emit(e)), self.telemetry]
        self.emit = fanout(consumers)
        self.toolbox = build_toolbox(config, workspace, self.state_dir)
        self.executor = self.toolbox.executor
        self.mcp = McpTools(config, workspace, self.state_dir)
        interactive = not headless and sys.stdin.isatty()
        self.gate = ApprovalGate(
            config.agent.approval,
            self._confirm if interactive else None,
            preview=self.mcp.preview(self.executor.preview),
            sandboxed=self.toolbox.sandboxed,
        )
        self.agent = Agent(self.client, self.executor, config.agent, self.emit, gate=self.gate)
        # Checkpoints before changes, the saved conversation, --continue / --resume.
        self.history = attach_history(self, resume, latest=latest)

    def _system_prompt(self, text_mode: bool, definitions: list[dict[str, Any]]) -> str:
        """Rendered once per (mode, tool set): an unchanged prefix keeps vLLM's prefix cache hitting."""
        key = (text_mode, tuple(d["function"]["name"] for d in definitions))
        if key not in self._prompts:
            self._prompts[key] = system_prompt(
                self.config.system_prompt.template,
                role=self.config.system_prompt.role,
                workspace=str(self.workspace),
                definitions=definitions,
                text_mode=text_mode,
            )
        return self._prompts[key]

    def start(self) -> None:
        """Connect: resolve the model (GET /v1/models, no GPU time) and announce the session."""
        self.client.resolve_model()
        configure(self.client, self.config, self.capabilities, self.emit)  # profile, remembered mode
        self.mcp.start(self.executor, self.gate, self.emit)  # servers connect in the background
        self.emit(
            SessionStarted(
                self.client.model,
                self.config.vllm.base_url,
                self.client.function_calling,
                str(self.workspace),
                self.client.context_window,
            )
        )
        if self.toolbox.status.warning:
            self.emit(Notice("warning", self.toolbox.status.warning))
        for problem in self.toolbox.sandbox.problems:
            self.emit(Notice("warning", f"sandbox: {problem}"))

    def run_headless(self, task: str) -> int:
        self.start()
        try:
            self.mcp.sync(wait=True)
            outcome = self.agent.run(task)
        finally:
            self.close()
        if outcome.exit_code == EXIT_OK:
            print(outcome.answer)
        return outcome.exit_code

    def run_interactive(self) -> int:
        self.start()
        print(
            f"vLLM Bot {self.client.model} at {self.config.vllm.base_url} | workspace {self.workspace}\n"
            "Type a task, /exit to quit.",
            file=sys.stderr,
        )
        try:
            while True:
                self.mcp.sync()
                try:
                    line = input("> ").strip()
                except EOFError:
                    return EXIT_OK
                if not line:
                    continue
                if line.startswith("/"):
                    try:
                        dispatch(self, line)
                    except ExitSession:
                        return EXIT_OK
                    except UnknownCommand as e:
                        self.say(str(e))
                    continue
                self.mcp.sync(wait=True)
                self.agent.run(line)
        finally:
            self.close()

    def say(self, text: str) -> None:
        """A line for the user (slash command output)."""
        print(text, file=sys.stderr)

    def _confirm(self, call: ToolCall, preview: str | None, reason: str) -> Answer:
        from .ui.plain import describe_call

        if preview:
            print(preview, file=sys.stderr)
        reply = input(f"Allow {describe_call(call.name, call.arguments)}? [y]es / [n]o / [a]lways: ").strip()
        if reply.lower() in ("y", "yes"):
            return Answer(True)
        if reply.lower() in ("a", "always"):
            return Answer(True, always=True)
        return Answer(False, message=reply[1:].strip() if reply.lower().startswith("n ") else None)

    def close(self) -> None:
        self.history.close()
        self.mcp.close()
        self.toolbox.close()
        if self.trace:
            self.trace.close()
