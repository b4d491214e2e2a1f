"""decide() as a table over tool kinds x modes x grants x sandboxed, plus "always" grants."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.calls import ToolCall
from vllm_bot.safety.approval import Answer, ApprovalGate
from vllm_bot.safety.boundary import for_workspace
from vllm_bot.safety.policy import Grants, GrantScope, decide, grant_scope, is_read_only_command, remember
from vllm_bot.safety.wrappers import OPEN_ENDED

MODES = ("ask", "auto-edit", "full-auto")
# The boundary of a session in /home/u/project (boundary.py): the rule it finds for a file tool's path
# goes into decide, as the approval gate passes it.
BOUNDARY = for_workspace(Path("/home/u/project"), env={"HOME": "/home/u", "PATH": ""})


def rule_of(tool_call: ToolCall):
    path = tool_call.arguments.get("path")
    if tool_call.name not in ("write", "edit") or not isinstance(path, str):
        return None
    return BOUNDARY.judge(Path(os.path.realpath(BOUNDARY.workspace / os.path.expanduser(path))), write=True)


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("call_1", name, dict(arguments))


READ = call("read", path="src/app.py")
WRITE = call("write", path="src/app.py", content="x")
EDIT = call("edit", path="src/app.py", oldText="a", newText="b")
EXEC_RO = call("exec", command="git status && ls")
EXEC_RW = call("exec", command="pytest -q")
EXTERNAL = call("mcp_github_create_issue", title="x")

# (call, grants, sandboxed) -> expected decision in ask / auto-edit / full-auto
G_NONE = Grants()
G_TOOLS = Grants(tools={"write", "edit", "exec", "mcp_github_create_issue"})
G_PREFIX = Grants(commands={"pytest"})
G_LINE = Grants(lines={"pytest -q"})
CASES = [
    (READ, G_NONE, True, ("allow", "allow", "allow")),
    (READ, G_NONE, False, ("allow", "allow", "allow")),
    (WRITE, G_NONE, True, ("ask", "allow", "allow")),
    (WRITE, G_NONE, False, ("ask", "allow", "allow")),
    (WRITE, G_TOOLS, True, ("allow", "allow", "allow")),
    (EDIT, G_NONE, True, ("ask", "allow", "allow")),
    (EDIT, G_TOOLS, False, ("allow", "allow", "allow")),
    (EXEC_RO, G_NONE, True, ("ask", "allow", "allow")),  # ask mode confirms every command
    (EXEC_RO, G_NONE, False, ("ask", "ask", "allow")),
    (EXEC_RW, G_NONE, True, ("ask", "ask", "allow")),
    (EXEC_RW, G_NONE, False, ("ask", "ask", "allow")),
    (EXEC_RW, G_TOOLS, True, ("allow", "allow", "allow")),
    (EXEC_RW, G_TOOLS, False, ("ask", "ask", "allow")),  # a tool grant relies on the sandbox
    (EXEC_RW, G_PREFIX, True, ("allow", "allow", "allow")),
    (EXEC_RW, G_PREFIX, False, ("ask", "ask", "allow")),  # so does a prefix grant
    (EXEC_RW, G_LINE, True, ("allow", "allow", "allow")),
    (EXEC_RW, G_LINE, False, ("allow", "allow", "allow")),  # the exact line the user saw
    (EXTERNAL, G_NONE, True, ("ask", "ask", "allow")),
    (EXTERNAL, G_NONE, False, ("ask", "ask", "allow")),
    (EXTERNAL, G_TOOLS, True, ("allow", "allow", "allow")),
    (call("write", path=".git/hooks/pre-commit", content="x"), G_TOOLS, True, ("deny",) * 3),
    (call("edit", path="./.git/config", oldText="a", newText="b"), G_NONE, True, ("deny",) * 3),
    (call("write", path="/home/u/project/.vllm-bot/config.json", content="{}"), G_NONE, True, ("ask",) * 3),
    (
        call("write", path="/home/u/project/.vllm-bot/sessions/x.json", content="{}"),
        G_NONE,
        True,
        ("deny",) * 3,
    ),
    (call("write", path="sub/.GIT/hooks/post-checkout", content="x"), G_NONE, True, ("deny",) * 3),
    (call("write", path=".github/workflows/ci.yml", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("write", path=".gitignore", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    # auto-edit looks twice at paths the model wrote oddly (outside the workspace the tools refuse anyway)
    (call("write", path="/home/u/project/src/app.py", content="x"), G_NONE, True, ("ask", "ask", "allow")),
    (call("edit", path="../other/app.py", oldText="a", newText="b"), G_NONE, True, ("deny",) * 3),
    (call("write", path="src/../../app.py", content="x"), G_NONE, True, ("deny",) * 3),
    (
        call("write", path="~/project/app.py", content="x"),
        G_NONE,
        True,
        ("deny",) * 3,
    ),  # this ~ is not /home/u
    (call("write", path="~", content="x"), G_NONE, True, ("deny",) * 3),
    (call("write", path=".mcp.json", content="{}"), G_TOOLS, True, ("ask",) * 3),  # configures the agent
    (call("write", path=".vllm-bot/config.json", content="{}"), G_TOOLS, True, ("ask",) * 3),
    (call("write", path="docs/AGENTS.md", content="x"), G_NONE, True, ("ask", "ask", "allow")),
    (call("write", path="sub/.git/config", content="x"), G_TOOLS, True, ("deny",) * 3),
    (call("write", path="src\\..\\..\\app.py", content="x"), G_NONE, True, ("ask", "ask", "allow")),
    (call("write", path="/home/u/project/src/app.py", content="x"), G_TOOLS, True, ("allow",) * 3),
    (call("write", path="src/v1..v2.txt", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("write", path="./src/app.py", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("write", path="src/~backup.py", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("write", path="/home/u/project/.git/config", content="x"), G_TOOLS, True, ("deny",) * 3),
    (call("exec", command="rm -rf ~"), G_TOOLS, True, ("deny",) * 3),
    (call("exec", command="rm -rf ~"), Grants(lines={"rm -rf ~"}), False, ("deny",) * 3),
    (call("exec", command=""), G_NONE, True, ("deny",) * 3),
    (call("exec"), G_NONE, True, ("deny",) * 3),
    (call("exec", command=["ls"]), G_NONE, True, ("deny",) * 3),
    (ToolCall("c", "exec", {"command": "ls"}, {"error": "bad JSON"}), G_NONE, True, ("deny",) * 3),
]


@pytest.mark.parametrize(("tool_call", "grants", "sandboxed", "expected"), CASES)
def test_decide_table(tool_call, grants, sandboxed, expected):
    rule = rule_of(tool_call)
    got = tuple(decide(tool_call, mode, grants, sandboxed=sandboxed, rule=rule).decision for mode in MODES)
    assert got == expected


def test_unknown_tools_are_external():
    search = call("search_code", query="x")
    assert decide(search, "auto-edit", Grants()).decision == "ask"


def test_every_verdict_has_a_reason():
    for tool_call, grants, sandboxed, _ in CASES:
        for mode in MODES:
            assert decide(tool_call, mode, grants, sandboxed=sandboxed, rule=rule_of(tool_call)).reason


def test_remember_grants_prefixes_for_every_part_that_is_not_read_only():
    grants = Grants()
    covers = remember(grants, call("exec", command="git status && pytest -x tests && git commit -m wip"))
    assert grants.commands == {"pytest", "git commit"}
    assert "pytest" in covers
    allowed = ["pytest", "pytest -k slow tests/ 2>&1 | tail -n 30", "git commit --amend --no-edit"]
    for line in allowed:
        assert decide(call("exec", command=line), "auto-edit", grants).decision == "allow", line
    refused = ["pytest; rm -rf build", "pytest > log", "git push", "git -c core.hooksPath=x commit", "make"]
    for line in refused:
        assert decide(call("exec", command=line), "auto-edit", grants).decision == "ask", line


def test_remember_python_module_and_subcommand_prefixes():
    grants = Grants()
    remember(grants, call("exec", command="python3 -m pytest -q"))
    remember(grants, call("exec", command="npm test"))
    assert grants.commands == {"python3 -m pytest", "npm test"}
    assert decide(call("exec", command="python3 -m pytest tests/x.py"), "ask", grants).decision == "allow"
    assert decide(call("exec", command="python3 -m pip install x"), "ask", grants).decision == "ask"
    assert decide(call("exec", command="npm publish"), "ask", grants).decision == "ask"


@pytest.mark.parametrize(
    "line",
    ["bash -c 'make test'", "python3 script.py", "env FOO=1 make", "xargs rm < list", "X=1 make",
     "make > log", "$MAKE test", "sudo apt-get install x", "if true; then make; fi"],
)  # fmt: skip
def test_remember_falls_back_to_the_exact_line_for_open_ended_commands(line: str):
    grants = Grants()
    assert remember(grants, call("exec", command=line)).startswith("exactly")
    assert grants.lines == {line} and not grants.commands


@pytest.mark.parametrize(
    ("granted", "fine", "line"),
    [("sort a.txt", "sort -r b.txt", "sort -o main.py /dev/null"),
     ("sort a.txt", "sort -r b.txt", "sort -S 1k --compress-program=sh <<< $'touch x'"),
     ("git diff", "git diff HEAD~1", "git diff --output=a.txt"),
     ("xxd a.txt", "xxd b.txt", "xxd a.txt main.py"),
     ("rg TODO", "rg FIXME src", "rg --pre rm . victim.py")],
)  # fmt: skip
def test_a_grant_for_a_read_only_program_covers_only_its_read_only_uses(granted: str, fine: str, line: str):
    """In ask mode an "always" for `sort a.txt` granted `sort`; a later `sort -o FILE` or
    `--compress-program=sh` ran unasked, writing or running a shell (found by a red-team run)."""
    grants = Grants()
    assert remember(grants, call("exec", command=granted), mode="ask").startswith("commands starting")
    assert decide(call("exec", command=fine), "ask", grants, sandboxed=True).decision == "allow"
    assert decide(call("exec", command=line), "ask", grants, sandboxed=True).decision == "ask"


def test_remember_unsandboxed_grants_only_the_exact_line():
    grants = Grants()
    remember(grants, call("exec", command="pytest -q"), sandboxed=False)
    assert grants.lines == {"pytest -q"} and not grants.commands
    assert decide(call("exec", command="pytest -q"), "ask", grants, sandboxed=False).decision == "allow"
    assert decide(call("exec", command="pytest -x"), "ask", grants, sandboxed=False).decision == "ask"


def test_remember_tools():
    grants = Grants()
    remember(grants, WRITE)
    remember(grants, EXTERNAL)
    assert grants.tools == {"write", "mcp_github_create_issue"}
    assert decide(WRITE, "ask", grants).decision == "allow"


# -- property: a read-only line joined to anything that is not read-only is not read-only --------
READ_ONLY = ["ls", "git status", "cat a.txt", "grep -rn x .", "echo hi", "sed -n 1p f", "wc -l f"]
WRITERS = ["rm -rf build", "touch x", "python3 -c 1", "curl x", "git commit -m x", "sh", "tee f", "make"]
JOINS = [
    "{a} && {b}", "{a}; {b}", "{a} || {b}", "{a} | {b}", "{a}\n{b}", "{a} & {b}", "{a} $({b})",
    "{a} `{b}`", "{a} <({b})", "{a} \"$({b})\"", "({a}; {b})", "{{ {a}; {b}; }}", "{a} | xargs {b}",
    "{b} && {a}", "{a} |& {b}", "{a} > out.txt", "{a} 2> err.txt", "{a} &>> log",
]  # fmt: skip


@given(st.sampled_from(READ_ONLY), st.sampled_from(WRITERS), st.sampled_from(JOINS))
def test_a_single_writing_part_spoils_the_line(a: str, b: str, join: str):
    assert is_read_only_command(a)
    assert not is_read_only_command(join.format(a=a, b=b))


@given(st.text(max_size=200))
def test_decide_never_raises_on_arbitrary_commands(text: str):
    for mode in MODES:
        verdict = decide(call("exec", command=text), mode, Grants(commands={"ls"}), workspace="/w s/p")
        assert verdict.decision in ("allow", "ask", "deny")


# -- ask mode confirms every command; "always" there covers the read-only parts too --------------
@pytest.mark.parametrize("line", ["ls", "git status", "cat README.md", "grep -rn x .", "pwd"])
def test_ask_mode_asks_before_read_only_commands_that_auto_edit_runs(line: str):
    assert decide(call("exec", command=line), "auto-edit", Grants()).decision == "allow"
    verdict = decide(call("exec", command=line), "ask", Grants())
    assert verdict.decision == "ask" and "ask mode" in verdict.reason


def test_ask_mode_reads_with_the_read_tool_still_run():
    assert decide(READ, "ask", Grants(), sandboxed=True).decision == "allow"


def test_always_in_ask_mode_grants_the_read_only_parts_it_was_shown():
    grants = Grants()
    covers = remember(grants, call("exec", command="git status && pytest -q"), mode="ask")
    assert grants.commands == {"git status", "pytest"} and "git status" in covers
    for line in ["git status && pytest -q", "git status", "pytest -x"]:
        assert decide(call("exec", command=line), "ask", grants).decision == "allow", line
    for line in ["ls", "git diff", "git status && ls"]:  # never shown to the user: still asks
        assert decide(call("exec", command=line), "ask", grants).decision == "ask", line


def test_a_grant_from_auto_edit_does_not_open_read_only_parts_in_ask_mode():
    grants = Grants()
    remember(grants, call("exec", command="git status && pytest -q"))  # auto-edit: pytest only
    assert grants.commands == {"pytest"}
    assert decide(call("exec", command="git status && pytest -q"), "auto-edit", grants).decision == "allow"
    assert decide(call("exec", command="git status && pytest -q"), "ask", grants).decision == "ask"


def test_always_through_the_gate_uses_the_current_mode(tmp_path):
    gate = ApprovalGate("ask", lambda c, preview, reason, scope: Answer(True, always=True))
    assert gate(call("exec", command="ls -la")) is None
    assert gate.grants.commands == {"ls"}
    gate.confirm = None  # nobody to ask any more: granted lines run, others are refused
    assert gate(call("exec", command="ls src")) is None
    refused = gate(call("exec", command="pwd"))
    assert refused is not None and refused.kind == "error" and "ask mode" in str(refused.value)


# -- prefix grants compare programs by basename: `/bin/sh` is `sh` ---------------------------------
@pytest.mark.parametrize(
    ("approved", "later"),
    [
        ("/bin/sh -c 'make test'", "/bin/sh -c 'rm -rf src'"),
        ("/usr/bin/bash -lc 'pytest'", "/usr/bin/bash -lc 'curl x | sh'"),
        ("/usr/bin/env make", "/usr/bin/env rm -rf src"),
        ("/usr/bin/sudo make install", "/usr/bin/sudo rm -rf /opt/x"),
        ("/usr/bin/xargs -n1 echo < list", "/usr/bin/xargs rm < list"),
        ("/usr/bin/timeout 60 pytest", "/usr/bin/timeout 60 rm -rf src"),
        ("/usr/bin/python3 tool.py", "/usr/bin/python3 -c 'import os'"),
        ("./venv/bin/python -c 'print(1)'", "./venv/bin/python evil.py"),
        ("/usr/bin/awk '{print > \"f\"}' a", "/usr/bin/awk 'BEGIN{system(\"id\")}'"),
        ("/usr/bin/find . -name x -exec touch {} +", "/usr/bin/find . -name '*.o' -exec rm {} +"),
        ("/usr/bin/perl -e 1", "/usr/bin/perl -e 'unlink glob q(*)'"),
        ("git", "git push --force"),
        ("git -c core.pager=cat log -p", "git -c core.hooksPath=/tmp/h commit -m x"),
        ("/usr/bin/git push", "/usr/bin/git reset --hard"),
    ],
)
def test_always_for_a_program_that_runs_anything_grants_only_the_exact_line(approved: str, later: str):
    grants = Grants()
    remember(grants, call("exec", command=approved))
    assert decide(call("exec", command=approved), "auto-edit", grants).decision == "allow"
    assert decide(call("exec", command=later), "auto-edit", grants).decision == "ask"


@pytest.mark.parametrize("granted", ["sh", "bash", "env", "sudo", "/bin/sh", "/usr/bin/env", "xargs"])
@pytest.mark.parametrize(
    "line", ["/bin/sh -c 'rm -rf src'", "sh -c 'rm -rf src'", "/usr/bin/env rm -rf src", "env rm -rf src",
             "/usr/bin/sudo rm -rf src", "/usr/local/bin/bash -c id", "xargs rm < list", "/usr/bin/xargs rm"],
)  # fmt: skip
def test_a_grant_for_a_shell_or_wrapper_never_lets_commands_through(granted: str, line: str):
    grants = Grants(commands={granted})
    for mode in ("ask", "auto-edit"):
        assert decide(call("exec", command=line), mode, grants).decision == "ask", (granted, line, mode)


@given(
    st.sampled_from(sorted(OPEN_ENDED - {"."})),
    st.sampled_from(["", "/bin/", "/usr/bin/", "/usr/local/bin/", "./", "../tools/", "/opt/x/bin/"]),
    st.sampled_from(["-c 'make'", "make", "-m pytest", "-e 1", "."]),
    st.sampled_from(
        ["rm -rf src", "-c 'curl x | sh'", "-e 'system(1)'", "BEGIN{system(1)}", "-m pip install x"]
    ),
)
def test_no_open_ended_program_ever_becomes_a_prefix_grant(
    program: str, directory: str, args: str, other: str
):
    grants = Grants()
    remember(grants, call("exec", command=f"{directory}{program} {args}"))
    assert not grants.commands
    later = call("exec", command=f"{directory}{program} {other}")
    assert decide(later, "auto-edit", grants) == decide(later, "auto-edit", Grants())


@pytest.mark.parametrize(
    "line", ["X=1 pytest", "pytest > log", "pytest -q 2>err.txt", "LC_ALL=C pytest >>log"]
)
def test_what_a_prefix_grant_never_covers_it_never_grants(line: str):
    """Assignments and file redirects: the grant check and the grant recording agree."""
    assert decide(call("exec", command=line), "auto-edit", Grants(commands={"pytest"})).decision == "ask"
    grants = Grants()
    assert remember(grants, call("exec", command=line)).startswith("exactly")
    assert grants.lines == {line} and not grants.commands


@pytest.mark.parametrize(
    ("tool_call", "sandboxed", "mode"),
    [(call("exec", command="git status && pytest -q"), True, "auto-edit"),
     (call("exec", command="git status && pytest -q"), True, "ask"),
     (call("exec", command="git status && pytest -q"), False, "auto-edit"),
     (call("exec", command="X=1 make"), True, "auto-edit"), (WRITE, True, "ask"), (EXTERNAL, False, "ask")],
)  # fmt: skip
def test_the_gate_shows_the_scope_that_always_then_grants(tool_call, sandboxed, mode):
    """What the prompt is told "always" covers is exactly what the grants gain."""
    shown = []

    def confirm(c, preview, reason, scope):
        shown.append(scope)
        return Answer(True, always=True)

    gate = ApprovalGate(mode, confirm, sandboxed=sandboxed)
    assert gate(tool_call) is None
    [scope] = shown
    assert scope == grant_scope(tool_call, sandboxed=sandboxed, mode=mode)
    expected = Grants()
    assert remember(expected, tool_call, sandboxed=sandboxed, mode=mode) == str(scope)
    assert gate.grants == expected
    assert (scope.tool, scope.prefixes, scope.line) != (None, frozenset(), None)


def test_grant_scope_changes_no_grants_and_names_what_it_covers():
    exec_call = call("exec", command="git status && pytest -q")
    assert grant_scope(exec_call) == GrantScope(prefixes=frozenset({"pytest"}))
    assert str(grant_scope(exec_call, mode="ask")) == "commands starting with `git status`, `pytest`"
    assert str(grant_scope(exec_call, sandboxed=False)) == "exactly `git status && pytest -q`"
    assert str(grant_scope(WRITE)) == "every write call"


def test_an_external_tool_granted_earlier_asks_again_in_plan_mode():
    """An MCP tool granted "always" before /plan ran unasked while the plan waited for approval (found
    by a red-team review): in plan mode it asks, whatever was granted."""
    grants = Grants()
    remember(grants, EXTERNAL)
    assert decide(EXTERNAL, "auto-edit", grants).decision == "allow"
    assert decide(EXTERNAL, "plan", grants).decision == "ask"
