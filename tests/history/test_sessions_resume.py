"""The loop with checkpoints and session saving attached (real client, fake vLLM over HTTP, real
files and git): lazy checkpoints, /undo and /diff, /resume, and resuming after a crash."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gitworkspace import git, init_repo, isolate_git
from stand_in_tools import agent_session

from vllm_bot.events import Notice
from vllm_bot.history.session_codec import INTERRUPTED
from vllm_bot.history.sessions import find_session, list_sessions
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.ui.slash.registry import dispatch

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def test_a_turn_that_changes_files_is_checkpointed_saved_and_undoable(tmp_path):
    ws = init_repo(tmp_path / "ws", {"old.txt": "old\n"})
    script = [
        Reply(calls=[Call("write", {"path": "src/new.py", "content": "x = 1\n"})]),
        Reply(calls=[Call("exec", {"command": "rm old.txt"})]),
        Reply(content="Tidied up."),
    ]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url)
        outcome = session.agent.run("tidy up")
        server.assert_done()
    assert outcome.answer == "Tidied up."
    store = session.history.store
    assert [(t.n, t.end is not None) for t in store.ledger.turns] == [(1, True)]  # one per user turn
    dispatch(session, "/diff stat")
    assert "old.txt" in session.said[-1] and "src/new.py" in session.said[-1]

    dispatch(session, "/undo")
    assert (ws / "old.txt").read_text() == "old\n" and not (ws / "src").exists()
    assert any("Undid turn 1" in line for line in session.said)
    note = session.agent.conversation.entries[-1]
    assert note.kind == "note" and "old.txt" in note.content
    session.history.close()
    saved = find_session(session.state_dir, None)
    assert saved.entries == session.agent.conversation.entries and saved.turns == 1


def test_reads_and_refused_calls_take_no_checkpoint(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    script = [
        Reply(calls=[Call("read", {"path": "a.txt"})]),
        Reply(calls=[Call("exec", {"command": "touch made.txt"})]),  # refused: headless "ask" mode
        Reply(content="Could not run it."),
    ]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url, approval="ask")
        session.agent.run("look around")
        server.assert_done()
    assert session.history.store.ledger.turns == []
    assert not (ws / "made.txt").exists()


def test_read_only_commands_take_no_checkpoint_and_a_writing_one_does(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    looking = [
        Reply(calls=[Call("exec", {"command": "ls -la && git status"})]),
        Reply(content="Looked."),
    ]
    with FakeVLLM(looking) as server:
        session = agent_session(ws, server.base_url)
        session.agent.run("look around")
        server.assert_done()
    assert session.history.store.ledger.turns == []
    writing = [Reply(calls=[Call("exec", {"command": "echo x > made.txt"})]), Reply(content="Made.")]
    with FakeVLLM(writing) as server:
        session = agent_session(ws, server.base_url)
        session.agent.run("make a file")
        server.assert_done()
    assert len(session.history.store.ledger.turns) == 1 and (ws / "made.txt").exists()


def test_auto_commit_after_a_turn(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    notices = []
    script = [Reply(calls=[Call("write", {"path": "a.txt", "content": "b\n"})]), Reply(content="ok")]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url, auto_commit=True, emit=notices.append)
        session.agent.run("change a\nwith details")
        server.assert_done()
    assert git(ws, "log", "-1", "--format=%s").strip() == "vllm-bot: change a"
    assert git(ws, "status", "--porcelain") == ""
    assert any(isinstance(n, Notice) and "Committed" in n.message for n in notices)


def test_with_checkpoints_off_undo_says_so_and_the_session_is_still_saved(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    script = [Reply(calls=[Call("write", {"path": "a.txt", "content": "b\n"})]), Reply(content="ok")]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url, checkpoints=False)
        session.agent.run("change a")
        server.assert_done()
    dispatch(session, "/undo")
    dispatch(session, "/diff everything")
    assert "git.checkpoints is false" in session.said[0] and "Usage: /diff" in session.said[1]
    assert (ws / "a.txt").read_text() == "b\n" and not (ws / ".vllm-bot" / "checkpoints").exists()
    session.history.close()
    assert find_session(session.state_dir, None).turns == 1


def test_the_user_is_told_which_files_the_checkpoint_left_out(tmp_path):
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "weights.bin").write_bytes(b"w" * 5000)
    notices = []
    script = [Reply(calls=[Call("write", {"path": "a.txt", "content": "a\n"})]), Reply(content="ok")]
    with FakeVLLM(script) as server:
        session = agent_session(ws, server.base_url, emit=notices.append)
        session.history.store.repo.max_file_bytes = 4096  # git.max_file_mb, in bytes
        session.agent.run("write a")
        server.assert_done()
    warnings = [n.message for n in notices if isinstance(n, Notice) and n.level == "warning"]
    assert warnings == [
        "not in the checkpoint, so undo cannot restore them: weights.bin (0 MB, over git.max_file_mb)"
    ]


def test_resume_picks_a_session_by_number(tmp_path, monkeypatch):
    ws = init_repo(tmp_path / "ws")
    for task in ["first session's task", "second session's task"]:
        with FakeVLLM([Reply(content="ok")]) as server:
            session = agent_session(ws, server.base_url)
            session.agent.run(task)
            session.history.close()
        time.sleep(0.02)  # distinct modification times
    with FakeVLLM([Reply(content="ok")]) as server:
        session = agent_session(ws, server.base_url)
        dispatch(session, "/resume 2")
        assert session.agent.conversation.first_task() == "first session's task"
        resumed = next(i for i, line in enumerate(session.said) if "Resumed session" in line)
        assert session.said[resumed + 1 :] == ["Where you left off:", "> first session's task", "  ok"]
        session.agent.run("more work")
        server.assert_done()
        session.history.close()
    monkeypatch.setattr("builtins.input", lambda prompt: "")  # /resume without a number: list, cancel
    dispatch(session, "/resume")
    listing = "\n".join(session.said[-3:])
    assert "1. " in listing and "more work" not in listing and "(this session)" in listing
    saved = list_sessions(session.state_dir)
    assert sorted(s.first_task for s in saved) == ["first session's task", "second session's task"]
    older = next(s for s in saved if s.first_task == "first session's task")
    assert older.turns == 2 and older.entries == session.agent.conversation.entries


CRASHING_CHILD = """
import sys
sys.path[:0] = [sys.argv[3], sys.argv[4]]
from pathlib import Path
from stand_in_tools import agent_session
session = agent_session(Path(sys.argv[2]), sys.argv[1])
session.agent.run("write the file, then run the slow tests")
"""


def session_file_has_result(ws: Path) -> bool:
    for path in (ws / ".vllm-bot" / "sessions").glob("*.jsonl"):
        if any(json.loads(line)["type"] == "result" for line in path.read_text().splitlines()):
            return True
    return False


def run_until_killed(ws: Path, base_url: str, tmp_path: Path) -> None:
    """The agent writes a file, then hangs in a slow command; kill -9 it (and the command)."""
    child = tmp_path / "child.py"
    child.write_text(CRASHING_CHILD)
    args = [sys.executable, str(child), base_url, str(ws), str(ROOT / "src"), str(ROOT / "tests")]
    proc = subprocess.Popen(args, start_new_session=True, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not session_file_has_result(ws):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the child never finished its first call"
            time.sleep(0.05)
        time.sleep(0.2)  # the slow command is running now
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_resume_after_a_crash_mid_tool_call(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    first = [
        Reply(
            calls=[
                Call("write", {"path": "result.txt", "content": "written before the crash\n"}),
                Call("exec", {"command": "sleep 120"}),
            ]
        )
    ]
    with FakeVLLM(first) as server:
        run_until_killed(ws, server.base_url, tmp_path)
    assert (ws / "result.txt").is_file()

    def sees_the_interruption(body):
        tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
        assert [m["content"].startswith("ERROR: interrupted") for m in tool_messages] == [False, True]
        assert body["messages"][-1] == {"role": "user", "content": "carry on"}

    with FakeVLLM(
        [Reply(content="The file is written; the tests were cut off.", expect=sees_the_interruption)]
    ) as server:
        session = agent_session(ws, server.base_url, latest=True)
        assert "1 tool call had not finished" in session.said[0]
        outcome = session.agent.run("carry on")
        server.assert_done()  # every call id in the request has exactly one result
        session.history.close()
    assert outcome.exit_code == 0
    assert len(list_sessions(session.state_dir)) == 1  # resumed in place, no copy
    saved = find_session(session.state_dir, None)
    assert [r.value == INTERRUPTED for r in saved.entries[2].results] == [False, True]
    assert saved.interrupted_calls == 0  # the repair was saved; loading again adds nothing

    undo = [sys.executable, str(ROOT / "cli.py"), "undo", "--workspace", str(ws)]
    refused = subprocess.run(undo, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert refused.returncode == 1 and "never finished" in refused.stderr  # may be the user's work
    assert "result.txt" in refused.stderr and (ws / "result.txt").is_file()
    forced = subprocess.run([*undo, "--force"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert forced.returncode == 0, forced.stderr
    assert "restore --source=" in forced.stdout and not (ws / "result.txt").exists()


@pytest.mark.skipif(
    importlib.util.find_spec("vllm_bot.tools") is None,
    reason="needs the tools package (ToolExecutor), which lands from the `tools` branch",
)
def test_cli_continue_after_kill_9(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    cli = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(ws), "--yes"]
    # sleep 15: the real executor may run commands in their own session, out of reach of killpg.
    first = [
        Reply(
            calls=[Call("write", {"path": "r.txt", "content": "r\n"}), Call("exec", {"command": "sleep 15"})]
        )
    ]
    with FakeVLLM(first) as server:
        proc = subprocess.Popen([*cli, "--base-url", server.base_url, "-p", "go"], start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while not session_file_has_result(ws) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    with FakeVLLM([Reply(content="resumed")]) as server:
        done = subprocess.run(
            [*cli, "--base-url", server.base_url, "--continue", "-p", "carry on"],
            capture_output=True,
            text=True,
        )
        server.assert_done()
    assert done.returncode == 0 and done.stdout.strip() == "resumed", done.stderr
    assert "interrupted" in json.dumps(server.requests[0]["messages"])


def test_a_session_resumed_from_text_mode_stays_in_text_mode(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("DEBUG", None)

    def run(server, *args):
        cli = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(ws), "--base-url", server.base_url]
        return subprocess.run([*cli, *args], capture_output=True, text=True, env=env)

    with FakeVLLM([Reply(content="first")]) as server:
        first = run(server, "--no-function-calling", "-p", "go")
        assert first.returncode == 0, first.stderr
        assert "tools" not in server.requests[0]
    with FakeVLLM([Reply(content="second")]) as server:
        done = run(server, "--continue", "-p", "carry on")
        server.assert_done()
    assert done.returncode == 0 and done.stdout.strip() == "second", done.stderr
    assert "tools" not in server.requests[0]  # still the text protocol
    assert "TOOL_CALL" in server.requests[0]["messages"][0]["content"]
