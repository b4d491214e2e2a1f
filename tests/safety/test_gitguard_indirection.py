"""Breach 5 of issue 15: every quoting and indirection form of removing `.git` is refused where it
certainly hits `.git` and asked where it cannot be known, in every mode, --yes included. Each
refused variant is also run by real bash in a scratch repository, to show that it really damages it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vllm_bot.calls import ToolCall
from vllm_bot.safety.approval import ApprovalGate
from vllm_bot.safety.policy import Grants, decide

MODES = ("ask", "auto-edit", "full-auto")

# Each of these really removes or breaks .git when bash runs it in the workspace (checked below).
REFUSED = [
    "rm -rf $'.git'",
    "rm -rf $'\\x2egit'",
    "rm -rf $'\\056git'",
    "rm -rf ~+/.git",
    "eval 'rm -rf .git'",
    "eval rm -rf .git",
    "find . -type d -name objects -exec rm -rf {} +",
    "find . -name HEAD -delete",
    "find . ! -name '*.py' -delete",
    "find . -path '*/refs/*' -delete",
    "find . -iname 'head' -delete",
    'rm -rf "$PWD"/.git',
    "rm -rf ${PWD}/.git",
    "rm -rf ./.git/",
    "rm -rf .g?t",
    "rm -rf .[g]it",
    "rm -rf {.git,x}",
    "rm -rf {.,}git",
    "d=.git; rm -rf $d",
    'export D=.git && rm -rf "$D"',
    "cd .git && rm -rf ./*",
    "find . -name config -delete",
    "cd .git; rm -rf objects refs",
    '"r"m -rf ".g"it',
    "\\rm -rf .git",
    "env -S 'rm -rf .git'",
    "setsid rm -rf .git",
    "su -c 'rm -rf .git'",
    "trap 'rm -rf .git' EXIT",
    "shopt -s dotglob; rm -rf *",
    ": > .git/HEAD",
    "echo x > .git/config",
    "rm -rf sub/../.g[i]t",
    "mv .git .git.bak",
    "find -delete",
    "find . -name '*' -delete",
    "script -c 'rm -rf .git' /dev/null",
]

# Refused too, but not run here: the tool is not installed, or rm itself refuses `.` and `..`.
REFUSED_UNPROVEN = [
    "busybox rm -rf .git",
    "parallel rm -rf ::: .git",
    "cd .git && rm -rf .",
    "rm -rf .git/..",
    "find . -type d -empty -delete",
    "watch -n 1 rm -rf .git",
    "pkexec rm -rf .git",
]

# The target is only known when the command runs: the user decides, whatever the mode.
ASKED = [
    "rm -rf $(echo .git)",
    "rm -rf `printf .git`",
    'rm -rf "$X"',
    'eval "$CMD"',
    'bash -c "$SCRIPT"',
    "echo 'rm -rf .git' | bash",
    "bash <<< 'rm -rf .git'",
    "git clean -ffdx",
    "git clean -fdX",
    'cd "$D" && rm -rf objects',
    "cd - && rm -rf x",
    "cd && rm -rf x",
    "find . -name x -prune -o -delete",
    "find . -regex '.*/objects' -delete",
    "ls | xargs rm -rf",
    "$RM -rf .git",
    "hash -p /bin/rm del; del -rf .git",
    "shopt -s expand_aliases; alias del='rm -rf'; del .git",
    "rm -rf ~-/x",
    'for d in .git x; do rm -rf "$d"; done',
    'find "$DIR" -delete',
    'sh -c "$(cat cmd.txt)"',
    'trap "$T" EXIT',
    "rm -rf ${D:-.git}",
    'find . -exec sh -c "$S" {} \\;',
]


def call(command: str) -> ToolCall:
    return ToolCall("call_1", "exec", {"command": command})


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("origin")
    ws = base / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.py").write_text("print(1)\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "a.py"], ["commit", "-qm", "init"], ["tag", "v1"]):
        subprocess.run([*git, *args], cwd=ws, check=True, capture_output=True)
    return ws


def healthy(ws: Path) -> bool:
    """The repository is still there, its HEAD commit readable and its objects complete."""
    env = {"PATH": "/usr/bin:/bin", "GIT_CEILING_DIRECTORIES": str(ws.parent), "HOME": str(ws.parent)}
    head = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=ws, capture_output=True, text=True, env=env
    )
    fsck = subprocess.run(["git", "fsck", "--full"], cwd=ws, capture_output=True, env=env)
    config = (ws / ".git" / "config").is_file() and (ws / ".git" / "config").read_text().startswith("[core]")
    return head.stdout == "init\n" and fsck.returncode == 0 and config


@pytest.mark.parametrize("line", REFUSED)
def test_each_refused_form_really_damages_git_when_bash_runs_it(repository: Path, tmp_path: Path, line: str):
    ws = tmp_path / "ws"
    shutil.copytree(repository, ws, symlinks=True)
    assert healthy(ws)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "D": ".git"}
    subprocess.run(
        ["bash", "-c", line], cwd=ws, capture_output=True, env=env, timeout=20, stdin=subprocess.DEVNULL
    )
    assert not healthy(ws), f"{line!r} did not damage the repository, so it proves nothing"


@pytest.mark.parametrize("line", REFUSED + REFUSED_UNPROVEN)
def test_refused_in_every_mode_whatever_was_granted(line: str):
    generous = Grants(tools={"exec"}, commands={"rm", "mv", "find", "eval"}, lines={line})
    for mode in MODES:
        for sandboxed in (True, False):
            verdict = decide(call(line), mode, generous, sandboxed=sandboxed, workspace="/home/u/project")  # type: ignore[arg-type]
            assert verdict.decision == "deny", (line, mode, sandboxed, verdict.reason)
            assert "never allowed" in verdict.reason


@pytest.mark.parametrize("line", ASKED)
def test_asked_in_every_mode_unless_the_user_allowed_that_exact_line(line: str):
    for mode in MODES:
        for sandboxed in (True, False):
            kwargs = {"sandboxed": sandboxed, "workspace": "/home/u/project"}
            verdict = decide(call(line), mode, Grants(tools={"exec"}, commands={"rm"}), **kwargs)  # type: ignore[arg-type]
            assert verdict.decision == "ask", (line, mode, sandboxed, verdict.reason)
            assert ".git" in verdict.reason and "whatever the approval mode" in verdict.reason
            granted = decide(call(line), mode, Grants(lines={line}), **kwargs)  # type: ignore[arg-type]
            assert granted.decision == "allow"


def test_headless_yes_says_that_yes_does_not_cover_it():
    gate = ApprovalGate("full-auto", None, workspace="/home/u/project")
    result = gate(call('rm -rf "$X"'))
    assert result is not None and result.kind == "error"
    assert "--yes does not cover it" in str(result.value)
