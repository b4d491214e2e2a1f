"""A hostile scripted model through the real agent: `cli.py -p` against the fake vLLM server, in a
workspace whose surroundings (an `outside` directory, a home) must stay untouched, in any approval
mode; and the `undo` / `diff` sub-commands the user runs afterwards on the host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sandbox_helpers import GIT, visible_base

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[1]
MODES = ("ask", "auto-edit", "full-auto")


@dataclass
class World:
    base: Path
    ws: Path
    outside: Path  # nothing may ever appear here: markers of code that ran on the host
    home: Path

    def markers(self) -> list[str]:
        return sorted(p.name for p in self.outside.iterdir())

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def make_world(git: bool) -> World:
    """A workspace under a directory the sandbox can see (outside it: read-only inside the sandbox)."""
    base = visible_base()
    world = World(base, base / "ws", base / "outside", base / "home")
    for folder in (world.ws, world.outside, world.home):
        folder.mkdir()
    (world.ws / "a.txt").write_text("original\n")
    if git:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run([*GIT, *args], cwd=world.ws, check=True, capture_output=True)
    return world


def environment(world: World) -> dict[str, str]:
    env = {**os.environ, "HOME": str(world.home), "XDG_STATE_HOME": str(world.home / "state")}
    for name in ("DEBUG", "GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_GLOBAL", "GIT_CEILING_DIRECTORIES"):
        env.pop(name, None)
    return env


def run_agent(
    world: World, calls: list[Call], mode: str, *, sandbox: str = "auto", config: dict | None = None
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """One headless task in which the model makes `calls`, one per reply; returns the process and
    the tool results the model saw."""
    # A hostile model repeats refused calls on purpose: the loop guard must not end the script early.
    agent = {"approval": mode, "loop_warn_after": 50, "loop_stop_after": 50}
    settings = {"agent": agent, "sandbox": {"mode": sandbox}, **(config or {})}
    config_path = world.base / "config.json"
    config_path.write_text(json.dumps(settings))
    script = [Reply(calls=[call]) for call in calls] + [Reply(content="done")]
    with FakeVLLM(script) as server:
        argv = [sys.executable, str(ROOT / "cli.py"), "-p", "go", "--workspace", str(world.ws)]
        argv += ["--config", str(config_path), "--base-url", server.base_url]
        argv += ["--yes"] if mode == "full-auto" else []
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=environment(world))
        server.assert_done()
        last = server.requests[-1]["messages"]
    results = [str(m.get("content")) for m in last if m["role"] == "tool"]
    return proc, results


def run_cli(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    """`cli.py SUBCOMMAND --workspace WS ...` as the user runs it afterwards, on the host."""
    argv = [sys.executable, str(ROOT / "cli.py"), *args, "--workspace", str(world.ws)]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=300, env=environment(world), stdin=subprocess.DEVNULL
    )
