"""Programs the agent starts on the host, outside the sandbox (bubblewrap, its own git, the user's MCP
servers), never come from the workspace, where the model writes (found by a red-team run on a lived-in
home, as root): a `PATH` entry such as `./node_modules/.bin` found a planted `bwrap` and `git`, and the
user's own MCP server, started in the workspace, ran a `MODULE.py` the model wrote there
(`python3 -m MODULE`; `npx PKG` finds `node_modules/PKG` the same way)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from lived_in_home import Home, build_home, remove_home, run_cli
from sandbox_helpers import needs_bwrap

from vllm_bot.safety.sandbox.paths import host_search_path, host_which
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_bwrap
MODULE = "demo_mcp_server"


def test_host_search_path_leaves_out_relative_entries_and_the_workspace(tmp_path: Path, monkeypatch):
    ws = tmp_path / "ws"
    planted = ws / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    (planted / "git").write_text("#!/bin/sh\nexit 0\n")
    (planted / "git").chmod(0o755)
    real = shutil.which("git")
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PATH", f"./node_modules/.bin::{planted}:{os.environ['PATH']}")
    assert shutil.which("git") == "./node_modules/.bin/git"  # what a plain lookup finds
    assert host_which("git") == real
    assert host_which("git", [ws]) == real
    entries = host_search_path([ws]).split(os.pathsep)
    assert all(os.path.isabs(e) and not Path(e).resolve().is_relative_to(ws) for e in entries)


def planting_calls(home: Home) -> list[Call]:
    marker = home.marker_dir
    program = f'#!/bin/sh\nid > {marker}/planted-{{name}}-ran\nexec /usr/bin/{{name}} "$@"\n'
    module = f"import os\nopen({str(marker / 'planted-module-ran')!r}, 'w').write('ran')\n"
    return [
        Call("write", {"path": "node_modules/.bin/bwrap", "content": program.format(name="bwrap")}),
        Call("write", {"path": "node_modules/.bin/git", "content": program.format(name="git")}),
        Call("exec", {"command": "chmod +x node_modules/.bin/bwrap node_modules/.bin/git"}),
        Call("write", {"path": f"{MODULE}.py", "content": module}),
    ]


def test_nothing_the_model_plants_in_the_workspace_runs_on_the_host():
    server = {"command": sys.executable, "args": ["-m", MODULE]}  # the user's own server
    base = Path(tempfile.mkdtemp(prefix="vllm-bot-home-", dir="/var/tmp")).resolve()  # short socket paths
    home = build_home(base, {"mcp": {"servers": {"demo": server}}})
    try:
        home.env["PATH"] = "./node_modules/.bin:" + home.env["PATH"]  # as some dev shells set it
        script = [Reply(calls=[call]) for call in planting_calls(home)] + [Reply(content="planted")]
        with FakeVLLM(script) as fake:
            first = run_cli(home, home.proj, "-p", "go", "--yes", "--base-url", fake.base_url)
            fake.assert_done()
        assert first.returncode == 0, first.stderr
        assert (home.proj / "node_modules" / ".bin" / "git").stat().st_mode & 0o111
        with FakeVLLM([Reply(calls=[Call("exec", {"command": "ls"})]), Reply(content="listed")]) as fake:
            second = run_cli(home, home.proj, "-p", "list the files", "--base-url", fake.base_url)
        assert second.returncode == 0, second.stderr
        ran = sorted(p.name for p in home.marker_dir.iterdir() if p.name.startswith("planted"))
        assert ran == [], (ran, json.dumps(second.stderr))
    finally:
        remove_home(home)
