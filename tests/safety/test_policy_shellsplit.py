"""The shell splitter behind the policy: structure, quote removal checked against real bash, fuzzing."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_bot.safety.shellsplit import Redirect, ShellSyntaxError, Word, split_commands


def argvs(line: str) -> list[list[str]]:
    return [[w.text for w in part.words] for part in split_commands(line)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("a && b || c; d & e\nf", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]),
        ("a | b |& c", [["a"], ["b"], ["c"]]),
        ("echo $(rm x) `touch y`", [["rm", "x"], ["touch", "y"], ["echo", "$(rm x)", "`touch y`"]]),
        ("cat <(a) >(b)", [["a"], ["b"], ["cat", "<(a)", ">(b)"]]),
        ("(a; (b)) | { c; }", [["a"], ["b"], ["c"]]),
        ("echo 'a b' \"c d\" e\\ f", [["echo", "a b", "c d", "e f"]]),
        ('echo "a $(b "c") d"', [["b", "c"], ["echo", 'a $(b "c") d']]),
        ('echo "`b \\"x\\"`"', [["b", '"x"'], ["echo", '`b \\"x\\"`']]),
        ("ls \\\n  -la", [["ls", "-la"]]),
        ("ls # rm -rf /\npwd", [["ls"], ["pwd"]]),
        ("echo a#b", [["echo", "a#b"]]),
        ("! ls", [["ls"]]),
        ("echo }", [["echo", "}"]]),
        ("find . -exec rm {} \\;", [["find", ".", "-exec", "rm", "{}", ";"]]),
    ],
)
def test_structure(line: str, expected: list[list[str]]):
    assert argvs(line) == expected


def test_redirections_and_assignments():
    [part] = split_commands("FOO=1 BAR= cmd 2>&1 >out <in &>>log 3<>rw <<<'s' x")
    assert [w.text for w in part.words] == ["cmd", "x"]
    assert part.assignments == (("FOO", Word("1")), ("BAR", Word("")))
    assert part.redirects == (
        Redirect(">&", 2, Word("1")),
        Redirect(">", None, Word("out")),
        Redirect("<", None, Word("in")),
        Redirect("&>>", None, Word("log")),
        Redirect("<>", 3, Word("rw")),
        Redirect("<<<", None, Word("s")),
    )


def test_group_redirections_become_their_own_part():
    parts = split_commands("{ ls; } > out")
    assert parts[-1].words == () and parts[-1].redirects == (Redirect(">", None, Word("out")),)


@pytest.mark.parametrize(
    ("line", "dynamic"),
    [("$HOME", True), ("${HOME}", True), ("'$HOME'", False), ('"$HOME"', True), ("*.py", True),
     ("'*.py'", False), ("a[bc]", True), ("[", False), ("{a,b}", True), ("{", False), ("$'\\x2d'", False),
     ("~/x", True), ("~+/.git", True), ("a=~", True), ("'~'", False), ("$'\\x2egit'", False),
     ("$'\\u00e9'", True), ("$(pwd)", True), ("a$", False), ("$1", True), ("$?", True)],
)  # fmt: skip
def test_dynamic_words(line: str, dynamic: bool):
    part = split_commands("echo " + line)[-1]
    assert part.words[1].dynamic is dynamic


@pytest.mark.parametrize(
    "line",
    ["echo 'x", 'echo "x', "echo `x", "echo $(x", "(ls", "ls )", "{ ls }", "ls &&", "ls |", "|| ls",
     "cat <<EOF\nx\nEOF", "if x; then y; fi", "for a in b; do c; done", "case x in y) z;; esac",
     "f() { x; }", "function f { x; }", "echo $((1+1))", "((x++))", "echo $[1]", "echo ${x:-y}",
     "a=(1 2)", "ls >", "ls ;;", "x\\", "[[ -f x ]]", "time ls", "echo ${", "}"],
)  # fmt: skip
def test_unsupported_or_invalid_lines_raise(line: str):
    with pytest.raises(ShellSyntaxError):
        split_commands(line)


def test_nesting_is_bounded():
    with pytest.raises(ShellSyntaxError):
        split_commands("echo " + "$(" * 40 + "x" + ")" * 40)
    assert argvs("echo " + "$(" * 5 + "x" + ")" * 5)[0] == ["x"]


@given(st.text(max_size=300))
@settings(max_examples=500)
def test_never_fails_with_anything_but_a_syntax_error(text: str):
    try:
        split_commands(text)
    except ShellSyntaxError:
        pass


# Quote removal agrees with bash. The alphabet has no operators or substitutions, so bash runs exactly
# one command: printf, which prints its arguments NUL-separated.
WORD_ALPHABET = st.sampled_from([*"ab -=\\'\"$*?[]{},.:#", "\\\n", "\t"])


@given(st.lists(WORD_ALPHABET, max_size=25).map("".join))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_static_words_match_bash(tmp_path_factory, text: str):
    line = "printf '%s\\0' " + text
    try:
        parts = split_commands(line)
    except ShellSyntaxError:
        return
    if len(parts) != 1 or parts[0].redirects or any(w.dynamic for w in parts[0].words):
        return
    cwd = tmp_path_factory.getbasetemp()
    result = subprocess.run(["bash", "-c", line], capture_output=True, cwd=cwd, env={"PATH": "/usr/bin:/bin"})
    if result.returncode != 0:  # bash rejected it (e.g. a quote we did not see); nothing to compare
        return
    printed = result.stdout.decode().split("\0")[:-1] or [""]
    ours = [w.text for w in parts[0].words[2:]]
    assert ours == printed or (not ours and printed == [""])


# Every command bash really runs is one of the parts we judged, with the arguments we judged. The
# marker commands m1/m2 are shell functions that append their argv to a trace file (not to stderr, where
# bash's own messages such as "m1 : command not found" would look like a run); the tokens cannot form
# any other command that does anything. bash may expand one word twice (the target of `2>&1<(m1)`), so
# runs are compared as a set of argvs, each matched by a judged part with the same words, or the same
# name and an argument only known at run time.
TOKENS = st.sampled_from(
    ["m1", "m2", " ", ";", "&&", "||", "|", "&", "\n", "$(", ")", "`", "(", "{ ", "; }", "'", '"', "\\",
     "#", "<(", "x", "\\\n", "2>&1", ">/dev/null", "$'", "~", "-v", "a[", "]", "\\x41"]
)  # fmt: skip
MARKERS = "".join(
    f'{name}() {{ local r={name} a; for a; do r+=$\'\\037\'"$a"; done; printf \'%s\\036\' "$r" >> "$TRACE"; }}; '
    for name in ("m1", "m2")
)  # one write per record: a process substitution runs at the same time as its command


def _runs(trace) -> list[list[str]]:
    if not trace.exists():
        return []
    return [record.split("\x1f") for record in trace.read_text().split("\x1e")[:-1]]


def _explains(part, argv: list[str]) -> bool:
    words = part.words
    if not words or words[0].dynamic or words[0].text != argv[0]:
        return False
    return any(w.dynamic for w in words[1:]) or [w.text for w in words] == argv


@given(st.lists(TOKENS, max_size=14).map("".join))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_command_bash_runs_was_judged(tmp_path_factory, line: str):
    try:
        parts = split_commands(line)
    except ShellSyntaxError:
        return
    if any(p.words and p.words[0].dynamic for p in parts):
        return  # a command name known only at run time (even `<( ) m1` runs m1) is never read-only
    cwd = tmp_path_factory.mktemp("run")
    trace = cwd / "trace"
    env = {"PATH": "/usr/bin:/bin", "TRACE": str(trace)}
    subprocess.run(["bash", "-c", MARKERS + "\n" + line], capture_output=True, cwd=cwd, env=env, timeout=10)
    for argv in _runs(trace):
        assert any(_explains(p, argv) for p in parts), f"bash ran {argv}, we judged {parts}"


@pytest.mark.parametrize("line", ["m1\\ ", "2>&1<(m1)", "m1 $'\\x41' ~", "m1 a\\\nb"])
def test_lines_hypothesis_once_found_are_explained(tmp_path, line: str):
    """`m1\\ ` runs nothing (bash says "m1 : command not found"); `2>&1<(m1)` runs m1 twice."""
    parts = split_commands(line)
    trace = tmp_path / "trace"
    env = {"PATH": "/usr/bin:/bin", "TRACE": str(trace)}
    subprocess.run(
        ["bash", "-c", MARKERS + "\n" + line], capture_output=True, cwd=tmp_path, env=env, timeout=10
    )
    for argv in _runs(trace):
        assert any(_explains(p, argv) for p in parts), f"bash ran {argv}, we judged {parts}"
