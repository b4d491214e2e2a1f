"""decide() as a table over tool kinds x modes x grants x sandboxed, plus "always" grants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.calls import ToolCall
from vllm_bot.policy import Grants, decide, is_read_only_command, remember

MODES = ("ask", "auto-edit", "full-auto")


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
    (EXEC_RO, G_NONE, True, ("allow", "allow", "allow")),
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
    (call("write", path="/home/u/project/.vllm-bot/config.json", content="{}"), G_NONE, True, ("deny",) * 3),
    (call("write", path="sub/.GIT/hooks/post-checkout", content="x"), G_NONE, True, ("deny",) * 3),
    (call("write", path=".github/workflows/ci.yml", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("write", path=".gitignore", content="x"), G_NONE, True, ("ask", "allow", "allow")),
    (call("exec", command="rm -rf ~"), G_TOOLS, True, ("deny",) * 3),
    (call("exec", command="rm -rf ~"), Grants(lines={"rm -rf ~"}), False, ("deny",) * 3),
    (call("exec", command=""), G_NONE, True, ("deny",) * 3),
    (call("exec"), G_NONE, True, ("deny",) * 3),
    (call("exec", command=["ls"]), G_NONE, True, ("deny",) * 3),
    (ToolCall("c", "exec", {"command": "ls"}, {"error": "bad JSON"}), G_NONE, True, ("deny",) * 3),
]


@pytest.mark.parametrize(("tool_call", "grants", "sandboxed", "expected"), CASES)
def test_decide_table(tool_call, grants, sandboxed, expected):
    got = tuple(decide(tool_call, mode, grants, sandboxed=sandboxed).decision for mode in MODES)
    assert got == expected


def test_tool_kinds_override_and_unknown_tools_are_external():
    search = call("search_code", query="x")
    assert decide(search, "auto-edit", Grants()).decision == "ask"
    kinds = {"search_code": "read"}
    assert decide(search, "ask", Grants(), tool_kinds=kinds).decision == "allow"
    assert decide(WRITE, "ask", Grants(), tool_kinds={"write": "read"}).decision == "allow"


def test_every_verdict_has_a_reason():
    for tool_call, grants, sandboxed, _ in CASES:
        for mode in MODES:
            assert decide(tool_call, mode, grants, sandboxed=sandboxed).reason


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
        verdict = decide(call("exec", command=text), mode, Grants(commands={"ls"}))
        assert verdict.decision in ("allow", "ask", "deny")
