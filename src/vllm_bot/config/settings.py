"""Layered, strict configuration: defaults <- config files <- environment <- command-line flags
(the layers and where each value came from: layers.py).

Each section is a dataclass; the loader checks every key and type against the dataclass fields, so an
unknown key or a wrong type is a `ConfigError` that names the key and the file it came from.
Per-model quirks belong in config data (profiles), never in code branches on model names.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .rules import ConfigError, checked, not_above, ranged, tool_choice_problem

# plan: nothing in the workspace changes (read-only sandbox, file changes refused) until the model's
# plan is approved (issue 37); cycled after the three others, as Claude Code's Shift-Tab does
ApprovalMode = Literal["ask", "auto-edit", "full-auto", "plan"]


@dataclass
class VllmConfig:
    base_url: str = "http://localhost:8000/v1"
    api_key: str = "EMPTY"
    model: str = "auto"  # "auto": the first model listed by GET /v1/models
    enable_function_calling: bool = True
    tool_choice: str = checked("auto", tool_choice_problem)  # auto | none | required | a tool name
    temperature: float | None = ranged(None, low=0)  # None: the server's / model's default
    max_tokens: int | None = ranged(None, low=1)  # None: fit the remaining context window
    timeout: float = ranged(600.0, above=0)  # seconds to the first token (prefill on a busy GPU is slow)
    stream_idle_timeout: float = ranged(60.0, above=0)  # seconds without data mid-stream: retry the turn
    connect_timeout: float = ranged(5.0, above=0)
    context_window: int | None = ranged(None, low=1)  # overrides max_model_len from /v1/models
    retry_attempts: int = ranged(5, low=1)  # tries per request once the server has answered (first included)
    retry_base: float = ranged(1.0, low=0)  # seconds before the first retry; doubles, with jitter
    retry_cap: float = ranged(20.0, low=0)  # longest single wait between retries
    retry_window: float = ranged(90.0, above=0)  # seconds from a request's first failure to give up


@dataclass
class AgentConfig:
    max_iterations: int = ranged(50, low=1)
    approval: ApprovalMode = "auto-edit"
    debug: bool = False
    max_malformed_replies: int = ranged(3, low=1)
    time_budget: float | None = ranged(None, above=0)  # seconds of wall clock per task; None: no limit
    loop_warn_after: int = ranged(3, low=1)  # identical call+result repeats before the model gets a note
    loop_stop_after: int = ranged(5, low=1)  # ... before the task stops
    task_list: bool = True  # offer update_plan: a short checklist the model keeps (shown to the user)
    plan_mode: bool = True  # offer plan mode (/plan, Shift-Tab, --plan) and its present_plan tool

    def check(self, key: str, source: str) -> None:
        """Cross-field rule the type checks cannot express."""
        not_above(self, "loop_warn_after", "loop_stop_after", key, source)


@dataclass
class ContextConfig:
    compact_threshold: float = ranged(0.8, above=0, high=1)  # compact past this share of the window
    assumed_window: int = ranged(8192, low=1)  # used (and shown as assumed) when the server does not say
    keep_recent_turns: int = ranged(2, low=0)  # assistant turns (+ results) never summarized/shrunk
    shrink_results_to: int = ranged(2000, low=0)  # characters kept (head + tail) of an old tool result
    summary_max_tokens: int = ranged(1024, low=1)


@dataclass
class SystemPromptConfig:
    role: str = "You are vLLM Bot, an autonomous coding agent working in the user's repository."
    template: str = "system.yaml"  # a file in prompts/
    instructions_max_tokens: int = ranged(4000, low=0)  # AGENTS.md files in the prompt (0: none read)
    workspace: str | None = None  # how the prompt names the workspace (None: its path); batch fixes it


@dataclass
class ToolsConfig:
    allowed_paths: list[str] = field(default_factory=list)  # extra roots the file tools may use
    exec_timeout: int = ranged(120, low=1)
    exec_max_timeout: int = ranged(600, low=1)
    output_limit: int = ranged(30000, low=1)  # characters of tool output the model sees (head + tail)
    exec_kill_grace: float = ranged(2.0, low=0)  # seconds from SIGTERM to SIGKILL on a stop
    exec_spill_bytes: int = ranged(50_000_000, low=0)  # most bytes of exec output saved in .vllm-bot/outputs/
    exec_env: dict[str, str] = field(default_factory=dict)  # extra environment for exec, e.g. {"CI": "1"}
    read_max_lines: int = ranged(2000, low=1)  # lines read shows when the model gives no limit
    read_max_chars: int = ranged(64000, low=1)  # characters one read shows at most (it stops at a whole line)

    def check(self, key: str, source: str) -> None:
        """Cross-field rule the type checks cannot express."""
        not_above(self, "exec_timeout", "exec_max_timeout", key, source)


@dataclass
class DelegateConfig:
    """Sub-agents (the delegate tool): a fresh, read-only agent explores and answers in few tokens."""

    enabled: bool = True
    max_iterations: int = ranged(15, low=1)  # requests a sub-agent may make
    max_tokens: int = ranged(120_000, low=1000)  # prompt + completion tokens of all its requests
    answer_tokens: int = ranged(1500, low=50)  # its answer, as the parent gets it, at most (estimated)
    parallel: int = ranged(3, low=1)  # delegate calls of one reply that run at the same time


SandboxMode = Literal["auto", "bwrap", "off"]


@dataclass
class SandboxConfig:
    mode: SandboxMode = "auto"  # auto: bubblewrap when it works, else unsandboxed and every command asks
    network: bool = False  # let sandboxed commands use the network
    bwrap: str = "bwrap"  # the bubblewrap binary: a name on PATH or a path
    hidden_paths: list[str] = field(default_factory=list)  # more files/dirs hidden from commands
    writable_paths: list[str] = field(default_factory=list)  # more dirs commands may write
    visible_paths: list[str] = field(default_factory=list)  # more folders under $HOME shown read-only
    unix_sockets: bool = False  # let commands make unix sockets (they could reach servers outside)
    git_writable: bool = False  # let commands write .git (commit, branch); a command can then rewrite history
    # Resource limits for every exec command, sandboxed or not (0: no limit of that kind).
    max_memory_mb: int | None = ranged(None, low=0)  # None: half the machine's memory
    max_processes: int = ranged(1024, low=0)  # processes and threads of one command
    max_file_size_mb: int = ranged(8192, low=0)  # largest file a command may write
    max_cpu_seconds: int = ranged(3600, low=0)  # CPU time of one process
    max_open_files: int = ranged(8192, low=0)  # open files of one process


@dataclass
class McpServerConfig:
    """One MCP server: a local command spoken to over stdio, or an HTTP (streamable) URL."""

    command: str | None = None  # stdio: the executable; `args`, `env`, `cwd` go with it
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # "${VAR}" is taken from our environment
    cwd: str | None = None  # relative to the workspace; default: the workspace
    url: str | None = None  # HTTP: the endpoint, e.g. http://127.0.0.1:8931/mcp
    headers: dict[str, str] = field(default_factory=dict)  # "${VAR}" expanded like env
    timeout: float | None = ranged(None, above=0, says="a positive number of seconds")  # None: mcp.timeout
    allow: bool | list[str] = False  # true: every tool runs without asking; or a list of tool names
    enabled: bool = True
    enabled_tools: list[str] | None = None  # only these tools are offered (None: all it lists)
    disabled_tools: list[str] = field(default_factory=list)  # never offered (names as in `allow`)

    def check(self, key: str, source: str) -> None:
        """Cross-field rule the type checks cannot express."""
        if (self.command is None) == (self.url is None):
            what = "'command' (a local stdio server) or 'url' (an HTTP server)"
            raise ConfigError(f"{source}: '{key}' needs exactly one of {what}")


@dataclass
class McpConfig:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    timeout: float = ranged(60.0, above=0)  # seconds for one tool call (a server may override it)
    startup_timeout: float = ranged(30.0, above=0)  # seconds to start a server and list its tools
    max_call_time: float = ranged(600.0, above=0)  # a call reporting progress outlives timeout up to this
    # An HTTP server that went away while idle is noticed by a ping this often (0: only at the next
    # call); a stdio server's exit is noticed at once without one.
    ping_interval: float = ranged(30.0, low=0)


@dataclass
class GitConfig:
    checkpoints: bool = True  # snapshot the workspace before each user turn that changes files
    auto_commit: bool = False  # commit the agent's changes after each turn (git repositories only)
    keep_sessions: int = ranged(20, low=0)  # sessions whose checkpoints are kept (older: deleted)
    max_file_mb: int = ranged(50, low=0)  # bigger new untracked files skip snapshots (0: no limit)
    # Never snapshotted in a workspace without git; in a git repository, untracked files matching
    # them are left out too (tracked ones are snapshotted as usual).
    private_excludes: list[str] = field(
        default_factory=lambda: ["node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".tox/"]
    )


@dataclass
class UiConfig:
    show_reasoning: bool = False  # show the model's reasoning (dimmed) instead of a one-line summary
    refresh_per_second: float = ranged(8.0, above=0)  # live view redraws at most (cost: CPU per token)
    output_lines: int = ranged(10, low=0)  # lines of a running command's output shown live (its tail)


@dataclass
class ProfileConfig:
    """Per-model settings (see docs/doctor.md). Unset (null) fields fall through to the next layer."""

    match: list[str] = field(default_factory=list)  # globs on the served name or root; "re:" = regex
    tool_call_mode: Literal["native", "text"] | None = None
    temperature: float | None = ranged(None, low=0)
    top_p: float | None = ranged(None, above=0, high=1)
    stop: list[str] | None = None
    keep_reasoning: bool | None = None  # send reasoning back between tool calls
    context_window: int | None = ranged(None, low=1)
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)  # e.g. top_k, min_p, repetition_penalty


@dataclass
class TelemetryConfig:
    slow_first_token: float = ranged(5.0, above=0)  # seconds: a wait this long reads /metrics to explain it
    metrics: bool = True  # allow reading the server's /metrics page (only for slow replies)


@dataclass
class Provenance:
    """Where the config came from (filled by config_layers): dotted key -> the layer that set it."""

    origins: dict[str, str] = field(default_factory=dict)
    files: list[tuple[str, str, str]] = field(default_factory=list)  # (layer, path, how it was used)
    ignored: list[str] = field(default_factory=list)  # project safety keys of an untrusted workspace
    warnings: list[str] = field(default_factory=list)  # one line each, shown when the session starts
    trust: str | None = None  # the workspace's trust, when its settings asked for it


@dataclass
class Config:
    vllm: VllmConfig = field(default_factory=VllmConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    system_prompt: SystemPromptConfig = field(default_factory=SystemPromptConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    delegate: DelegateConfig = field(default_factory=DelegateConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    git: GitConfig = field(default_factory=GitConfig)
    ui: UiConfig = field(default_factory=UiConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    profiles: dict[str, ProfileConfig] = field(default_factory=dict)  # user model profiles by name
    source: str = field(default="defaults", compare=False)  # where the file layer came from
    flags: set[str] = field(default_factory=set, compare=False)  # dotted keys set on the command line
    provenance: Provenance = field(default_factory=Provenance, compare=False)


def load_config(
    path: str | Path | None = None,
    env: typing.Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    workspace: Path | None = None,
    trust: Any = None,
) -> Config:
    """Build the effective config from its layers (layers.py). `path` (`--config`) takes the user
    config's place and must exist; `workspace` adds the project's own settings, trusted by `trust`
    (a trust.TrustPolicy); `overrides` maps dotted keys ("vllm.model") to flag values."""
    from .layers import load_layers  # an import cycle: layers.py builds on these types

    return load_layers(path, env, overrides, workspace, trust)


def to_dict(cfg: Config) -> dict[str, Any]:
    """The effective config as plain data, with the API key redacted."""
    data = dataclasses.asdict(cfg)
    data.pop("source", None)
    data.pop("flags", None)
    data.pop("provenance", None)
    if data["vllm"].get("api_key") not in (None, "", "EMPTY"):
        data["vllm"]["api_key"] = "***"
    return data
