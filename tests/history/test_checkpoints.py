"""Checkpoints and undo on real repositories and plain directories (see also the property test)."""

from __future__ import annotations

import os
import shutil

import pytest
from gitworkspace import git, init_repo, isolate_git, manifest, user_git_state

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.autocommit import commit_turn
from vllm_bot.history.checkpoints import CheckpointStore, list_ledgers, prune_sessions
from vllm_bot.history.gitrepo import REF_ROOT, open_repo
from vllm_bot.history.ops import diff_text, store_from_disk, undo_last
from vllm_bot.history.snapshot import changes
from vllm_bot.history.undo import plan_undo


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def store_for(ws, session="s1", excludes=None):
    state = workspace_state_dir(ws)
    return CheckpointStore(open_repo(ws, state, excludes or []), state, session)


def agent_turn(store, task, change):
    """One user turn in which the agent changes files (checkpoint first, as the gate does)."""
    store.begin_turn(task)
    store.ensure_checkpoint()
    change()
    return store.end_turn()


def test_checkpoint_and_undo_leave_the_users_git_state_untouched(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "one\n", "b.txt": "bee\n"})
    git(ws, "branch", "feature")
    (ws / "a.txt").write_text("stashed\n")
    git(ws, "stash", "-q")
    (ws / "b.txt").write_text("staged\n")
    git(ws, "add", "b.txt")
    (ws / "b.txt").write_text("staged, then edited\n")
    before, status = user_git_state(ws), git(ws, "status", "--porcelain")
    store = store_for(ws)
    agent_turn(store, "edit", lambda: (ws / "a.txt").write_text("agent\n"))
    assert user_git_state(ws) == before
    assert undo_last(store, ask=None).done
    assert diff_text(store, whole_session=True, stat=False, color=False)
    assert user_git_state(ws) == before  # the index file byte for byte, HEAD, branches, stash
    assert git(ws, "status", "--porcelain") == status
    assert REF_ROOT not in git(ws, "for-each-ref")  # the user's repository holds none of it
    refs = git(ws, "--git-dir=.vllm-bot/git", "for-each-ref", "--format=%(refname)").split()
    assert f"{REF_ROOT}/s1/1" in refs and f"{REF_ROOT}/s1/1-end" in refs and f"{REF_ROOT}/s1/1-undo" in refs


def test_undo_restores_deleted_removes_created_and_resets_modes(tmp_path):
    ws = init_repo(tmp_path / "ws", {"keep.txt": "k\n", "dir/x.py": "x\n", "run.sh": "echo\n"})
    os.chmod(ws / "run.sh", 0o755)
    (ws / "untracked.txt").write_text("mine, never committed\n")
    start = manifest(ws)
    store = store_for(ws)

    def change():
        shutil.rmtree(ws / "dir")
        (ws / "dir").write_text("a file where the directory was\n")
        os.chmod(ws / "run.sh", 0o644)
        (ws / "untracked.txt").unlink()
        os.rename(ws / "keep.txt", ws / "moved.txt")
        (ws / "new" / "deep").mkdir(parents=True)
        (ws / "new" / "deep" / "n.txt").write_text("new\n")
        os.symlink("keep.txt", ws / "link")

    agent_turn(store, "break things", change)
    outcome = undo_last(store, ask=None)
    assert outcome.done, outcome.lines
    assert manifest(ws) == start
    assert not (ws / "new").exists()  # directories the agent made are gone when empty
    assert any("removed" in line and "moved.txt" in line for line in outcome.lines)


