"""Undo and diff where the user's own edits may be involved: files edited after a turn ended, and a
turn cut off by a crash (no end snapshot, so any change may be the user's). Through `cli.py undo` and
`cli.py diff` (subprocesses, with and without a terminal) and the /undo and /diff slash commands."""

from __future__ import annotations

import os
import pty
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git, user_git_state
from stand_in_tools import agent_session

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.conversation import Conversation
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.session_recorder import SessionRecorder
from vllm_bot.history.sessions import SessionLog
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.ui.slash.registry import dispatch

CLI = str(Path(__file__).resolve().parents[2] / "cli.py")
ORIGINAL = {"a.txt": "a\n", "c.txt": "c\n"}


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def cli(*args, stdin=subprocess.DEVNULL):
    return subprocess.run([sys.executable, CLI, *args], capture_output=True, text=True, stdin=stdin)


def cli_in_terminal(*args, answer: str):
    """Run with a pseudo-terminal on stdin that has `answer` typed into it."""
    leader, follower = pty.openpty()
    try:
        os.write(leader, answer.encode() + b"\n")
        proc = subprocess.Popen(
            [sys.executable, CLI, *args], stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        os.close(follower)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    return proc.returncode, out.decode(), err.decode()


def crashed_workspace(tmp_path: Path) -> Path:
    """Session s1: turn 1 finished (a.txt); turn 2 created b.txt and changed c.txt, then the process
    died (no end snapshot); after that the user edited c.txt by hand."""
    ws = init_repo(tmp_path / "ws", dict(ORIGINAL))
    state = workspace_state_dir(ws)
    conversation = Conversation()
    recorder = SessionRecorder(SessionLog(state / "sessions" / "s1.jsonl"), conversation, lambda: {})
    store = CheckpointStore(open_repo(ws, state, []), state, "s1")
    for task in ("change a", "add b, change c"):
        conversation.add_user(task)
        recorder.sync()
        store.begin_turn(task)
        store.ensure_checkpoint()
        if task == "change a":
            (ws / "a.txt").write_text("agent a\n")
            store.end_turn()
    (ws / "b.txt").write_text("agent b\n")
    (ws / "c.txt").write_text("agent c\n")
    recorder.close()  # ... and the process is killed here: turn 2 never ends
    (ws / "c.txt").write_text("agent c\nthe user's fix after the crash\n")
    return ws


def run_hint(ws: Path, stdout: str, path: str) -> None:
    """Run the recovery command undo printed, for one path."""
    command = re.search(r"`(git [^`]*restore --source=\S+ -- )PATH`", stdout)
    assert command, stdout
    done = subprocess.run(
        ["bash", "-c", command.group(1) + shlex.quote(path)], cwd=ws, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_cli_undo_of_an_unfinished_turn_refuses_headless_and_force_keeps_the_users_version(tmp_path):
    ws = crashed_workspace(tmp_path)
    before = user_git_state(ws)
    refused = cli("undo", "--workspace", str(ws))
    assert refused.returncode == 1
    assert "Turn 2 never finished" in refused.stderr and "--force" in refused.stderr
    assert "  b.txt" in refused.stderr and "  c.txt" in refused.stderr
    assert (ws / "c.txt").read_text().endswith("the user's fix after the crash\n") and (ws / "b.txt").exists()

    forced = cli("undo", "--force", "--workspace", str(ws))
    assert forced.returncode == 0, forced.stderr
    assert "Undid turn 2" in forced.stdout and not (ws / "b.txt").exists()
    assert (ws / "c.txt").read_text() == "c\n" and (ws / "a.txt").read_text() == "agent a\n"
    run_hint(ws, forced.stdout, "c.txt")  # what the undo overwrote comes back with the printed command
    assert (ws / "c.txt").read_text() == "agent c\nthe user's fix after the crash\n"
    assert user_git_state(ws) == before


def test_cli_undo_in_a_terminal_lists_the_files_and_asks(tmp_path):
    ws = crashed_workspace(tmp_path)
    code, out, err = cli_in_terminal("undo", "--workspace", str(ws), answer="n")
    assert code == 1 and "cancelled" in err and "c.txt" in err and "[y/N]" in err
    assert (ws / "b.txt").exists()
    code, out, err = cli_in_terminal("undo", "--workspace", str(ws), answer="y")
    assert code == 0 and "Undid turn 2" in out and "restore --source=" in out
    assert not (ws / "b.txt").exists() and (ws / "c.txt").read_text() == "c\n"
    # A finished turn with a hand edit since asks the same way.
    (ws / "a.txt").write_text("agent a\nmine\n")
    code, out, err = cli_in_terminal("undo", "--workspace", str(ws), answer="y")
    assert code == 0 and "after turn 1 ended" in err and (ws / "a.txt").read_text() == "a\n"


def test_slash_undo_of_a_resumed_crashed_session_asks_before_overwriting(tmp_path, monkeypatch):
    ws = crashed_workspace(tmp_path)
    asked: list[str] = []
    with FakeVLLM([]) as server:
        session = agent_session(ws, server.base_url, latest=True)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "n")
    dispatch(session, "/undo")
    question = "\n".join(session.said[-2:])
    assert asked and "Turn 2 never finished" in question and "  b.txt" in question and "  c.txt" in question
    assert session.said[-1] == "Undo cancelled; nothing changed." and (ws / "b.txt").exists()
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    dispatch(session, "/undo")
    assert not (ws / "b.txt").exists() and (ws / "c.txt").read_text() == "c\n"
    assert any("The overwritten versions are kept" in line for line in session.said)
    assert session.agent.conversation.entries[-1].kind == "note"


def test_cli_diff_shows_the_turn_and_lists_later_hand_edits_apart(tmp_path):
    ws = crashed_workspace(tmp_path)
    assert cli("undo", "--force", "--workspace", str(ws)).returncode == 0  # back to turn 1 only
    (ws / "a.txt").write_text("agent a\nthe user's line\n")
    (ws / "notes.txt").write_text("the user's new file\n")
    diff = cli("diff", "--workspace", str(ws))
    assert diff.returncode == 0 and "+agent a" in diff.stdout
    assert "the user's line" not in diff.stdout and "notes.txt" not in diff.stdout
    assert "changed since turn 1 ended" in diff.stderr and "a.txt, notes.txt" in diff.stderr
    stat = cli("diff", "--stat", "--session", "--workspace", str(ws))
    assert "1 file changed" in stat.stdout and "notes.txt" in stat.stderr


def test_cli_diff_of_an_unfinished_turn_compares_with_the_files_now_and_says_so(tmp_path):
    ws = crashed_workspace(tmp_path)
    diff = cli("diff", "--workspace", str(ws))
    assert diff.returncode == 0
    assert "+agent b" in diff.stdout and "+the user's fix after the crash" in diff.stdout
    assert "agent a" not in diff.stdout
    assert "Turn 2 has not finished" in diff.stderr and "may include your own edits" in diff.stderr


def test_slash_diff_shows_what_the_turn_wrote_not_later_edits(tmp_path):
    ws = init_repo(tmp_path / "ws", dict(ORIGINAL))
    script = [Reply(calls=[Call("write", {"path": "a.txt", "content": "agent a\n"})]), Reply(content="ok")]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url)
        session.agent.run("change a")
        server.assert_done()
    (ws / "a.txt").write_text("agent a\nthe user's line\n")
    dispatch(session, "/diff")
    shown = session.said[-1]
    assert "+agent a" in shown and "the user's line" not in shown.split("Not shown above")[0]
    assert "changed since turn 1 ended (by you or another program): a.txt" in shown
    session.history.close()
