"""Run the demo: copy the sample project to a temporary directory, start the scripted server, and
drive a real session (agent, tools, sandbox, UI) through the recorded task in full-auto mode."""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from ..cliargs import overrides_from, program_name
from ..config import load_config
from ..errors import EXIT_RUNTIME
from ..session import Session
from ..testing.fake_vllm import FakeVLLM
from ..ui import front_end
from .script import TASK, demo_script

MODEL = "vllm-bot-demo (scripted)"
PACE_VARIABLE = "VLLM_BOT_DEMO_PACE"  # 1 = lifelike streaming, 0 = instant (tests)


def copy_sample(target: Path) -> Path:
    """The bundled sample project, copied into `target`/shop."""
    workspace = target / "shop"
    workspace.mkdir()
    sample = resources.files("vllm_bot.demo") / "sample"
    for item in sample.iterdir():
        if item.is_file() and not item.name.endswith(".pyc"):
            (workspace / item.name).write_bytes(item.read_bytes())
    return workspace


def _pace() -> float:
    try:
        return max(0.0, float(os.environ.get(PACE_VARIABLE, "1")))
    except ValueError:
        return 1.0


def run(args: Any) -> int:
    """The demo from start to end; exit 0 when the recorded task went as recorded."""
    tmp = Path(tempfile.mkdtemp(prefix="vllm-bot-demo-"))
    try:
        workspace = copy_sample(tmp)
        with FakeVLLM(demo_script(_pace()), model=MODEL) as server:
            code = _run_session(args, workspace, server.base_url)
            problems = list(server.problems)
        if problems:
            print("vllm-bot: the demo did not go as recorded: " + "; ".join(problems))
            return EXIT_RUNTIME
        return code
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_session(args: Any, workspace: Path, base_url: str) -> int:
    overrides = {
        **overrides_from(args),
        "vllm.base_url": base_url,
        "vllm.model": MODEL,
        "vllm.api_key": "EMPTY",
        "vllm.enable_function_calling": True,
        "vllm.context_window": None,
        "agent.approval": "full-auto",  # nothing to approve: the copy is thrown away afterwards
    }
    config = load_config(args.config, overrides=overrides)
    front = front_end(config.ui, headless=False, needs_input=False)
    session = Session(config, workspace, headless=False, front=front)
    try:
        session.start()
        front.banner(session.banner_info(label="DEMO"))
        session.say(
            "DEMO: a scripted model server replays a recorded task with the real agent, tools and UI, "
            f"on a throwaway copy of a sample project ({workspace}). Nothing else is touched.\n"
        )
        session.say(f"> {TASK}")
        with session.agent.cancel.sigint():
            outcome = session.agent.run(TASK)
    finally:
        session.close()
    session.say(
        "\nDEMO finished; the copy has been deleted. For real work start vLLM (see README) and run "
        f"`{program_name()}` in your project."
    )
    return outcome.exit_code
