"""The shell splitter behind the policy: structure, quote removal checked against real bash, fuzzing."""

from __future__ import annotations

import subprocess
from collections import Counter

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
     ("'*.py'", False), ("a[bc]", True), ("[", False), ("{a,b}", True), ("{", False), ("$'\\x2d'", True),
     ("~/x", False), ("$(pwd)", True), ("a$", False), ("$1", True), ("$?", True)],
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


# Every command bash really runs is one of the parts we judged. The marker commands m1/m2 are shell
# functions that report each call; the tokens cannot form any other command that does anything.
TOKENS = st.sampled_from(
    ["m1", "m2", " ", ";", "&&", "||", "|", "&", "\n", "$(", ")", "`", "(", "{ ", "; }", "'", '"', "\\",
     "#", "<(", "x", "\\\n", "2>&1", ">/dev/null"]
)  # fmt: skip
PRELUDE = "m1() { printf 'm1\\n' >&2; }; m2() { printf 'm2\\n' >&2; }\n"


@given(st.lists(TOKENS, max_size=14).map("".join))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_command_bash_runs_was_judged(tmp_path_factory, line: str):
    try:
        parts = split_commands(line)
    except ShellSyntaxError:
        return
    if any(p.words and p.words[0].dynamic for p in parts):
        return  # a command name known only at run time (even `<( ) m1` runs m1) is never read-only
    judged = Counter(p.words[0].text for p in parts if p.words and p.words[0].text in ("m1", "m2"))
    cwd = tmp_path_factory.getbasetemp()
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", "-c", PRELUDE + line], capture_output=True, cwd=cwd, env=env, timeout=10)
    ran = Counter(name for name in result.stderr.decode(errors="replace").split() if name in ("m1", "m2"))
    assert ran <= judged, f"bash ran {ran}, we judged {judged}"
