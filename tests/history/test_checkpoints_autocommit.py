"""git.auto_commit: the agent's changes in their own commit, the user's earlier changes in another."""

from __future__ import annotations

import pytest
from gitworkspace import git, init_repo, isolate_git

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.autocommit import commit_turn
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import undo_last


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def finished_turn(ws, change, task="Fix the parser\n\nmore detail"):
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, []), state, "s1")
    store.begin_turn(task)
    store.ensure_checkpoint()
    change()
    return store, store.end_turn()


def files_in(ws, commit):
    return git(ws, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", commit).split()


def test_users_dirty_file_is_committed_first_in_its_own_commit(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.py": "v0\n", "b.py": "b0\n", "c.py": "c0\n"})
    base = git(ws, "rev-parse", "HEAD").strip()
    (ws / "a.py").write_text("user's edit\n")  # uncommitted work in a file the agent will change
    (ws / "c.py").write_text("user staged this\n")
    git(ws, "add", "c.py")  # staged work in a file the agent leaves alone

    def change():
        (ws / "a.py").write_text("agent's edit\n")
        (ws / "new.py").write_text("created by the agent\n")

    store, turn = finished_turn(ws, change)
    report = commit_turn(store, turn)
    user_commit, agent_commit = report.commits
    assert report.user_commit == user_commit
    assert git(ws, "rev-parse", "HEAD").strip() == agent_commit
    assert git(ws, "rev-parse", f"{user_commit}^").strip() == base
    assert files_in(ws, user_commit) == ["a.py"]
    assert git(ws, "show", f"{user_commit}:a.py") == "user's edit\n"
    assert sorted(files_in(ws, agent_commit)) == ["a.py", "new.py"]
    assert git(ws, "show", f"{agent_commit}:a.py") == "agent's edit\n"
    assert (
        git(ws, "log", "-1", "--format=%an|%s", agent_commit).strip() == "vllm-bot|vllm-bot: Fix the parser"
    )
    assert git(ws, "log", "-1", "--format=%an", user_commit).strip() == "Test User"
    assert git(ws, "status", "--porcelain") == "M  c.py\n"  # the user's staged file: still staged only
    assert git(ws, "show", f"{agent_commit}:c.py") == "c0\n"


def test_agent_only_changes_make_one_commit_and_undo_takes_it_back(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.py": "v0\n"})
    base = git(ws, "rev-parse", "HEAD").strip()
    store, turn = finished_turn(ws, lambda: (ws / "a.py").write_text("agent\n"))
    report = commit_turn(store, turn)
    assert len(report.commits) == 1 and report.user_commit is None
    assert git(ws, "status", "--porcelain") == ""
    assert undo_last(store, ask=None).done
    assert git(ws, "rev-parse", "HEAD").strip() == base
    assert (ws / "a.py").read_text() == "v0\n"
    assert git(ws, "status", "--porcelain") == ""


def test_undo_keeps_a_commit_that_is_no_longer_head(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.py": "v0\n"})
    store, turn = finished_turn(ws, lambda: (ws / "a.py").write_text("agent\n"))
    agent_commit = commit_turn(store, turn).commits[-1]
    (ws / "other.txt").write_text("x\n")
    git(ws, "add", "other.txt")
    git(ws, "commit", "-q", "-m", "the user's next commit")
    outcome = undo_last(store, ask=None)
    assert outcome.done and any("stays in history" in line for line in outcome.lines)
    git(ws, "merge-base", "--is-ancestor", agent_commit, "HEAD")  # raises unless still in history
    assert (ws / "a.py").read_text() == "v0\n"


def test_works_without_a_configured_identity(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.py": "v0\n"}, identity=False)
    (ws / "a.py").write_text("user\n")
    store, turn = finished_turn(ws, lambda: (ws / "a.py").write_text("agent\n"))
    report = commit_turn(store, turn)
    assert len(report.commits) == 2
    assert git(ws, "log", "-1", "--format=%cn", report.commits[0]).strip() == "vllm-bot"


def test_nothing_to_commit_in_a_plain_directory(tmp_path):
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    store, turn = finished_turn(ws, lambda: (ws / "a.txt").write_text("b\n"))
    report = commit_turn(store, turn)
    assert report.commits == [] and "not a git repository" in (report.skipped or "")
