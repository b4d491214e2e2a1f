"""Which git commands only read, for the read-only allowlist, and in which repository.

A subcommand is read-only with the options listed here (`git status`, `git log`, `git branch --list`,
`git config --get`); global options that change how git runs (`-C`, `-c`, `--git-dir`) are not. git
also runs what the config of the repository it finds says (core.fsmonitor, filters, hooks), so a
line with git is read-only only when that repository is the workspace's own, whose config commands
cannot change (the sandbox keeps `.git/config` and hooks read-only, sandbox.git_writable or not;
unsandboxed, no command is read-only): so not after `cd`/`pushd`/`popd` in the same line.
"""

from __future__ import annotations

from collections.abc import Sequence

from vllm_bot.safety.argcheck import Check, options
from vllm_bot.safety.shellsplit import SimpleCommand, Word
from vllm_bot.safety.wrappers import words

_DIRECTORY_CHANGERS = {"cd", "pushd", "popd"}


def git_repository_reason(parts: Sequence[SimpleCommand]) -> str | None:
    """git runs what the config of the repository it finds says (core.fsmonitor, filters, ...): it is
    read-only only in the workspace's own repository, whose config the sandbox keeps read-only."""
    names = {part.words[0].text for part in parts if part.words}
    if "git" not in names:
        return None
    if names & _DIRECTORY_CHANGERS:
        return "`git` after a change of directory may use another repository (and run its config)"
    return None


