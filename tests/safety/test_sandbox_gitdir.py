"""`.git` is read-only inside the sandbox by default (issue 15): no command can delete it, rewrite
HEAD or refs, or add config; nested repositories and worktrees too. `sandbox.git_writable` lets
commands commit. The repository's health (HEAD, refs, config, objects, fsck) is the marker."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sandbox_helpers import GIT, STATUS, Layout, child_env, make_layout, needs_bwrap, remove_layout, run

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox

pytestmark = needs_bwrap
G = " ".join(GIT)

# Each must fail and leave the repository exactly as it was.
GIT_ATTACKS = [
    "rm -rf .git", "rm -rf .git/*", "rm -f .git/HEAD", "echo 'ref: refs/heads/evil' > .git/HEAD",
    "echo 0000000000000000000000000000000000000000 > .git/refs/heads/main", "rm -rf .git/refs",
    "rm -rf .git/objects", "find .git -type f -delete", "find . -name objects -exec rm -rf {} +",
    "python3 -c 'import shutil; shutil.rmtree(\".git\")'", "perl -e 'unlink \".git/HEAD\" or die'",
    "mv .git .git-old", "mv .git/HEAD .git/HEAD.bak", "chmod -R 000 .git", "touch .git/config.worktree",
    "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config", "git config core.pager evil",
    "git config --local alias.st '!touch /tmp/pwned'", "echo '*.txt filter=x' > .git/info/attributes",
    "echo evil >> .git/info/exclude", "echo /tmp > .git/objects/info/alternates",
    f"{G} commit -q --allow-empty -m evil", f"{G} branch evil", f"{G} tag evil",
    "git update-ref refs/heads/main HEAD~0 HEAD~0 && git update-ref -d refs/heads/main",
    "git update-ref refs/heads/evil HEAD", "git reflog expire --expire=now --all && git gc --prune=now -q",
    f"{G} checkout -q -b evil", f"{G} stash -q --include-untracked", "git remote add evil /tmp/x",
    "git notes add -m evil", "echo x > .git/packed-refs", "ln -sfn /tmp .git/hooks",
    "echo '#!/bin/sh' > .git/hooks/post-commit", "echo gitdir: /tmp/x > .git/commondir",
    "echo x > .git/description", "git add README.md && false", "echo junk > .git/index",
]  # fmt: skip


def health(ws: Path) -> dict[str, str]:
    """What the attacks must not change (read from outside, as the user's git would)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ws), *args], capture_output=True, text=True).stdout

    files = sorted(str(p.relative_to(ws / ".git")) for p in (ws / ".git").rglob("*") if p.is_file())
    return {
        "head": (ws / ".git" / "HEAD").read_text(),
        "refs": git("for-each-ref"),
        "config": (ws / ".git" / "config").read_text(),
        "files": "\n".join(f for f in files if f != "index"),
        "fsck": git("fsck", "--no-progress") + git("status", "--porcelain"),
    }


@pytest.fixture(scope="module")
def layout():
    layout = make_layout()
    (layout.ws / "a.txt").write_text("a\n")
    yield layout
    remove_layout(layout)


@pytest.fixture(scope="module")
def sandbox(layout: Layout):
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        sandbox.mount_args()
        yield sandbox


def test_at_least_twenty_variants():
    assert len(GIT_ATTACKS) >= 20


@pytest.mark.parametrize("command", GIT_ATTACKS)
def test_git_dir_cannot_be_changed(layout: Layout, sandbox: Sandbox, command: str):
    before = health(layout.ws)
    result = run(sandbox, command, child_env(layout, sandbox))
    assert result.returncode != 0, f"{command!r} succeeded"
    assert health(layout.ws) == before
    assert not Path("/tmp/pwned").exists()


def test_reading_the_repository_still_works(layout: Layout, sandbox: Sandbox):
    script = "git status --short && git log --oneline && git diff --stat && git show --stat HEAD && git blame README.md"
    result = run(sandbox, script, child_env(layout, sandbox))
    assert result.returncode == 0 and "init" in result.stdout, result.stderr


def test_nested_repository_and_worktree_git_dirs_are_read_only():
    layout = make_layout()
    try:
        nested = layout.ws / "vendor" / "lib"
        subprocess.run([*GIT, "init", "-q", str(nested)], check=True)
        subprocess.run([*GIT, "-C", str(nested), "commit", "-q", "--allow-empty", "-m", "n"], check=True)
        tree = layout.ws / "tree"
        subprocess.run([*GIT, "-C", str(layout.ws), "worktree", "add", "-q", str(tree)], check=True)
        before = [health(nested), (tree / ".git").read_text()]
        with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
            env = child_env(layout, sandbox)
            for command in [
                "rm -rf vendor/lib/.git", "echo x > vendor/lib/.git/HEAD", "git -C vendor/lib config core.x y",
                "echo 'gitdir: /tmp/x' > tree/.git", f"{G} -C tree commit -q --allow-empty -m x",
                f"echo x > {layout.ws}/.git/worktrees/tree/HEAD",
            ]:  # fmt: skip
                assert run(sandbox, command, env).returncode != 0, command
            assert run(sandbox, "echo ok > vendor/lib/file.txt", env).returncode == 0  # its files are fine
        (nested / "file.txt").unlink()
        assert [health(nested), (tree / ".git").read_text()] == before
    finally:
        remove_layout(layout)


def test_git_writable_lets_commands_commit_but_not_plant_hooks_or_config():
    layout = make_layout()
    try:
        config = SandboxConfig(git_writable=True)
        with Sandbox(layout.ws, config, STATUS, home=layout.home) as sandbox:
            env = child_env(layout, sandbox)
            result = run(
                sandbox, f"echo b > b.txt && {G} add b.txt && {G} commit -qm mine && {G} branch x", env
            )
            assert result.returncode == 0, result.stderr
            for command in ["git config core.fsmonitor x", "echo x > .git/hooks/pre-commit", "mv .git g"]:
                assert run(sandbox, command, env).returncode != 0, command
        log = subprocess.run(
            [*GIT, "-C", str(layout.ws), "log", "--format=%s"], capture_output=True, text=True
        )
        assert log.stdout.split() == ["mine", "init"]
    finally:
        remove_layout(layout)


def test_the_status_says_whether_git_is_writable():
    assert ".git read-only" in STATUS.describe()
    from vllm_bot.safety.sandbox import probe

    assert ".git WRITABLE" in probe(SandboxConfig(git_writable=True)).describe()
