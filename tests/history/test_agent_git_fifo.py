"""A repository whose config includes a FIFO (directly, or through an included file) is refused at
once by the agent's own git, with a message naming it, instead of every git command waiting on the
FIFO until its timeout (issue 15). Regular includes keep working. Each call runs in a thread with a
generous join: without the check it would hang for minutes, and the test says so instead."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git

from vllm_bot.history.safegit import GitFailed, GitPlace, GitRunner, find_user_repo


@pytest.fixture(autouse=True)
def _git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def in_time(action) -> object:
    """What `action()` returned, or the GitFailed it raised; it must not wait on the FIFO."""
    outcome: list[object] = []

    def go() -> None:
        try:
            outcome.append(action())
        except GitFailed as e:
            outcome.append(e)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(120)
    assert outcome, "the agent's git waited on the FIFO"
    return outcome[0]


def run_status(ws: Path) -> object:
    """`git status` through the agent's runner pinned to ws's repository."""
    place = GitPlace(ws / ".git", ws)
    return in_time(lambda: GitRunner(place).run("status", "--porcelain"))


def test_an_included_fifo_is_refused_with_its_name(tmp_path):
    ws = tmp_path / "ws"
    init_repo(ws, {"a.txt": "a\n"})
    os.mkfifo(ws / "inc.fifo")
    with (ws / ".git" / "config").open("a") as f:
        f.write("[include]\n\tpath = ../inc.fifo\n")  # relative to .git/, as git resolves it
    result = run_status(ws)
    assert isinstance(result, GitFailed)
    assert f"includes {ws / '.git' / '..' / 'inc.fifo'}, which is not a regular file" in result.stderr
    assert in_time(lambda: find_user_repo(ws)) is None  # discovery does not wait on it either


def test_a_fifo_behind_a_regular_include_is_refused_too(tmp_path):
    ws = tmp_path / "ws"
    init_repo(ws, {"a.txt": "a\n"})
    os.mkfifo(ws / "deep.fifo")
    (ws / "inc.cfg").write_text(f'[includeIf "gitdir:{ws}/"]\n\tpath = {ws / "deep.fifo"}\n')
    with (ws / ".git" / "config").open("a") as f:
        f.write(f"[include]\n\tpath = {ws / 'inc.cfg'}\n")
    result = run_status(ws)
    assert isinstance(result, GitFailed)
    assert f"includes {ws / 'deep.fifo'}, which is not a regular file" in result.stderr


def test_regular_and_missing_includes_still_work(tmp_path):
    ws = tmp_path / "ws"
    init_repo(ws, {"a.txt": "a\n"})
    (ws / ".git" / "inc.cfg").write_text("[user]\n\tname = Included\n")
    with (ws / ".git" / "config").open("a") as f:
        f.write(f"[include]\n\tpath = inc.cfg\n\tpath = {ws / 'missing.cfg'}\n")
    (ws / "a.txt").write_text("changed\n")
    assert run_status(ws) == " M a.txt\n"
    assert in_time(lambda: find_user_repo(ws)) == GitPlace(ws / ".git", ws, ws / ".git")
