"""`--help` imports nothing heavy (issue 10); a session loads the SDKs of MCP, ACP and jsonschema only where
they are used (ARCHITECTURE.md's invariants; our own modules load at the top, issue 34)."""

import subprocess
import sys
from pathlib import Path

from vllm_bot.testing.fake_vllm import FakeVLLM

ROOT = Path(__file__).resolve().parents[1]


def test_help_imports_nothing_heavy():
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); sys.argv = ['vllm-bot', '--help']\n"
        "from vllm_bot.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('openai', 'rich', 'prompt_toolkit', 'git', 'jsonschema', 'mcp', 'yaml', 'acp', 'vllm_bot.acp') if m in sys.modules]\n"
        "print('heavy:', heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "heavy: []" in proc.stdout and "exit codes" in proc.stdout


def loaded_after(imports: str, modules: tuple[str, ...]) -> str:
    """`loaded: [...]`: which of `modules` a fresh interpreter holds after `import {imports}`."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r})\n"
        f"import {imports}\n"
        f"print('loaded:', [m for m in {modules!r} if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_building_a_session_imports_no_mcp_machinery_and_no_jsonschema():
    """MCP (asyncio, the manager, the SDK) only when a server is configured; jsonschema only when a
    call is validated against a schema the five-keyword checker does not cover (issue 22)."""
    lazy = ("asyncio", "mcp", "vllm_bot.mcp.manager", "jsonschema")
    assert "loaded: []" in loaded_after("vllm_bot.session", lazy)


FIRST_REQUEST = """
import os, sys
sys.path.insert(0, {src!r})
from vllm_bot.model.server import Server

def stop(*args, **kwargs):
    print("loaded:", [m for m in {modules!r} if m in sys.modules], flush=True)
    os._exit(0)

Server.chat = stop  # the first chat request: say what is loaded, post nothing
from vllm_bot.app import main
main(["-p", "say hi", "--base-url", {url!r}])
"""


def loaded_at_first_request(tmp_path: Path, modules: tuple[str, ...]) -> str:
    """`loaded: [...]`: which of `modules` a `-p` session holds when it posts its first chat request."""
    with FakeVLLM([]) as server:  # nothing is posted: the session stops as it is about to
        code = FIRST_REQUEST.format(src=str(ROOT / "src"), modules=modules, url=server.base_url)
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_headless_run_never_imports_the_acp_front_end(tmp_path):
    """The editor front end and its SDK are `vllm-bot acp`'s alone (issue 38)."""
    assert "loaded: []" in loaded_at_first_request(tmp_path, ("acp", "vllm_bot.acp"))
