"""`@path` in a message attaches the file: the read tool's rules, a budget, and the real -p path."""

import os
import subprocess
import sys
from pathlib import Path

from vllm_bot.config import ToolsConfig
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply
from vllm_bot.tools.executor import ToolExecutor
from vllm_bot.tools.mentions import attach, mentioned_paths

ROOT = Path(__file__).resolve().parents[2]


def reader(ws: Path):
    executor = ToolExecutor(ws, ToolsConfig())
    return lambda path: executor.execute("read", {"path": path})


def test_only_existing_paths_after_a_space_are_mentions(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    text = "fix @src/app.py, see @decorator and mail me@host; also @src/app.py again (@src)"
    assert mentioned_paths(text, tmp_path) == ["src/app.py", "src"]


def test_attaches_numbered_lines_and_tells_the_user(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    found = attach("fix @app.py please", tmp_path, reader(tmp_path), budget=10_000)
    assert found.text.startswith('fix @app.py please\n\n<attached path="app.py">\n')
    assert "1→def add(a, b):" in found.text and "2→    return a - b" in found.text
    assert found.text.endswith("</attached>")
    assert found.attached == ["Attached @app.py: File app.py, lines 1-2 of 2 (whole file)"]


def test_outside_the_workspace_and_binaries_are_not_attached(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.txt").write_text("password\n")
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    found = attach("look at @../secret.txt and @blob.bin", ws, reader(ws), budget=10_000)
    assert found.text == "look at @../secret.txt and @blob.bin"
    assert "password" not in found.text
    assert [line.split(":")[0] for line in found.attached] == [
        "Not attached @../secret.txt",
        "Not attached @blob.bin",
    ]


def test_budget_cuts_at_a_line_and_says_how_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    (tmp_path / "small.txt").write_text("hello\n")
    found = attach("@big.txt @small.txt", tmp_path, reader(tmp_path), budget=2_000)
    assert len(found.text) < 2_300
    assert "use the read tool on big.txt for the rest" in found.text
    assert "hello" not in found.text
    assert found.attached[0].endswith("cut to fit the context window")
    assert found.attached[1].startswith("Not attached @small.txt: no room left")


def test_headless_task_sends_the_attached_file_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("the answer is 42\n")
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
    with FakeVLLM([Reply(content="42")]) as server:
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "cli.py"),
                "--workspace",
                str(tmp_path),
                "--base-url",
                server.base_url,
                "-p",
                "what does @notes.md say?",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        server.assert_done()
    assert done.returncode == 0, done.stderr
    assert "Attached @notes.md: File notes.md, lines 1-1 of 1" in done.stderr
    user = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]["content"]
    assert user.startswith("what does @notes.md say?") and "1→the answer is 42" in user