# -- git -----------------------------------------------------------------------------------------
_GIT_GLOBAL = {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
_GIT_REVIEW = options(deny=("--output",))
_GIT_LIST_VALUES = words("--contains --no-contains --merged --no-merged --points-at --sort --format")


def _git_listing(deny: tuple[str, ...], short: str) -> Check:
    """`git branch`/`git tag`: only listing; a name without --list would create one."""
    check = options(deny=("--output", *deny), short=short, values=_GIT_LIST_VALUES)
    counter = options(max_args=0, values=_GIT_LIST_VALUES)

    def listing(name: str, args: Sequence[Word]) -> str | None:
        reason = check(name, args)
        if reason is None and not any(w.text in ("-l", "--list") for w in args) and counter(name, args):
            return f"`{name}` with a name creates or changes it"
        return reason

    return listing


def _git_first(allowed: set[str], then: Check = _GIT_REVIEW, empty_ok: bool = False) -> Check:
    """Subcommands like `git stash list`: the first argument must be one of `allowed`."""

    def check(name: str, args: Sequence[Word]) -> str | None:
        if not args:
            return None if empty_ok else f"`{name}` without a read-only action"
        if args[0].text not in allowed:
            return f"`{name} {args[0].text}` may change the repository"
        return then(name, args[1:])

    return check


def _git_remote(name: str, args: Sequence[Word]) -> str | None:
    if all(word.text in ("-v", "--verbose") for word in args) or args[0].text == "get-url":
        return None
    return f"`{name} {args[0].text}` may change the repository"


# `git config` reads only with one of these actions: action -> (fewest, most) names/patterns after it.
_CONFIG_ACTIONS = {
    "--get": (1, 2), "--get-all": (1, 2), "--get-regexp": (1, 2), "--get-urlmatch": (2, 2),
    "--get-color": (1, 2), "--get-colorbool": (1, 2), "--list": (0, 0), "-l": (0, 0),
}  # fmt: skip
_CONFIG_FLAGS = set(
    words(
        "--global --system --local --worktree --bool --int --bool-or-int --bool-or-str --path --expiry-date "
        "--no-type -z --null --name-only --includes --no-includes --show-origin --show-scope --fixed-value"
    )
)
_CONFIG_VALUES = {"-f", "--file", "--blob", "-t", "--type", "--default"}
# git >= 2.46 spells the actions as subcommands: `git config get NAME`, `git config list`.
_CONFIG_SUBCOMMANDS = {"get": (1, 1), "list": (0, 0)}
_CONFIG_SUBCOMMAND_FLAGS = {"--all", "--regexp", "--show-names"}
_CONFIG_SUBCOMMAND_VALUES = ("--value=", "--url=", "--default=", "--type=", "--file=", "--blob=")


def _git_config(name: str, args: Sequence[Word]) -> str | None:
    """Read-only only for one read action and at most its arguments. git stops taking options at the
    first name, so `git config core.pager less --list` sets core.pager: options after it count as values."""
    texts = [word.text for word in args]
    if texts and texts[0] in _CONFIG_SUBCOMMANDS:
        return _git_config_subcommand(name, texts[0], texts[1:])
    actions, i = [], 0
    while i < len(texts) and texts[i].startswith("-"):
        option, has_value = texts[i].split("=", 1)[0], "=" in texts[i]
        if option in _CONFIG_ACTIONS and not has_value:
            actions.append(option)
        elif option in _CONFIG_VALUES:
            i += 0 if has_value else 1
        elif option not in _CONFIG_FLAGS or has_value:
            return f"`{name} {texts[i]}` may change the configuration"
        i += 1
    if len(actions) != 1:
        return f"`{name}` without exactly one of --get or --list may change the configuration"
    fewest, most = _CONFIG_ACTIONS[actions[0]]
    if not fewest <= len(texts) - i <= most:
        return f"`{name} {actions[0]}` with {len(texts) - i} names or values may change the configuration"
    return None


def _git_config_subcommand(name: str, sub: str, texts: list[str]) -> str | None:
    positional = 0
    for text in texts:
        if (
            text in _CONFIG_FLAGS
            or text in _CONFIG_SUBCOMMAND_FLAGS
            or text.startswith(_CONFIG_SUBCOMMAND_VALUES)
        ):
            continue
        if text.startswith("-"):
            return f"`{name} {sub} {text}` may change the configuration"
        positional += 1
    fewest, most = _CONFIG_SUBCOMMANDS[sub]
    if not fewest <= positional <= most:
        return f"`{name} {sub}` with {positional} arguments"
    return None


_GIT_RULES: dict[str, Check] = {
    **dict.fromkeys(
        words(
            "status diff log show blame annotate shortlog describe rev-parse rev-list ls-files ls-tree "
            "cat-file show-ref merge-base count-objects name-rev for-each-ref whatchanged diff-tree "
            "diff-files diff-index check-ignore check-attr cherry var version"
        ),
        _GIT_REVIEW,
    ),
    "grep": options(deny=("--output", "--open-files-in-pager"), short="O"),
    "branch": _git_listing(
        words(
            "--delete --move --copy --force --set-upstream-to --set-upstream --unset-upstream "
            "--edit-description --track --no-track --create-reflog --recurse-submodules"
        ),
        "dDmMcCfut",
    ),
    "tag": _git_listing(
        words(
            "--delete --annotate --sign --local-user --message --file --force --edit --create-reflog "
            "--cleanup --trailer"
        ),
        "dasumFfe",
    ),
    "remote": _git_remote,
    "stash": _git_first({"list", "show"}),
    "worktree": _git_first({"list"}),
    "reflog": _git_first({"show", "exists"}, empty_ok=True),
    "config": _git_config,
}


def git_command(name: str, args: Sequence[Word]) -> str | None:
    """The rule for `git ...`: global options and subcommands that only read."""
    if any(word.dynamic for word in args):
        return "`git` gets an argument only known at run time"
    rest = list(args)
    while rest and rest[0].text.startswith("-"):
        option = rest.pop(0).text
        if option == "--version" and not rest:
            return None
        if option not in _GIT_GLOBAL:
            return f"`git {option}` changes how git runs"
    if not rest:
        return "`git` without a subcommand"
    sub = rest[0].text
    rule = _GIT_RULES.get(sub)
    if rule is None:
        return f"`git {sub}` is not a known read-only git command"
    return rule(f"git {sub}", rest[1:])
