"""Issue 35 item 5a: a repository made inside the workspace with `git init sub` and no commit yet
made the checkpoint's `git add -A` fail ("'sub/' does not have a commit checked out"), and `diff` and
`undo` then failed for the whole session. It is skipped like any other nested repository. Also here:
`undo` where the model swapped a folder for a symlink out of the workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(ws.parent / "state"),
        "XDG_CONFIG_HOME": str(ws.parent / "cfg"),
    }
    env.pop("DEBUG", None)
    argv = [sys.executable, str(ROOT / "cli.py"), *args, "--workspace", str(ws)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def test_an_empty_nested_repository_does_not_break_checkpoints_diff_or_undo(tmp_path: Path):
    ws = tmp_path / "ws"
    subprocess.run([*GIT, "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "-C", str(ws), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(ws), "commit", "-qm", "init"], check=True)
    script = [
        Reply(calls=[Call("exec", {"command": "git init -q sub && echo x > sub/x.txt"})]),
        Reply(calls=[Call("write", {"path": "a.txt", "content": "b\n"})]),
        Reply(content="done"),
    ]
    with FakeVLLM(script) as server:
        run = cli(ws, "-p", "go", "--yes", "--base-url", server.base_url)
    assert run.returncode == 0 and "checkpoint failed" not in run.stderr, run.stderr
    diff = cli(ws, "diff")
    assert diff.returncode == 0 and "+b" in diff.stdout, diff.stdout + diff.stderr
    undo = cli(ws, "undo")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert (ws / "a.txt").read_text() == "a\n" and (ws / "sub" / "x.txt").read_text() == "x\n"


def test_undo_does_not_reach_through_a_folder_now_a_symlink(tmp_path: Path):
    """`undo` after the model swapped a folder for a symlink out of the workspace: the file that comes back
    is written in the workspace, and nothing is removed where the link leads. The `.gitignore` files come
    back first (before the symlinks are cleared), and an empty folder where the link leads, at the path of
    one, was removed through the link (found by a red-team review)."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / ".gitignore").write_text("*.log\n")
    (outside / ".gitignore").mkdir(parents=True)  # empty, where d/.gitignore would be through the link
    subprocess.run([*GIT, "init", "-q", str(ws)], check=True)
    subprocess.run([*GIT, "-C", str(ws), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(ws), "commit", "-qm", "init"], check=True)
    swap = f"rm -rf d && ln -s {outside} d"
    script = [Reply(calls=[Call("exec", {"command": swap})]), Reply(content="swapped")]
    with FakeVLLM(script) as server:
        run = cli(ws, "-p", "go", "--yes", "--base-url", server.base_url)
        server.assert_done()
    assert run.returncode == 0 and (ws / "d").is_symlink(), run.stderr
    undo = cli(ws, "undo", "--force")
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert (outside / ".gitignore").is_dir() and list(outside.iterdir()) == [outside / ".gitignore"]
    assert not (ws / "d").is_symlink() and (ws / "d" / ".gitignore").read_text() == "*.log\n"
