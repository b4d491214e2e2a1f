"""Which repository the agent's own git takes for a workspace (safegit.find_user_repo): its own
`.git` when it has one, even a broken one (never a repository above it then), and the repository
above when its `.git` is only the sandbox's empty stand-in for a missing one (issue 22: the stand-in
stays while the next command's sandbox waits, so the banner and checkpoints meet it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git

from vllm_bot.history.safegit import find_user_repo
from vllm_bot.tools.gitenv import git_discovery_env


@pytest.fixture
def parent(monkeypatch, tmp_path) -> Path:
    isolate_git(monkeypatch, tmp_path / "outside")
    top = tmp_path / "outside" / "repo"
    init_repo(top)
    (top / "sub").mkdir()
    return top


def test_a_folder_of_a_repository_belongs_to_it(parent: Path):
    place = find_user_repo(parent / "sub")
    assert place is not None and place.git_dir == parent / ".git" and place.work_tree == parent
    assert git_discovery_env(parent / "sub")["GIT_CEILING_DIRECTORIES"] == str(parent.parent)


def test_the_empty_stand_in_does_not_hide_the_repository_above(parent: Path):
    (parent / "sub" / ".git").mkdir()
    place = find_user_repo(parent / "sub")
    assert place is not None and place.git_dir == parent / ".git" and place.work_tree == parent
    assert git_discovery_env(parent / "sub")["GIT_CEILING_DIRECTORIES"] == str(parent.parent)


def test_a_broken_git_of_its_own_is_not_passed_over(parent: Path):
    (parent / "sub" / ".git").mkdir()
    (parent / "sub" / ".git" / "config").write_text("[core]\n")
    assert find_user_repo(parent / "sub") is None
    assert git_discovery_env(parent / "sub")["GIT_CEILING_DIRECTORIES"] == str(parent)
