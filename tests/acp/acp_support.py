"""What the ACP tests share: the agent's command line, a workspace and the scripted model replies."""

import os
import sys
from pathlib import Path

from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "Fixed add(): it subtracted; now add(2, 3) == 5."
COMMAND = "python3 -c 'import app; print(app.add(2, 3))'"
LONG_REPLY = "Let me think about this at length. " * 40


def agent_command(base_url: str, *extra: str) -> list[str]:
    """`python cli.py acp` against the scripted server (as an editor would start `vllm-bot acp`)."""
    return [sys.executable, str(ROOT / "cli.py"), "acp", "--base-url", base_url, *extra]


def agent_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "DEBUG"}


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def task_script() -> list[Reply]:
    """A prompt that reads, edits, runs a command and answers."""
    return [
        Reply(content="Reading.", reasoning="Look first.", calls=[Call("read", {"path": "app.py"})]),
        Reply(calls=[Call("edit", {"path": "app.py", "oldText": "a - b", "newText": "a + b"})]),
        Reply(calls=[Call("exec", {"command": COMMAND})]),
        Reply(content=ANSWER),
    ]


def slow_reply() -> Reply:
    """A reply that streams for seconds: the test cancels it after its first words."""
    return Reply(content=LONG_REPLY, chunk_size=8, latency=0.05)
