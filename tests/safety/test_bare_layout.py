"""A command that lays out a workspace without a repository as a bare repository itself (HEAD,
objects/, refs/ and a config naming core.fsmonitor) has its HEAD renamed after it ends, so the
user's own git in that folder takes no repository there and runs nothing (review of 2026-11-27).
Real commands, sandboxed and not, and the user's real git afterwards."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from sandbox_helpers import STATUS, visible_base

from vllm_bot.config import Config, SandboxConfig
from vllm_bot.safety.sandbox.tripwire import DISABLED_HEAD
from vllm_bot.tools.toolbox import build_toolbox

PLANT = r"""set -e
mkdir -p objects refs/heads
echo 'ref: refs/heads/main' > HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = %s\n\tfsmonitor = "touch %s/PWNED; false"\n' "$PWD" "$PWD" > config
echo planted"""


@pytest.fixture(params=["bwrap", "off"])
def workspace(request):
    if request.param == "bwrap" and not STATUS.active:
        pytest.skip(f"bubblewrap cannot run here: {STATUS.warning}")
    base = visible_base()
    (base / "ws").mkdir()
    yield request.param, base / "ws"
    shutil.rmtree(base, ignore_errors=True)


def users_git_status(ws):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CEILING_DIRECTORIES"] = str(ws.parent)  # the test's own checkout stays out of it
    return subprocess.run(["git", "status"], cwd=ws, env=env, capture_output=True, text=True)


def test_a_workspace_laid_out_as_a_bare_repository_is_disabled(workspace):
    mode, ws = workspace
    box = build_toolbox(Config(sandbox=SandboxConfig(mode=mode)), ws, ws.parent / "state")
    try:
        out = box.executor.execute("exec", {"command": PLANT}).value
        assert "planted" in out and f"renamed to {DISABLED_HEAD}" in out
        assert "fine" in box.executor.execute("exec", {"command": "echo fine"}).value
    finally:
        box.close()
    assert not (ws / "HEAD").exists() and (ws / DISABLED_HEAD).is_file()
    result = users_git_status(ws)
    assert result.returncode != 0 and not (ws / "PWNED").exists(), result.stdout + result.stderr


def test_a_folder_laid_out_so_before_the_session_is_left_alone(workspace):
    """What the user had when the session started is theirs: only a change made by a command counts."""
    mode, ws = workspace
    (ws / "objects").mkdir()
    (ws / "refs").mkdir()
    (ws / "HEAD").write_text("ref: refs/heads/main\n")
    box = build_toolbox(Config(sandbox=SandboxConfig(mode=mode)), ws, ws.parent / "state")
    try:
        out = box.executor.execute("exec", {"command": "echo hello"}).value
        assert "hello" in out and DISABLED_HEAD not in out
    finally:
        box.close()
    assert (ws / "HEAD").is_file()
