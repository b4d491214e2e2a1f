"""One agent session: builds the client, tools, gate and front ends from config and runs tasks.

This is the composition root. The interactive loop lives in ui/repl.py, the `-p` flow in ui/headless.py;
both drive the parts built here.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .agent.delegation import Made
from .agent.loop import Agent
from .agent.planning import message
from .agent.workflow import Workflow
from .config import Config
from .config.instructions import instruction_stamp, load_instructions
from .config.layers import project_summary
from .config.statedir import workspace_state_dir
from .errors import ServerUnreachable
from .events import Emit, Event, Notice, SessionStarted
from .history.store import History, resumed_message
from .mcp.bridge import McpTools
from .model.capabilities import CapabilityCache, ModeMemory, configure
from .model.client import ModelClient
from .model.telemetry import for_session
from .model.trace import Trace
from .prompts import SystemPrompts
from .safety.approval import ApprovalGate
from .safety.boundary import build as build_boundary
from .tools.mentions import attach, budget_for
from .tools.toolbox import build_toolbox
from .ui import fanout, front_end
from .ui.banner import BannerInfo, git_status, sandbox_warning
from .ui.debuglog import DebugLog
from .ui.trust_prompt import ask_home, ask_trust  # noqa: F401 - for the command line, which imports no UI


class Session:
    agent: Agent

    def __init__(
        self,
        config: Config,
        workspace: Path,
        *,
        headless: bool,
        front: Any = None,
        resume: str | None = None,
        latest: bool = False,
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.headless = headless
        self.state_dir = workspace_state_dir(workspace)
        self.trace: Trace | None = None
        self.instructions = load_instructions(workspace, config.system_prompt.instructions_max_tokens)
        self._system_prompt = SystemPrompts(config.system_prompt, str(workspace), self.instructions.section)
        if config.agent.debug:
            self.trace = Trace.in_state_dir(self.state_dir, secrets=[config.vllm.api_key])
            print(f"[DEBUG] Trace of raw requests and responses: {self.trace.path}", file=sys.stderr)
        self.client = ModelClient(
            config.vllm, system_prompt=self._system_prompt, trace=self.trace, context=config.context
        )
        self.front = front if front is not None else front_end(config.ui, headless=headless)
        self.consumers: list[Emit] = [self.front]  # every event of the session goes to each, in order
        self.emit: Emit = fanout(self.consumers)
        self.debug_log: DebugLog | None = None
        if config.agent.debug:
            self.set_debug(True)
        self.capabilities = CapabilityCache()
        self.telemetry = for_session(config.telemetry, self.client, self.emit)
        self.consumers += [ModeMemory(self.capabilities, self.client, self.emit), self.telemetry]
        self.add_status_field(self._cache_field)
        self.boundary = build_boundary(workspace, config, state_dirs=[self.state_dir])
        self.toolbox = build_toolbox(config, workspace, self.state_dir, self.boundary)
        self.executor = self.toolbox.executor
        self.mcp = McpTools(config, workspace, self.state_dir)
        self.interactive = not headless and sys.stdin.isatty()
        self.gate = ApprovalGate(
            config.agent.approval,
            self.front.confirm if self.interactive else None,
            preview=self.mcp.preview(self.executor.preview),
            sandboxed=self.toolbox.sandboxed,
            workspace=workspace.resolve(),
            path_rule=lambda path, write: self.executor.context.paths.rule(path, write=write),
        )
        self.agent = Agent(self.client, self.executor, config.agent, self.emit, gate=self.gate)
        self.workflow = Workflow(self)  # plan mode, the task list, sub-agents (issue 37)
        self.resumed_in_text_mode = False
        self.offline: str | None = None  # why the server could not be reached at start (interactive)
        # History: the conversation saved after each step (from the events), a checkpoint before the
        # first change of each turn (the gate asks for it), --continue / --resume.
        self.history = History(
            config, workspace, self.state_dir, self.agent.conversation, self.emit, self.client
        )
        if latest or resume:
            self.resume(None if latest else resume)
        if self.history.store is None and config.git.checkpoints:
            self.emit(Notice("warning", f"{self.history.unavailable}; /undo will not work in this session"))
        self.gate.before_change = self.history.before_change
        self.add_consumer(self.history.on_event)

    def resume(self, wanted: str | None) -> None:
        """Continue a saved session (None: the latest): its conversation, its tool-call mode (config
        can only turn it off) and its token total."""
        loaded = self.history.resume(wanted)
        if loaded.function_calling is False:
            self.client.function_calling = False
            self.resumed_in_text_mode = True  # start() keeps it after configuring the profile
        self.agent.usage = loaded.usage()
        self.say(resumed_message(loaded))

    def add_consumer(self, consumer: Emit) -> None:
        self.consumers.append(consumer)

    def add_status_field(self, field: Callable[[], str | None]) -> None:
        """One more field for the status line after each task (e.g. a prefix-cache hit rate)."""
        self.front.status.extras.append(field)

    def _cache_field(self) -> str | None:
        rate = self.telemetry.cache_hit_rate
        return f"prefix cache {rate:.0%}" if rate is not None else None

    def current_system_prompt(self) -> str:
        return self._system_prompt(not self.client.function_calling, self.executor.definitions)

    def start(self, *, offline_ok: bool = False) -> None:
        """Connect: resolve the model (GET /v1/models, no GPU time) and announce the session. With
        `offline_ok` (an interactive start) an unreachable server leaves the session open: `offline`
        says why, and `reconnect()` tries again."""
        try:
            early = self._connect()
        except ServerUnreachable as e:
            if not offline_ok:
                raise
            self.offline, early = str(e), []
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
        for event in early:
            self.emit(event)
        self.workflow.announce()
        for warning in [*self.config.provenance.warnings, *self.instructions.problems]:
            self.emit(Notice("warning", warning))  # untrusted project settings, unreadable AGENTS.md, ...
        warning = self.toolbox.status.warning
        if warning and self.headless:  # an interactive session (and the demo) says it in its banner
            self.emit(Notice("warning", sandbox_warning(warning, self.gate.mode)))
        for problem in self.toolbox.sandbox.problems:
            self.emit(Notice("warning", f"sandbox: {problem}"))

    def _connect(self) -> list[Event]:
        """Resolve the model and configure the client; what configuring says, to emit after the
        session_started event."""
        self.client.resolve_model()
        early: list[Event] = []
        configure(self.client, self.config, self.capabilities, early.append)  # profile, remembered mode
        if self.resumed_in_text_mode:  # a resumed session goes on as it was (config can turn it off)
            self.client.function_calling = False
        self.offline = None
        return early

    def reconnect(self) -> None:
        """After an offline start, try the server again (before a task); raises while it is down."""
        if self.offline is None:
            return
        for event in self._connect():
            self.emit(event)
        self.say(f"Connected to {self.config.vllm.base_url}: model {self.client.model}.")

    def refresh_instructions(self) -> None:
        """Before a task: read the AGENTS.md files again if one was added or changed (say, by /init);
        an unchanged set keeps the system prompt, and so vLLM's prefix cache, as it was."""
        if self.instructions.stamp == instruction_stamp(self.workspace):
            return
        self.instructions = load_instructions(
            self.workspace, self.config.system_prompt.instructions_max_tokens
        )
        self._system_prompt.set_instructions(self.instructions.section)
        self.say(f"Project instructions read again: {self.instructions.summary() or 'none'}.")

    def switch_model(self, name: str) -> None:
        """Use another served model: its own profile and remembered tool-call mode, not the old one's."""
        self.client.use_model(name)
        configure(self.client, self.config, self.capabilities, self.emit)

    def banner_info(self, label: str = "") -> BannerInfo:
        client = self.client
        fc = "on" if client.function_calling else "off (text tool protocol)"
        if client.fell_back:
            fc = "fell back to the text tool protocol (the server has no tool-call parser)"
        return BannerInfo(
            model=client.model,
            base_url=self.config.vllm.base_url,
            context_window=client.context_window,
            window_assumed=client.context.window_assumed,
            function_calling=fc,
            approval=self.gate.mode,
            sandbox=self.toolbox.status.describe(),
            workspace=str(self.workspace),
            git=lambda: git_status(self.workspace),
            label=label,
            sandbox_gaps=self.sandbox_gaps(),
            offline=self.offline or "",
            instructions=self.instructions.summary(),
            project=project_summary(self.config),
        )

    def sandbox_gaps(self) -> list[str]:
        """What the sandbox does not cover in this session (for the banner and /sandbox)."""
        servers = [name for name, server in self.config.mcp.servers.items() if server.enabled]
        return list(self.toolbox.status.gaps(servers))

    def run_headless(self, task: str, output_format: str = "text") -> int:
        from .ui.headless import run_headless

        return run_headless(self, task, output_format)

    def run_interactive(self) -> int:
        from .ui.repl import run_repl

        return run_repl(self)

    def task_message(self, text: str) -> str:
        """What goes to the model for the user's `text`: what it must know first (plan mode went on or
        off), then the message with what it mentions attached."""
        return self.workflow.task_message(self.with_mentions(text))

    def make_subagent(self, emit: Emit) -> Made:
        """A sub-agent for the delegate tool: the same server and model, its own conversation and
        client, read and exec only, in the read-only boundary plan mode uses; no delegate (depth one)."""
        config = self.config
        boundary = dataclasses.replace(self.boundary, workspace_read_only=True)
        toolbox = build_toolbox(config, self.workspace, self.state_dir, boundary)
        for name in [n for n in toolbox.executor.available() if n not in ("read", "exec")]:
            toolbox.executor.unregister(name)
        role = message("subagent_role", words=str(config.delegate.answer_tokens * 3 // 4))
        prompt = dataclasses.replace(config.system_prompt, role=role)
        client = ModelClient(
            config.vllm,
            system_prompt=SystemPrompts(prompt, str(self.workspace), ""),
            trace=self.trace,
            context=config.context,
        )
        client.use_model(self.client.model)
        client.models, client.profile = self.client.models, self.client.profile
        client.function_calling = self.client.function_calling
        gate = ApprovalGate("plan", None, sandboxed=toolbox.sandboxed, workspace=self.workspace.resolve())
        agent_config = dataclasses.replace(
            config.agent, max_iterations=config.delegate.max_iterations, approval="plan"
        )
        agent = Agent(client, toolbox.executor, agent_config, emit, gate=gate)
        client.stop = agent.cancel.event  # Ctrl-C reaches its thread: the reply streaming stops
        return Made(agent, toolbox.close)

    def with_mentions(self, text: str) -> str:
        """The user's message with the files (`@path`) and MCP resources (`@server:uri`) it mentions
        attached; says what was (tools/mentions.py, mcp/mentions.py)."""

        def read(path: str) -> Any:
            return self.executor.execute("read", {"path": path})

        ratio = self.client.context.counter.chars_per_token
        budget = budget_for(self.client.context_window, ratio)
        blocks: list[str] = []
        told: list[str] = []
        if self.mcp.manager is not None:  # MCP modules only when a server is configured
            from .mcp.mentions import attach_resources

            blocks, told, budget = attach_resources(text, self.mcp.manager, budget)
        found = attach(text, self.workspace, read, budget)
        for line in [*told, *found.attached]:
            self.say(line)
        return "\n\n".join([found.text, *blocks])

    def say(self, text: str) -> None:
        """A line for the user (slash command output)."""
        self.front.say(text)

    def set_debug(self, on: bool) -> None:
        """DEBUG log on/off (also /debug); turning it on mid-session starts a trace file too."""
        self.config.agent.debug = on
        if on and self.debug_log is None:
            self.debug_log = DebugLog(self.front.debug_stream())
            self.consumers.append(self.debug_log)
            if self.trace is None:
                self.trace = Trace.in_state_dir(self.state_dir, secrets=[self.config.vllm.api_key])
                self.client.trace = self.trace
                self.say(f"Trace of raw requests and responses: {self.trace.path}")
        elif not on and self.debug_log is not None:
            self.consumers.remove(self.debug_log)
            self.debug_log = None

    def close(self) -> None:
        self.workflow.close()
        self.front.stop_live()
        self.history.close()
        self.mcp.close()
        self.toolbox.close()
        if self.trace:
            self.trace.close()
