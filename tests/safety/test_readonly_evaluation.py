"""Breach 2 of issue 15: "read-only" must mean provably inert. Builtins and constructs that evaluate an
argument as a variable name or as arithmetic run the command substitutions inside it, so a line that
uses one with anything not plainly known asks in auto-edit. Each variant is also run by real bash to
show that it really runs its payload (a marker file outside the working directory)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vllm_bot.calls import ToolCall
from vllm_bot.safety.policy import Grants, decide
from vllm_bot.safety.readonly import why_not_read_only

# {m} is the marker path; bash runs `touch {m}` through the evaluation of a name or an expression.
EVALUATING = [
    "test -v 'a[$(touch {m})]'",
    "[ -v 'a[$(touch {m})]' ]",
    "[[ -v 'a[$(touch {m})]' ]]",
    "[[ 1 -eq 'a[$(touch {m})]' ]]",
    "[[ 'a[$(touch {m})]' -lt 1 ]]",
    "x='a[$(touch {m})]'; [[ $x -eq 1 ]]",
    "x='a[$(touch {m})]'; [[ -v $x ]]",
    "(( a[$(touch {m})] ))",
    "x='a[$(touch {m})]'; (( x ))",
    "let 'a[$(touch {m})]'",
    "x='a[$(touch {m})]'; let x",
    "echo $(( a[$(touch {m})] ))",
    "x='a[$(touch {m})]'; echo $((x))",
    "x='a[$(touch {m})]'; echo $[x]",
    "x='a[$(touch {m})]'; echo ${!x}",
    "x='a[$(touch {m})]'; echo ${a[x]}",
    "echo ${a[$(touch {m})]}",
    "set -- 1 2; echo ${@:a[$(touch {m})]}",
    "x=1; echo ${x:1:a[$(touch {m})]}",
    "unset 'a[$(touch {m})]'",
    "printf -v 'a[$(touch {m})]' x",
    "read 'a[$(touch {m})]' <<< 1",
    "echo 1 | read 'a[$(touch {m})]'",
    "declare -i y='a[$(touch {m})]'",
    "typeset 'a[$(touch {m})]'=1",
    "declare -n r='a[$(touch {m})]'; echo $r",
    "for ((i=a[$(touch {m})]; 0; )); do :; done",
    "x='a[$(touch {m})]'; a[x]=1",
]

# Inert in bash, but only provably so when every word is known: these ask too.
UNPROVEN = [
    "test 1 -eq 'x[$(touch {m})]'",
    '[ "$N" -gt 0 ]',
    "test -n $X",
    '[ -v "$NAME" ]',
    "test -R 'a[1]'",
    "[ -f * ]",
]

STILL_READ_ONLY = [
    "test -f README.md",
    "[ -d src ]",
    "[ -v HOME ]",
    "test 3 -lt 10",
    "[ x = y ]",
    "[ -n abc ]",
]


def call(command: str) -> ToolCall:
    return ToolCall("call_1", "exec", {"command": command})


def in_auto_edit(line: str) -> str:
    return decide(call(line), "auto-edit", Grants(), sandboxed=True, workspace="/home/u/project").decision


@pytest.mark.parametrize("template", EVALUATING)
def test_bash_really_runs_the_payload(tmp_path: Path, template: str):
    marker = tmp_path / "outside" / "PWNED"
    marker.parent.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(
        ["bash", "-c", "a=(1 2); " + template.replace("{m}", str(marker))],
        cwd=work,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=10,
        stdin=subprocess.DEVNULL,
    )
    assert marker.exists(), f"{template} ran nothing, so it proves nothing"


@pytest.mark.parametrize("template", EVALUATING + UNPROVEN)
def test_evaluating_lines_are_not_read_only(template: str):
    line = template.replace("{m}", "/tmp/x/PWNED")
    assert why_not_read_only(line) is not None
    assert in_auto_edit(line) == "ask", line


@pytest.mark.parametrize("line", STILL_READ_ONLY)
def test_plain_tests_stay_read_only(line: str):
    assert why_not_read_only(line) is None and in_auto_edit(line) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "cd sub && git status",
        "cd sub; git log",
        "pushd sub && git diff",
        "git status; cd sub",
        "popd; git show",
        "cd sub || true; git status",
        "cd -- sub && git log -1",
        "cd ./sub/ && git diff --stat",
        "cd sub/inner/.. && git status --short",
        "cd $DIR && git status",
        "cd ~ && git log",
        "cd .. && git status",
        "(cd sub && git status)",
        "{ cd sub; git status; }",
        "echo $(cd sub && git log)",
        "cat <(cd sub && git diff)",
        "cd sub | git status",
        "pushd sub; git blame x.py",
        "cd sub && git rev-parse HEAD",
        "cd sub && git ls-files",
    ],
)
def test_git_after_a_change_of_directory_is_not_read_only(line: str):
    """A planted repository in a subdirectory (breach 3) would run its config's commands."""
    reason = str(why_not_read_only(line))
    assert "another repository" in reason or "`pushd`" in reason or "`popd`" in reason
    assert in_auto_edit(line) == "ask"