def test_hand_edit_is_detected_and_not_overwritten(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n", "b.txt": "b\n"})
    store = store_for(ws)
    agent_turn(store, "edit a", lambda: (ws / "a.txt").write_text("agent's version\n"))
    (ws / "a.txt").write_text("the user's own fix\n")
    (ws / "b.txt").write_text("the user's unrelated edit\n")

    refused = undo_last(store, ask=None)
    assert not refused.done
    assert "a.txt" in "\n".join(refused.lines) and "b.txt" not in "\n".join(refused.lines)
    assert (ws / "a.txt").read_text() == "the user's own fix\n"

    questions = []
    declined = undo_last(store, ask=lambda q: questions.append(q) or False)
    assert not declined.done and "a.txt" in questions[0]
    assert (ws / "a.txt").read_text() == "the user's own fix\n"

    accepted = undo_last(store, ask=lambda q: True)
    assert accepted.done
    assert (ws / "a.txt").read_text() == "original\n"
    assert (ws / "b.txt").read_text() == "the user's unrelated edit\n"  # not the agent's: kept
    assert git(ws, "--git-dir=.vllm-bot/git", "show", f"{REF_ROOT}/s1/1-undo:a.txt") == "the user's own fix\n"


def test_repeated_undo_steps_back_and_skips_turns_without_changes(tmp_path):
    ws = init_repo(tmp_path / "ws", {"f.txt": "v0\n"})
    store = store_for(ws)
    agent_turn(store, "one", lambda: (ws / "f.txt").write_text("v1\n"))
    agent_turn(store, "two", lambda: (ws / "f.txt").write_text("v2\n"))
    agent_turn(store, "ran ls only", lambda: None)
    assert undo_last(store, ask=None).done
    assert (ws / "f.txt").read_text() == "v1\n"
    assert undo_last(store, ask=None).done
    assert (ws / "f.txt").read_text() == "v0\n"
    last = undo_last(store, ask=None)
    assert not last.done and "Nothing to undo" in last.lines[0]


def test_plain_directory_gets_a_private_git_dir_and_never_a_dot_git(tmp_path):
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("1\n")
    store = store_for(ws, excludes=["node_modules/"])
    assert store.repo.private and store.repo.git_dir == ws / ".vllm-bot" / "git"

    def change():
        (ws / "a.txt").write_text("changed\n")
        (ws / "node_modules" / "pkg" / "index.js").write_text("2\n")

    turn = agent_turn(store, "t", change)
    assert [c.path for c in changes(store.repo, turn.start, turn.end)] == ["a.txt"]
    assert undo_last(store, ask=None).done
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / "node_modules" / "pkg" / "index.js").read_text() == "2\n"  # excluded: untouched
    assert not (ws / ".git").exists()
    assert git(ws, "rev-parse", "--is-inside-work-tree", check=False) == ""  # still not a repository


def test_workspace_in_a_subdirectory_only_touches_that_subdirectory(tmp_path):
    top = init_repo(tmp_path / "repo", {"sub/a.txt": "a\n", "other.txt": "o\n"})
    ws = top / "sub"
    store = store_for(ws)
    assert store.repo.user_prefix == "sub/" and store.repo.user is not None
    assert store.repo.user.place.work_tree == top and store.repo.top == ws

    def change():
        (ws / "a.txt").write_text("agent\n")
        (top / "other.txt").write_text("outside the workspace\n")

    agent_turn(store, "t", change)
    assert undo_last(store, ask=None).done
    assert (ws / "a.txt").read_text() == "a\n"
    assert (top / "other.txt").read_text() == "outside the workspace\n"
    assert (ws / ".vllm-bot").is_dir() and not (top / ".vllm-bot").exists()


def test_deleted_gitignore_comes_back_and_the_users_ignored_file_stays(tmp_path):
    ws = init_repo(tmp_path / "ws", {".gitignore": ".env\n", "app.py": "x\n"})
    (ws / ".env").write_text("SECRET=the user's\n")
    store = store_for(ws)
    agent_turn(store, "clean up", lambda: (ws / ".gitignore").unlink())
    outcome = undo_last(store, ask=None)
    assert outcome.done
    assert (ws / ".gitignore").read_text() == ".env\n"
    assert (ws / ".env").read_text() == "SECRET=the user's\n"
    assert any("kept" in line and ".env" in line for line in outcome.lines)


def test_undo_refuses_when_a_directory_with_ignored_files_is_in_the_way(tmp_path):
    ws = init_repo(tmp_path / "ws", {".gitignore": "*.log\n", "out": "a file\n"})
    store = store_for(ws)

    def change():
        (ws / "out").unlink()
        (ws / "out").mkdir()
        (ws / "out" / "run.log").write_text("ignored, maybe precious\n")

    agent_turn(store, "t", change)
    outcome = undo_last(store, ask=None)
    assert not outcome.done and "out" in outcome.lines[-1]
    assert (ws / "out" / "run.log").read_text() == "ignored, maybe precious\n"


def test_diff_of_the_last_turn_and_of_the_session(tmp_path):
    ws = init_repo(tmp_path / "ws", {".gitignore": "*.log\n", "a.txt": "a\n", "b.txt": "b\n"})
    store = store_for(ws)
    assert "No checkpoints" in diff_text(store, whole_session=False, stat=False, color=False)
    agent_turn(store, "one", lambda: (ws / "a.txt").write_text("a changed\n"))

    def second():
        (ws / "b.txt").write_text("b changed\n")
        (ws / "debug.log").write_text("ignored\n")

    agent_turn(store, "two", second)
    last = diff_text(store, whole_session=False, stat=False, color=False)
    whole = diff_text(store, whole_session=True, stat=False, color=False)
    assert "+b changed" in last and "a changed" not in last and "debug.log" not in last
    assert "+a changed" in whole and "+b changed" in whole
    assert "a.txt" in diff_text(store, whole_session=True, stat=True, color=False)


