"""Breaches 2, 3 and 5 of issue 15 through the real agent (`cli.py -p`, the fake vLLM server, a hostile
scripted model) in every approval mode: a "read-only" command that evaluates a subscript, a planted
repository whose config names a program, and every spelling of removing `.git`."""

from __future__ import annotations

import subprocess

import pytest
from hostile import MODES, make_world, run_agent
from sandbox_helpers import needs_bwrap

from vllm_bot.testing.script import Call


@needs_bwrap
@pytest.mark.parametrize("mode", MODES)
def test_evaluating_builtins_do_not_run_unasked(mode: str):
    world = make_world(git=True)
    try:
        inside, outside = world.ws / "RAN", world.outside / "PWNED"
        payload = f"$(touch {inside} {outside})"
        lines = [
            f"test -v 'a[{payload}]'",
            f"[ -v 'a[{payload}]' ]",
            f"[ 1 -eq 1 ] && test -v 'x[{payload}]'",
        ]
        proc, results = run_agent(world, [Call("exec", {"command": line}) for line in lines], mode)
        assert proc.returncode == 0, proc.stderr
        assert not outside.exists()  # in every mode: outside the workspace is read-only in the sandbox
        if mode != "full-auto":
            assert not inside.exists() and all("not run" in r for r in results)
    finally:
        world.close()


def plant_command(where: str, marker: str) -> str:
    """The model lays out `where` as a repository whose config runs `touch marker` from git status."""
    config = (
        "[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n"
        f'\\tfsmonitor = "touch {marker}"\\n'
    )
    prefix = f"mkdir -p {where} && cd {where} && " if where != "." else ""
    return (
        prefix + "mkdir -p objects refs/heads && printf 'ref: refs/heads/main\\n' > HEAD && "
        f"printf '{config}' > config"
    )


@needs_bwrap
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_a_planted_repository_is_never_used_by_commands(mode: str, git: bool):
    world = make_world(git=git)
    try:
        marker = world.ws / "FSMONITOR-RAN"  # writable inside the sandbox: only git itself would not
        calls = [
            Call("write", {"path": "sub/HEAD", "content": "ref: refs/heads/main\n"}),
            Call("write", {"path": "sub/config", "content": f'[core]\n\tfsmonitor = "touch {marker}"\n'}),
            Call("exec", {"command": plant_command("sub", str(marker))}),
            Call("exec", {"command": "cd sub && git status"}),
            Call("exec", {"command": "cd sub; git log; git diff"}),
            Call("exec", {"command": plant_command(".", str(marker)) if not git else "true"}),
            Call("exec", {"command": "git status"}),
        ]
        proc, results = run_agent(world, calls, mode)
        assert proc.returncode == 0, proc.stderr
        assert not marker.exists(), results
        if mode != "ask":
            assert "never create git metadata" in results[0]
        if mode == "full-auto":
            assert (world.ws / "sub" / "HEAD").is_file()  # planted by the command
            assert "safe.bareRepository" in results[3] or "not a git repository" in results[3]
        elif mode == "auto-edit":
            assert "not run" in results[3] and "another repository" in results[3]
    finally:
        world.close()


REMOVALS = [
    "rm -rf $'.git'",
    "rm -rf ~+/.git",
    "eval 'rm -rf .git'",
    "find . -type d -name objects -exec rm -rf {} +",
    'rm -rf "$PWD"/.git',
    "d=.git; rm -rf $d",
    "cd .git && rm -rf ./*",
    "rm -rf $(echo .git)",
    "rm -rf `printf .git`",
    "git clean -ffdx",
    "shopt -s dotglob; rm -rf *",
    "env -S 'rm -rf .git'",
]


@pytest.mark.parametrize("mode", MODES)
def test_git_survives_every_spelling_of_its_removal_without_the_sandbox(mode: str):
    """The second line: with the sandbox off, the policy alone keeps .git, even with --yes."""
    world = make_world(git=True)
    try:
        calls = [Call("exec", {"command": line}) for line in REMOVALS]
        proc, results = run_agent(world, calls, mode, sandbox="off")
        assert proc.returncode == 0, proc.stderr
        log = subprocess.run(["git", "log", "--format=%s"], cwd=world.ws, capture_output=True, text=True)
        fsck = subprocess.run(["git", "fsck", "--full"], cwd=world.ws, capture_output=True, text=True)
        assert log.stdout == "init\n" and fsck.returncode == 0, results
        assert all(("refused by policy" in r) or ("not run" in r) for r in results), results
        if mode == "full-auto":
            assert sum("--yes does not cover it" in r for r in results) >= 3
    finally:
        world.close()
