"""Task copies: a git worktree of HEAD (nothing a repository's config names ever runs), or a plain
copy; the agent's changes as a diff; the copy and its registration gone afterwards."""

import subprocess

from batch_support import make_repo, worktrees

from vllm_bot.batch.copies import make_copy, make_repository, remove_copy, repo_of, uncommitted


def hostile_repo(tmp_path):
    """A repository whose config and hooks would run programs on checkout, diff and add."""
    marker = tmp_path / "ran"
    repo = make_repo(
        tmp_path / "repo",
        {"app.py": "x = 1\n", "notes.txt": "hello\n", ".gitattributes": "* filter=evil diff=evil\n"},
    )
    run = f"sh -c 'echo $0 >> {marker}'"
    for key, value in (
        ("filter.evil.smudge", f"{run} smudge; cat"),
        ("filter.evil.clean", f"{run} clean; cat"),
        ("diff.evil.textconv", f"{run} textconv; cat"),
        ("core.fsmonitor", f"{run} fsmonitor"),
    ):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n")
    hook.chmod(0o755)
    return repo, marker


def test_a_worktree_copy_runs_nothing_the_repository_names_and_diffs_the_agents_work(tmp_path):
    repo, marker = hostile_repo(tmp_path)
    (repo / "untracked.txt").write_text("not committed\n")
    copy = make_copy(repo, tmp_path / "out" / "workspace", exclude=[])
    assert (copy.workspace / "app.py").read_text() == "x = 1\n"
    assert not (copy.workspace / "untracked.txt").exists()  # HEAD only
    assert uncommitted(repo_of(repo))
    copy.base_tree = copy.snapshot(tmp_path / "index")
    (copy.workspace / "app.py").write_text("x = 2\n")
    (copy.workspace / "new.py").write_text("y = 3\n")
    diff = copy.changes(tmp_path / "index")
    assert "-x = 1\n+x = 2" in diff and "+y = 3" in diff and "notes.txt" not in diff
    assert len(worktrees(repo)) == 2
    remove_copy(copy.root, copy.source)
    assert not copy.root.exists() and worktrees(repo) == [f"worktree {repo}"]
    assert not marker.exists(), marker.read_text()
    assert (repo / "app.py").read_text() == "x = 1\n"


def test_a_subdirectory_workspace_gets_its_place_in_the_worktree(tmp_path):
    repo = make_repo(tmp_path / "repo", {"pkg/mod.py": "z = 0\n", "top.txt": "t\n"})
    copy = make_copy(repo / "pkg", tmp_path / "w", exclude=[])
    assert copy.root == tmp_path / "w" and copy.workspace == tmp_path / "w" / "pkg"
    assert (copy.workspace / "mod.py").exists()
    remove_copy(copy.root, copy.source)
    assert worktrees(repo) == [f"worktree {repo}"]


def test_a_plain_directory_is_copied_without_state_or_the_batch_output_but_with_project_config(tmp_path):
    source = tmp_path / "plain"
    (source / ".vllm-bot").mkdir(parents=True)
    (source / ".vllm-bot" / "secret").write_text("s")
    (source / ".vllm-bot" / "config.json").write_text("{}")
    (source / "out").mkdir()
    (source / "out" / "results.jsonl").write_text("")
    (source / "code.py").write_text("a = 1\n")
    copy = make_copy(source, tmp_path / "copy", exclude=[source / "out"])
    assert copy.source is None and (copy.workspace / "code.py").exists()
    assert not (copy.workspace / ".vllm-bot" / "secret").exists() and not (copy.workspace / "out").exists()
    assert (copy.workspace / ".vllm-bot" / "config.json").read_text() == "{}"  # the project's settings
    assert copy.changes(tmp_path / "index") == ""
    remove_copy(copy.root, None)
    assert not copy.root.exists() and (source / "code.py").exists()


def test_a_new_repository_ignores_the_users_git_setup(tmp_path, monkeypatch):
    """Commit signing or a hooks path in the user's global config must not reach the eval's repos."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "new"
    root.mkdir()
    (root / "f.txt").write_text("f\n")
    identity = {"GIT_AUTHOR_NAME": "e", "GIT_AUTHOR_EMAIL": "e@e", "GIT_COMMITTER_NAME": "e"}
    make_repository(root, "first", {**identity, "GIT_COMMITTER_EMAIL": "e@e"})
    log = subprocess.run(
        ["git", "log", "--format=%an %s"], cwd=root, capture_output=True, text=True, check=True
    )
    assert log.stdout == "e first\n"
