"""`python cli.py undo`, `diff` and `sessions` from the shell (names, flags and exit codes are a
contract), and the matching slash commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.conversation import Conversation
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.session_recorder import SessionRecorder
from vllm_bot.history.sessions import SessionLog, find_session

CLI = str(Path(__file__).resolve().parents[2] / "cli.py")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def cli(*args, cwd=None):
    # No terminal on stdin: undo must refuse, never wait for an answer.
    return subprocess.run(
        [sys.executable, CLI, *args], capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL
    )


def workspace_with_two_turns(tmp_path):
    """A repository where session s1 changed a.txt (turn 1) and created b.txt (turn 2)."""
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    state = workspace_state_dir(ws)
    conversation = Conversation()
    recorder = SessionRecorder(SessionLog(state / "sessions" / "s1.jsonl"), conversation, lambda: {})
    store = CheckpointStore(open_repo(ws, state, []), state, "s1")
    for task, change in [
        ("change a", lambda: (ws / "a.txt").write_text("agent a\n")),
        ("add b", lambda: (ws / "b.txt").write_text("agent b\n")),
    ]:
        conversation.add_user(task)
        recorder.sync()
        store.begin_turn(task)
        store.ensure_checkpoint()
        change()
        store.end_turn()
    recorder.close()
    return ws


def test_diff_shows_the_last_turn_or_the_whole_session(tmp_path):
    ws = workspace_with_two_turns(tmp_path)
    last = cli("diff", "--workspace", str(ws))
    assert last.returncode == 0 and "+agent b" in last.stdout and "agent a" not in last.stdout
    whole = cli("diff", "--session", cwd=ws)
    assert "+agent a" in whole.stdout and "+agent b" in whole.stdout
    stat = cli("diff", "--session", "--stat", "--id", "s1", cwd=ws)
    assert "a.txt" in stat.stdout and "2 files changed" in stat.stdout


def test_undo_steps_back_then_says_nothing_is_left(tmp_path):
    ws = workspace_with_two_turns(tmp_path)
    listing = cli("undo", "--list", "--workspace", str(ws))
    assert listing.returncode == 0 and "change a" in listing.stdout and "add b" in listing.stdout
    first = cli("undo", "--workspace", str(ws))
    assert first.returncode == 0 and "Undid turn 2" in first.stdout and not (ws / "b.txt").exists()
    second = cli("undo", cwd=ws)
    assert second.returncode == 0 and (ws / "a.txt").read_text() == "a\n"
    third = cli("undo", cwd=ws)
    assert third.returncode == 1 and "Nothing to undo" in third.stderr
    notes = [e.content for e in find_session(ws / ".vllm-bot", "s1").entries if e.kind == "note"]
    assert len(notes) == 2 and "b.txt" in notes[0]  # a resumed session tells the model


def test_undo_refuses_over_hand_edits_unless_forced(tmp_path):
    ws = workspace_with_two_turns(tmp_path)
    (ws / "b.txt").write_text("the user's edit\n")
    refused = cli("undo", "--workspace", str(ws))
    assert refused.returncode == 1
    assert "b.txt" in refused.stderr and "--force" in refused.stderr
    assert (ws / "b.txt").read_text() == "the user's edit\n"
    forced = cli("undo", "--force", "--workspace", str(ws))
    assert forced.returncode == 0 and not (ws / "b.txt").exists()
    assert "restore --source=refs/vllm-bot/checkpoints/s1/2-undo" in forced.stdout


def test_commands_in_a_workspace_without_checkpoints_create_nothing(tmp_path):
    ws = tmp_path / "empty"
    ws.mkdir()
    undo = cli("undo", "--workspace", str(ws))
    assert undo.returncode == 1 and "No checkpoints" in undo.stderr
    diff = cli("diff", cwd=ws)  # the same case, the same exit code as undo
    assert diff.returncode == 1 and "No checkpoints" in diff.stderr and diff.stdout == ""
    sessions = cli("sessions", cwd=ws)
    assert sessions.returncode == 0 and "No saved sessions" in sessions.stdout
    assert list(ws.iterdir()) == []
    assert cli("undo", "--workspace", str(tmp_path / "missing")).returncode == 2


def test_sessions_lists_time_first_task_and_turns(tmp_path):
    ws = workspace_with_two_turns(tmp_path)
    table = cli("sessions", "--workspace", str(ws))
    assert table.returncode == 0
    header, row = table.stdout.splitlines()
    assert header.split()[:4] == ["ID", "LAST", "USED", "TURNS"]
    assert row.startswith("s1 ") and row.rstrip().endswith("change a") and " 2 " in row
    rows = [json.loads(line) for line in cli("sessions", "--json", cwd=ws).stdout.splitlines()]
    assert rows[0]["id"] == "s1" and rows[0]["turns"] == 2


def test_main_parser_resume_flags():
    from vllm_bot.app import build_parser

    args = build_parser().parse_args(["--continue"])
    assert args.continue_ and args.resume is None
    assert build_parser().parse_args(["--continue", "-p", "x"]).continue_
    assert build_parser().parse_args(["--resume", "2025"]).resume == "2025"
    clash = cli("--continue", "--resume", "x")
    assert clash.returncode == 2 and "not allowed with" in clash.stderr


def test_an_id_prefix_matching_several_sessions_says_so(tmp_path):
    ws = workspace_with_two_turns(tmp_path)
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, []), state, "s2")
    store.begin_turn("touch c")
    store.ensure_checkpoint()
    (ws / "c.txt").write_text("c\n")
    store.end_turn()
    done = cli("diff", "--id", "s", "--workspace", str(ws))
    assert done.returncode == 2 and "several sessions match 's'" in done.stderr
    assert cli("diff", "--id", "s2", "--workspace", str(ws)).returncode == 0
