"""Commands that remove or move the workspace's .git are refused in every mode, --yes included."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.calls import ToolCall
from vllm_bot.config import load_config
from vllm_bot.safety.approval import ApprovalGate
from vllm_bot.safety.policy import Grants, decide
from vllm_bot.session import Session
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

WS = "/home/u/project"
MODES = ("ask", "auto-edit", "full-auto")

DENIED = [
    "rm -rf .git",
    "rm -f .git/index.lock .git/index",
    "rm -f .git/*.lock",
    "rm -rf ./.git/",
    "rm -fr .git/objects",
    "rm .git/index",
    "rm -rf -- .git",
    "rmdir .git/refs/tags",
    "unlink .git/HEAD",
    "shred -u .git/index",
    "mv .git /tmp/x",
    "mv .git/objects old-objects",
    "mv evil .git/hooks/pre-commit",
    "mv -t /tmp .git",
    "mv --target-directory=.git/hooks evil",
    "/bin/rm -rf .git",
    "/usr/bin/sudo rm -rf .git",
    "env X=1 rm -rf .git",
    "timeout 5s rm -rf .git",
    "sudo -u root rm -rf .git",
    "cd sub && rm -rf ../.git",
    "cd sub/deep; rm -r ../../.git",
    "cd src; cd ..; cd lib && rm -rf ../.git",
    "(cd sub && rm -rf ../.git)",
    "rm -rf sub/../.git",
    "ls && rm -rf .git && echo done",
    "echo $(rm -rf .git)",
    "bash -c 'rm -rf .git'",
    "/bin/sh -c 'cd sub && rm -rf ../.git'",
    'sh -lc "mv .git ../g"',
    "rm -rf .g*",
    "rm -rf .gi?",
    "rm -rf .[g]it",
    "rm -rf .*",
    "rm -rf {.git,build}",
    "rm -rf .{git,cache}",
    'rm -rf "$PWD/.git"',
    "rm -rf $(pwd)/.git",
    "rm -rf .GIT",
    "rm -rf .",
    "find . -name .git -exec rm -rf {} +",
    "find . -name '.git' -type d -exec rm -rf {} \\;",
    "find . -path '*/.git/*' -delete",
    "find .git -type f -delete",
    "find .git/objects -name '*.pack' -exec rm {} +",
    "find . -delete",
    "find . -type f -mtime +30 -delete",
    "find . -name '.g*' -execdir sh -c 'rm -rf \"$1\"' _ {} \\;",
    "find . -name .git -type d | xargs rm -rf",
    "find . -name .git -print0 | xargs -0 -I{} mv {} /tmp",
    "echo .git | xargs rm -rf",
    "if [ -d .git ]; then rm -rf .git; fi",
    "for d in .git; do rm -rf $d; done; rm -rf .git",
    "cat <<EOF\nx\nEOF\nrm -rf .git",
    "cd /tmp; rm -rf .git",  # had the cd failed, rm would run in the workspace: every directory counts
]

ALLOWED = [
    "rm -rf build dist .pytest_cache",
    "rm -f .git/index.lock",
    "rm .git/refs/heads/main.lock .git/index.lock",
    "rm -rf *",
    "cd build && rm -rf *",
    "rm -rf sub/.git",
    "rm .gitignore .gitattributes",
    "mv .github .github-old",
    "rm -rf foo.git",
    "ls .git && cat .git/HEAD",
    "cp -r .git /tmp/backup",
    "git rm -r --cached build",
    "find . -name .git",
    "find . -name '*.pyc' -delete",
    "find . -type d -name __pycache__ -exec rm -rf {} +",
    "find . -name .git -prune -o -name '*.orig' -delete",
    "find . -not -path './.git/*' -type f -name '*.tmp' -delete",
    "find build -delete",
    "find . -type f -execdir sh -c 'echo \"$1\"' _ {} \\;",
    "rm -rf ../other/.git",
    'rm -f ""',
    "rm -rf \"build\" ./dist/ 'node_modules'",
    "git clean -fd",
    "find . -name '*.o' -o -name '*.pyc' -prune",
    "rm -rf $'build'",
    "d=build; rm -rf $d",
    "rm -rf ~+/build",
    "find . -name .git -prune -o -type f -name '*.tmp' -exec rm {} +",
    "eval 'rm -rf build'",
    "git log HEAD~3 --oneline",
]


def call(command: str) -> ToolCall:
    return ToolCall("call_1", "exec", {"command": command})


@pytest.mark.parametrize("line", DENIED)
def test_removing_or_moving_git_is_denied_in_every_mode(line: str):
    generous = Grants(tools={"exec"}, commands={"rm", "mv", "find"}, lines={line})
    for mode in MODES:
        for sandboxed in (True, False):
            verdict = decide(call(line), mode, generous, sandboxed=sandboxed, workspace=WS)  # type: ignore[arg-type]
            assert verdict.decision == "deny", (line, mode, sandboxed)
            assert ".git" in verdict.reason and "never allowed" in verdict.reason


@pytest.mark.parametrize("line", ALLOWED)
def test_other_commands_near_git_are_not_denied(line: str):
    assert decide(call(line), "full-auto", Grants(), workspace=WS).decision == "allow"


@pytest.mark.parametrize(
    "line",
    [f"rm -rf {WS}/.git", f"mv {WS}/.git /tmp", "cd .. && rm -rf project", f"cd {WS}/sub && rm -rf ../.git",
     "cd ../project/src && rm -rf ../.git/objects", f"find {WS} -name .git -exec rm -rf {{}} +", "mv ../project /tmp"],
)  # fmt: skip
def test_absolute_paths_and_parent_directories_need_the_workspace_path(line: str):
    assert decide(call(line), "full-auto", Grants(), workspace=WS).decision == "deny"
    assert decide(call(line), "full-auto", Grants(), workspace="/srv/elsewhere").decision == "allow"


def test_without_the_workspace_path_relative_paths_are_still_matched():
    assert decide(call("cd sub && rm -rf ../.git"), "full-auto", Grants()).decision == "deny"
    assert decide(call("rm -rf /anything/.git"), "full-auto", Grants()).decision == "allow"


SEGMENTS = st.lists(st.sampled_from(["a", "src", "b c", ".", "x.git", ".github"]), max_size=4)
JOINS = ["{c}", "ls && {c}", "{c}; ls", "ls | {c}", "({c})", "{{ {c}; }}", "echo $({c})", "sudo {c}",
         "bash -c '{c}'", "true || {c}"]  # fmt: skip


@given(SEGMENTS, st.sampled_from(["rm -rf", "rm -r", "mv", "/bin/rm -fr", "unlink", "rmdir"]),
       st.sampled_from(JOINS), st.sampled_from(["", "/", "/objects", "/hooks/pre-commit"]))  # fmt: skip
def test_any_spelling_that_reaches_git_is_denied(down: list[str], remover: str, join: str, inside: str):
    """`cd` into some directories, then climb back up with `..` and name .git: always denied."""
    safe = [d for d in down if d not in (".", "b c")]
    path = "/".join([".."] * len(safe) + [".git"]) + inside
    line = (f"cd {'/'.join(safe)} && " if safe else "") + join.format(c=f"{remover} {path} x")
    verdict = decide(call(line), "full-auto", Grants(), workspace=WS)
    assert verdict.decision == "deny", line


def test_the_gate_refuses_with_a_reason_for_the_model_even_in_full_auto():
    def confirm(*_):
        raise AssertionError("a denied call must never reach the user")

    gate = ApprovalGate("full-auto", confirm, workspace=WS)
    result = gate(call("cd sub && rm -rf ../.git"))
    assert result is not None and result.kind == "error"
    text = str(result.value)
    assert "refused by policy" in text and "history" in text and "Do not retry" in text
    assert gate(call("rm -rf build")) is None


def git(ws, *args):
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True, check=True).stdout


def test_a_headless_yes_session_keeps_git_through_real_commands(tmp_path):
    """A real Session (full-auto, no sandbox) with the real tools: the removals are refused, the
    ordinary cleanup next to them runs."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "build").mkdir()
    (ws / "a.py").write_text("print(1)\n")
    git(ws, "init", "-q")
    git(ws, "add", "a.py")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    attempts = [
        f"rm -rf {ws.resolve()}/.git",
        "cd sub && rm -rf ../.git",
        "find . -name .git -exec rm -rf {} +",
    ]
    script = [Reply(calls=[Call("exec", {"command": c})]) for c in [*attempts, "rm -rf build"]]
    script.append(Reply(content="Cleaned up."))
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps({"sandbox": {"mode": "off"}, "git": {"checkpoints": False}}))
    with FakeVLLM(script) as server:
        overrides = {"vllm.base_url": server.base_url, "agent.approval": "full-auto"}
        session = Session(load_config(config_path, env={}, overrides=overrides), ws, headless=True)
        try:
            assert session.run_headless("clean the repository") == 0
        finally:
            session.close()
        server.assert_done()
        results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert all("refused by policy" in r and ".git" in r for r in results[:3]), results
    assert "refused" not in results[3] and not (ws / "build").exists()
    assert git(ws, "log", "--format=%s") == "init\n"


@given(st.text(alphabet=" .gitrmvfd/-*?[]{},$()'\"&|;\\\n`~x", max_size=80))
def test_never_raises_on_shell_like_text(text: str):
    for workspace in (WS, None):
        assert decide(call(text), "full-auto", Grants(), workspace=workspace).decision in (
            "allow",
            "ask",
            "deny",
        )
