"""Does a deleting `find` reach the workspace's `.git`? Part of gitguard: pure pattern matching.

A `find` that deletes (`-delete`, `-exec rm ...`) from a directory at or above `.git` descends into
it unless `.git` is pruned or excluded. Its positive name tests must then rule out every name a git
directory holds (`objects`, `HEAD`, `refs`, a branch, an object file, ...), or it certainly hits
`.git`: `find . -type d -name objects -exec rm -rf {} +` removes `.git/objects`. Expressions with
`-o`, `,` or parentheses, and `-regex` tests, are not untangled: they ask.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from vllm_bot.safety.wrappers import words

NAME_TESTS = frozenset(words("-name -iname"))
PATH_TESTS = frozenset(words("-path -ipath -wholename -iwholename"))
REGEX_TESTS = frozenset(words("-regex -iregex"))
_OBJECT = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# Names inside a git directory whose loss breaks the repository or loses history (lock files, logs
# of gc and sample hooks are left out: removing them is harmless).
GIT_DIR_NAMES = (
    *words(
        "HEAD ORIG_HEAD MERGE_HEAD config description hooks info exclude objects pack refs heads tags "
        "remotes origin main master logs index packed-refs modules worktrees commondir gitdir shallow "
        "alternates branches pre-commit post-checkout"
    ),
    _OBJECT[:2],
    _OBJECT[2:],
    f"pack-{_OBJECT}.pack",
    f"pack-{_OBJECT}.idx",
)
GIT_DIR_PATHS = ("HEAD", "config", "index", f"objects/{_OBJECT[:2]}/{_OBJECT[2:]}", "refs/heads/main",
                 "objects/pack", "hooks/pre-commit", "logs/HEAD")  # fmt: skip
_COMBINERS = frozenset(words("-o -or , ( ) \\( \\)"))
_NEGATIONS = frozenset(("!", "-not"))


@dataclass(frozen=True)
class FindVerdict:
    hits: bool  # certainly reaches .git content
    unsure: str | None = None  # why it cannot be known


def judge_find_expression(expr: Sequence[str], starts: Sequence[str]) -> FindVerdict:
    """For a deleting find whose start points are at or above `.git`: does the expression match
    something inside it? `starts` are the start points as written (for -path patterns)."""
    tests = _tests(expr)
    pruned = "-prune" in expr
    if _excludes_git(tests, starts, pruned):
        return FindVerdict(False)
    if any(not negated and names_git(pattern) for _, pattern, negated in tests):
        return FindVerdict(True)  # `-name .git -exec rm -rf {} +`
    if any(t in _COMBINERS for t in expr):
        return FindVerdict(False, "its expression combines tests with -o, ',' or parentheses")
    positive = [(test, pattern) for test, pattern, negated in tests if not negated]
    if not positive:
        return FindVerdict(True)  # nothing restricts the names: everything inside .git matches
    for test, pattern in positive:
        if test in REGEX_TESTS:
            if ".git" in pattern.lower():
                return FindVerdict(True)
            return FindVerdict(False, f"its {test} test is not matched against .git")
    return FindVerdict(all(_matches_git(test, pattern, starts) for test, pattern in positive))


def names_git(pattern: str) -> bool:
    """A name/path/regex pattern that may match `.git` itself (find's `*` matches a leading dot)."""
    lowered = pattern.lower()
    return ".git" in lowered or any(fnmatch.fnmatchcase(s, lowered) for s in (".git", "./.git", "./.git/x"))


def _tests(expr: Sequence[str]) -> list[tuple[str, str, bool]]:
    """(test, pattern, negated) for every name, path and regex test."""
    found = []
    for j, token in enumerate(expr[:-1]):
        if token in NAME_TESTS | PATH_TESTS | REGEX_TESTS:
            negated = j > 0 and expr[j - 1] in _NEGATIONS
            found.append((token, expr[j + 1], negated))
    return found


def _excludes_git(tests: list[tuple[str, str, bool]], starts: Sequence[str], pruned: bool) -> bool:
    """`-name .git -prune -o ...`, `-path ./.git -prune -o ...`, `-not -path './.git/*'`."""
    for test, pattern, negated in tests:
        if test in REGEX_TESTS:
            continue
        if pruned and not negated and test in NAME_TESTS and _fits(test, pattern, ".git"):
            return True
        if (
            pruned
            and not negated
            and test in PATH_TESTS
            and any(_fits(test, pattern, g) for g in _git_dirs(starts))
        ):
            return True
        if negated and test in PATH_TESTS and all(_fits(test, pattern, p) for p in _git_paths(starts)):
            return True
    return False


def _matches_git(test: str, pattern: str, starts: Sequence[str]) -> bool:
    if test in NAME_TESTS:
        return any(_fits(test, pattern, name) for name in GIT_DIR_NAMES)
    return any(_fits(test, pattern, path) for path in _git_paths(starts))


def _git_dirs(starts: Sequence[str]) -> list[str]:
    return [f"{s.rstrip('/') or '/'}/.git".replace("//", "/") for s in starts]


def _git_paths(starts: Sequence[str]) -> list[str]:
    return [f"{git}/{rel}" for git in _git_dirs(starts) for rel in GIT_DIR_PATHS]


def _fits(test: str, pattern: str, text: str) -> bool:
    if test.startswith("-i"):
        return fnmatch.fnmatchcase(text.lower(), pattern.lower())
    return fnmatch.fnmatchcase(text, pattern)
