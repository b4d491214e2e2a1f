"""shellwalk: the commands of a line for the refusal rules, parsed or (outside the subset) guessed."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from vllm_bot.safety.gitguard import git_removal_reason
from vllm_bot.safety.policy import destructive_reason
from vllm_bot.safety.shellwalk import MAX_DEPTH, parse_line


def commands(line: str) -> list[list[str]]:
    return [[w.text for w in c.words] for c in parse_line(line).commands]


def test_wrappers_are_set_aside_and_shell_scripts_walked():
    line = parse_line("sudo -u root env X=1 rm -rf a | xargs -0 mv -t b; bash -c 'ls; sh -c \"rm c\"'")
    assert line.parts is not None and line.error is None
    assert [[w.text for w in c.words] for c in line.commands] == [
        ["rm", "-rf", "a"], ["mv", "-t", "b"], ["ls"], ["rm", "c"]
    ]  # fmt: skip
    assert [c.wrappers for c in line.commands[:2]] == [("sudo", "-u", "root", "env", "X=1"), ("xargs", "-0")]


def test_scripts_nest_only_up_to_the_limit():
    line = "rm x"
    for _ in range(MAX_DEPTH):
        line = "sh -c " + shlex.quote(line)
    assert commands(line) == [["rm", "x"]]
    [deeper] = parse_line("sh -c " + shlex.quote(line)).commands
    assert deeper.opaque and deeper.words[0].text == "sh"  # a script not read is marked, never dropped


def test_an_unparsable_line_is_guessed_piece_by_piece():
    line = parse_line("for f in *.py; do rm -f \"$f\"; done\ncat <<EOF\nit's\nEOF\necho 'a;b' && wc")
    assert line.parts is None and line.error
    assert commands(line.text) == [["f"], ["*.py"], ["rm", "-f", "$f"], ["cat", "<<EOF"], ["it's"], ["EOF"],
                                   ["echo", "a;b"], ["wc"]]  # fmt: skip
    assert commands('if true; then echo "$(rm -rf x)"; fi') == [
        ["true"],
        ["rm", "-rf", "x"],
        ["echo", "$(rm -rf x)"],
    ]
    assert commands("function f { rm -rf x; }") == [["f"], ["rm", "-rf", "x"]]


def test_the_line_is_split_once_and_its_commands_computed_once():
    line = parse_line("if true; then rm -rf ~; fi")
    assert line.commands is line.commands
    assert destructive_reason(line) and destructive_reason(line.text) == destructive_reason(line)


HARMFUL = [
    "rm -rf ~",
    "sudo rm -rf /",
    "bash -c 'rm -rf ~'",
    "echo $(rm -rf /)",
    "rm -rf .git",
    "find / -delete",
]
HARMLESS = ["ls ~", "rm -rf build", "echo 'rm -rf ~'", 'echo "a;b|c"', "git status", "cat .git/HEAD", "true"]
JOINS = ["{a}; {b}", "{a} && {b}", "{a} | {b}", "{a}\n{b}"]
CONSTRUCTS = [
    "if true; then {line}; fi", "for i in 1 2; do {line}; done", "while false; do {line}; done",
    "f() {{ {line}; }}; f", "case $x in a) {line};; esac", "{line}; [[ -n x ]]", "cat <<EOF\nx\nEOF\n{line}",
    "{line} <<EOF\nhello\nEOF",
]  # fmt: skip


def refused(line: str) -> bool:
    return bool(destructive_reason(line) or git_removal_reason(line, "/home/u/project"))


@given(st.sampled_from(HARMFUL + HARMLESS), st.sampled_from(HARMFUL + HARMLESS), st.sampled_from(JOINS),
       st.sampled_from(CONSTRUCTS))  # fmt: skip
def test_a_construct_outside_the_subset_neither_hides_nor_invents_a_refusal(a, b, join, construct):
    line = join.format(a=a, b=b)
    assert parse_line(line).parts is not None
    wrapped = construct.format(line=line)
    assert parse_line(wrapped).parts is None
    assert refused(wrapped) == refused(line) == (a in HARMFUL or b in HARMFUL), wrapped