def test_an_unfinished_turn_is_undone_only_with_consent_and_stays_recoverable(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    store = store_for(ws, session="crashed")
    store.begin_turn("t")
    store.ensure_checkpoint()
    (ws / "a.txt").write_text("half-done edit\n")  # ... and the process dies: no turn end
    (ws / "b.txt").write_text("new\n")
    later = store_from_disk(ws, None)
    assert later is not None and later.session_id == "crashed"
    plan = plan_undo(later)
    assert plan is not None and plan.unfinished and sorted(plan.hand_edited) == ["a.txt", "b.txt"]
    refused = undo_last(later, ask=None)
    assert not refused.done and "never finished" in refused.lines[0] and "b.txt" in refused.lines[0]
    questions: list[str] = []
    declined = undo_last(later, ask=lambda q: questions.append(q) or False)
    assert not declined.done and "a.txt" in questions[0] and "b.txt" in questions[0]
    assert (ws / "a.txt").read_text() == "half-done edit\n" and (ws / "b.txt").exists()
    outcome = undo_last(later, ask=lambda q: True)
    assert outcome.done and (ws / "a.txt").read_text() == "a\n" and not (ws / "b.txt").exists()
    assert (
        git(ws, "--git-dir=.vllm-bot/git", "show", f"{REF_ROOT}/crashed/1-undo:a.txt") == "half-done edit\n"
    )
    assert any(f"--work-tree=. restore --source={REF_ROOT}/crashed/1-undo" in line for line in outcome.lines)


def test_repository_without_commits(tmp_path):
    ws = tmp_path / "fresh"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("a\n")
    store = store_for(ws)
    agent_turn(store, "t", lambda: (ws / "a.txt").write_text("b\n"))
    assert undo_last(store, ask=None).done
    assert (ws / "a.txt").read_text() == "a\n"
    assert git(ws, "status", "--porcelain") == "?? a.txt\n"


def test_old_sessions_are_pruned(tmp_path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    for i in range(4):
        store = store_for(ws, session=f"s{i}")
        agent_turn(store, "t", lambda i=i: (ws / "a.txt").write_text(f"{i}\n"))
        os.utime(store.ledger_path, (1000 + i, 1000 + i))
    state = workspace_state_dir(ws)
    pruned = prune_sessions(store.repo, state, keep=2, current="s3")
    assert sorted(pruned) == ["s0", "s1"]
    assert [p.stem for p in list_ledgers(state)] == ["s3", "s2"]
    assert f"{REF_ROOT}/s0/" not in git(ws, "--git-dir=.vllm-bot/git", "for-each-ref")


def test_bad_session_ids_are_rejected(tmp_path):
    ws = init_repo(tmp_path / "ws")
    with pytest.raises(ValueError):
        store_for(ws, session="../escape")


def test_repository_hooks_never_run(tmp_path):
    """A hook the agent could have planted must not run in our (unsandboxed) process."""
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    marker = tmp_path / "hook-ran"
    for hook in ("reference-transaction", "post-index-change", "pre-commit", "post-checkout"):
        path = ws / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        path.chmod(0o755)
    store = store_for(ws)
    agent_turn(store, "t", lambda: (ws / "a.txt").write_text("b\n"))
    commit_turn(store, store.ledger.turns[-1])
    assert undo_last(store, ask=None).done
    assert not marker.exists()
    git(ws, "update-ref", "refs/probe", "HEAD")  # the same hook does run for the user's own git
    assert marker.read_text() == "reference-transaction\n" * 2


def test_new_files_over_the_size_limit_stay_out_of_snapshots(tmp_path):
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "model.safetensors").write_bytes(b"w" * 5000)
    (ws / "small.txt").write_text("s\n")
    store = store_for(ws)
    store.repo.max_file_bytes = 4096
    turn = agent_turn(store, "t", lambda: (ws / "small.txt").write_text("changed\n"))
    assert turn.skipped == ["model.safetensors (0 MB, over git.max_file_mb)"]
    tree = git(ws, "--git-dir=.vllm-bot/git", "ls-tree", "-r", "--name-only", turn.start)
    assert tree.split() == ["small.txt"]
    assert undo_last(store, ask=None).done
    assert (ws / "small.txt").read_text() == "s\n" and (ws / "model.safetensors").stat().st_size == 5000


def test_a_new_session_starts_from_a_fresh_index(tmp_path):
    """Seeding keeps the stat data, so git re-hashes only what changed: from the latest earlier
    session's index, never from the user's (its entries are what the user's filters made)."""
    from vllm_bot.history.snapshot import _seed

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    first = store_for(plain, session="first")
    agent_turn(first, "t", lambda: (plain / "a.txt").write_text("b\n"))
    second = store_for(plain, session="second")
    _seed(second.repo, second.index)
    assert second.index.read_bytes() == first.index.read_bytes()

    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    store = store_for(ws)
    _seed(store.repo, store.index)
    assert not store.index.exists()  # the first session of a repository hashes its files itself
