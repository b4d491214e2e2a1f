"""The agent's own git through GitPython (issue 34) runs nothing a planted environment variable or
repository config names, where GitPython left to itself would: its `import git` runs the program
GIT_PYTHON_GIT_EXECUTABLE names, its commands start from our whole environment (GIT_CONFIG moves
what `git config --list` reads, so the repository's filter is not overridden; GIT_EXEC_PATH is where
git finds the `git` that `worktree add` runs), and a `-c` option cannot name a key with `=` in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitworkspace import init_repo, isolate_git
from test_agent_git_config import RUN, every_operation

from vllm_bot.batch.copies import make_copy, remove_copy, repo_of
from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.autocommit import commit_turn
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import diff_text, undo_last
from vllm_bot.history.snapshot import changes

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def planted_program(folder: Path, marks: Path, name: str) -> Path:
    """An executable `name` in `folder` that leaves a mark, then behaves as git."""
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text(f'#!/bin/sh\ntouch {marks}/{name}\nexec git "$@"\n')
    program.chmod(0o755)
    return program


def plant_filter(tmp_path: Path, attributes: str, config: str) -> tuple[Path, Path]:
    """A repository whose `.gitattributes` and config (`{run}`: a program leaving a mark) name a
    filter; returns it and the folder of marks."""
    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    (ws / ".gitattributes").write_text(attributes)
    with (ws / ".git" / "config").open("a") as f:
        f.write(config.format(run=RUN.format(marks=marks, name="filter")))
    return ws, marks


def test_a_filter_whose_name_holds_an_equals_sign_runs_nothing(tmp_path: Path):
    config = '[filter "a=b"]\n\tclean = "{run}"\n\tsmudge = "{run}"\n[diff "a=b"]\n\ttextconv = "{run}"\n'
    ws, marks = plant_filter(tmp_path, "* filter=a=b diff=a=b\n", config)
    every_operation(ws)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_git_config_in_our_environment_does_not_hide_the_repositorys_filter(tmp_path: Path, monkeypatch):
    ws, marks = plant_filter(tmp_path, "* filter=x\n", '[filter "x"]\n\tclean = "{run}"\n')
    (tmp_path / "other.cfg").write_text("[user]\n\tname = x\n")
    monkeypatch.setenv("GIT_CONFIG", str(tmp_path / "other.cfg"))
    every_operation(ws)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_git_exec_path_in_our_environment_is_not_where_our_git_finds_git(tmp_path: Path, monkeypatch):
    repo = init_repo(tmp_path / "repo", {"a.txt": "a\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    planted_program(tmp_path / "exec-path", marks, "git")
    monkeypatch.setenv("GIT_EXEC_PATH", str(tmp_path / "exec-path"))
    copy = make_copy(repo, tmp_path / "copy", exclude=[])  # `git worktree add` runs git itself
    assert (copy.workspace / "a.txt").read_text() == "a\n"
    remove_copy(copy.root, repo_of(repo))
    assert sorted(p.name for p in marks.iterdir()) == []


def test_importing_gitpython_runs_no_planted_program(tmp_path: Path):
    """In a fresh interpreter (GitPython is imported once per process): its import runs nothing, and
    our git is the one on PATH whatever GIT_PYTHON_GIT_EXECUTABLE says; the variable is ours again."""
    ws = init_repo(tmp_path / "ws", {"a.txt": "a\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    planted = planted_program(tmp_path / "bin", marks, "planted-git")
    code = (
        f"import os, sys; sys.path.insert(0, {str(SRC)!r})\n"
        "from pathlib import Path\n"
        "from vllm_bot.history.safegit import find_user_repo\n"
        f"place = find_user_repo(Path({str(ws)!r}))\n"
        "import git\n"
        "print(place.work_tree, git.Git.GIT_PYTHON_GIT_EXECUTABLE, os.environ['GIT_PYTHON_GIT_EXECUTABLE'])\n"
    )
    env = {"GIT_PYTHON_GIT_EXECUTABLE": str(planted), "GIT_PYTHON_REFRESH": "quiet", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    top, executable, variable = done.stdout.split()
    assert top == str(ws) and Path(executable).name == "git" and variable == str(planted)
    assert sorted(p.name for p in marks.iterdir()) == []


@pytest.mark.parametrize("git_workspace", [True, False], ids=["git", "plain"])
def test_files_named_in_no_encoding_or_ending_in_a_newline_are_diffed_and_undone(
    tmp_path: Path, git_workspace
):
    """Why `snapshot.changes` keeps its own reading of `diff-tree -z`: GitPython's raw-diff parser
    decodes the whole output as strict UTF-8 and strips newlines from paths, so one such name in a
    turn would empty the diff (undo would see a turn that changed nothing)."""
    ws = tmp_path / "ws"
    if git_workspace:
        init_repo(ws, {"a.txt": "original\n"})
    else:
        ws.mkdir()
        (ws / "a.txt").write_text("original\n")
    odd = [os.fsdecode(b"bad\xff.txt"), "ends-in-newline\n"]
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, []), state, "s1")
    store.begin_turn("edit")
    store.ensure_checkpoint()
    (ws / "a.txt").write_text("agent\n")
    for name in odd:
        (ws / name).write_text("new\n")
    turn = store.end_turn()
    assert turn is not None
    if git_workspace:
        assert len(commit_turn(store, turn).commits) == 1
    assert {c.path for c in changes(store.repo, store.ledger.turns[0].start, store.ledger.turns[0].end)} == {
        "a.txt",
        *odd,
    }
    assert "agent" in diff_text(store, whole_session=True, stat=False, color=False)
    assert undo_last(store, ask=None, force=True).done
    assert (ws / "a.txt").read_text() == "original\n"
    assert not any((ws / name).exists() for name in odd)
