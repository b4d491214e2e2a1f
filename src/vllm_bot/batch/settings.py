"""How a batch runs its tasks, and the config and command line each task's agent gets.

Every task runs as its own headless `vllm-bot -p - --output-format stream-json` process, with the
same sandbox, policy and limits as any headless run. Its config is the user's effective config (file,
environment and flags, written to the output directory without the API key, which goes in the
child's environment) with the batch's settings on top: approval (full-auto by default), iterations,
time budget, DEBUG trace, no checkpoints (a task copy needs no undo, and snapshots would land on the
user's repository's private refs), and a fixed name for the workspace in the system prompt, so the
prompt is byte-identical across task copies and vLLM's prefix cache serves it.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cliargs import PROGRAM_ENV, program_name
from ..config import ENV_KEYS, Config, to_dict
from .outage import DEFAULT_OUTAGE_WAIT

WORKSPACE_NAME = "the current directory"  # how every task's system prompt names its workspace
DEFAULT_TIME_BUDGET = 1800.0


@dataclass
class BatchSettings:
    output_dir: Path
    workers: int = 4
    approval: str = "full-auto"
    max_iterations: int | None = None  # None: the config's agent.max_iterations
    time_budget: float = DEFAULT_TIME_BUDGET  # seconds per task (agent.time_budget of each agent)
    check_timeout: float = 300.0  # seconds for a task's setup, and for its check
    function_calling: bool | None = None  # None: as configured; else --function-calling / --no-...
    keep_workspaces: bool = False
    trace: bool = True  # each agent runs with DEBUG on: a raw trace in the task's directory
    shard: tuple[int, int] | None = None
    hidden_paths: list[str] = field(default_factory=list)  # more paths hidden from agents' commands
    outage_wait: float = DEFAULT_OUTAGE_WAIT  # seconds the server may stay away before the batch stops
    ray: Any = None  # raypool.RaySettings with --ray: tasks run on a Ray cluster

    @property
    def kill_after(self) -> float:
        """Seconds after which an agent that did not stop at its time budget is killed."""
        return self.time_budget + max(30.0, self.time_budget * 0.1)


def child_config(config: Config, settings: BatchSettings) -> dict[str, Any]:
    """The config file every task's agent reads (the API key left out)."""
    data = to_dict(config)
    data["vllm"].pop("api_key", None)
    agent = data["agent"]
    agent.update(approval=settings.approval, time_budget=settings.time_budget, debug=settings.trace)
    if settings.max_iterations is not None:
        agent["max_iterations"] = settings.max_iterations
    if config.system_prompt.workspace is None:
        data["system_prompt"]["workspace"] = WORKSPACE_NAME
    data["git"].update(checkpoints=False, auto_commit=False)
    data["sandbox"]["hidden_paths"] = [*data["sandbox"]["hidden_paths"], *settings.hidden_paths]
    return data


def write_child_config(config: Config, settings: BatchSettings) -> Path:
    """`child-config.json` in the output directory (readable by the user only)."""
    path = settings.output_dir / "child-config.json"
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(child_config(config, settings), f, indent=2)
    os.replace(tmp, path)
    return path


def child_env(config: Config) -> dict[str, str]:
    """Our environment without the variables the config already settled; the API key; our package."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    if config.vllm.api_key not in ("", "EMPTY"):
        env["VLLM_API_KEY"] = config.vllm.api_key
    package_root = str(Path(__file__).resolve().parents[2])  # the agent runs the same code as we do
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
    env[PROGRAM_ENV] = program_name()  # the agents' hints name what the user ran, not `python -m`
    return env


def agent_argv(settings: BatchSettings, config_path: Path, workspace: Path) -> list[str]:
    """The command line of one task's agent; the task itself goes on stdin (`-p -`)."""
    argv = [sys.executable, "-m", "vllm_bot.app", "-p", "-", "--output-format", "stream-json"]
    argv += ["--workspace", str(workspace), "--config", str(config_path)]
    if settings.function_calling is not None:
        argv.append("--function-calling" if settings.function_calling else "--no-function-calling")
    return argv
