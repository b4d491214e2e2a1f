"""The read-only allowlist: which command lines cannot change anything, so they may run unasked.

A line is read-only only if the shell splitter decomposes it completely and every part is a known
read-only command whose options cannot write files or run other programs. Everything else (unknown
commands, wrappers such as env/xargs/timeout, eval, `bash -c`, redirections to files, assignments
that could steer a later expansion, anything unparsable) is not. A word that is only known at run time
(`$VAR`, `*.py`, `$(...)`) may become any option, so it is accepted only by commands for which no
option is dangerous. Redirections to /dev/null, /dev/stdout, /dev/stderr and between descriptors
(`2>&1`) are accepted: they cannot create or change a file.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

from vllm_bot.safety.scriptcheck import awk_reason, sed_reason
from vllm_bot.safety.shellsplit import Redirect, SimpleCommand, Word
from vllm_bot.safety.shellwalk import ShellLine, parse_line
from vllm_bot.safety.wrappers import words

MAX_LENGTH = 10_000
Check = Callable[[str, Sequence[Word]], "str | None"]

_FD = re.compile(r"\d+-?|-")
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_SAFE_ASSIGNMENT = re.compile(r"LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|NO_COLOR")
_ALLOWED_CONTROL = {"\n", "\t"}


def is_read_only_command(command: str) -> bool:
    """True only if every part of the shell line is a known read-only command with safe options."""
    return why_not_read_only(command) is None


def why_not_read_only(command: str) -> str | None:
    """None for a read-only line; otherwise a short reason (for the approval prompt and logs)."""
    return judge_line(parse_line(command))


def judge_line(line: ShellLine) -> str | None:
    """`why_not_read_only` for a line already split."""
    text = line.text
    if not text.strip():
        return "the command is empty"
    if len(text) > MAX_LENGTH:
        return f"the command is longer than {MAX_LENGTH} characters"
    for char in text:
        if char not in _ALLOWED_CONTROL and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            return f"the command contains the control character U+{ord(char):04X}"
    if line.parts is None:
        return f"the command cannot be judged ({line.error})"
    for part in line.parts:
        reason = judge_part(part)
        if reason:
            return reason
    return None


def judge_part(part: SimpleCommand) -> str | None:
    for redirect in part.redirects:
        reason = judge_redirect(redirect)
        if reason:
            return reason
    if part.assignments and not part.words:
        return "it sets a shell variable"
    for name, value in part.assignments:
        if not _SAFE_ASSIGNMENT.fullmatch(name) or value.dynamic:
            return f"it sets {name} for the command"
    if not part.words:
        return None
    first = part.words[0]
    if first.dynamic:
        return "the command name is only known at run time"
    rule = RULES.get(first.text)
    if rule is None:
        return f"`{first.text}` is not a known read-only command"
    return rule(first.text, part.words[1:])


def judge_redirect(redirect: Redirect) -> str | None:
    target = redirect.target
    if redirect.op in ("<&", ">&"):
        if not target.dynamic and _FD.fullmatch(target.text):
            return None
        return f"it redirects to {target.text}"
    if redirect.op == "<<<":
        return None
    if target.dynamic:
        return "a redirection target is only known at run time"
    if target.text.startswith(("/dev/tcp/", "/dev/udp/")):
        return "a redirection opens a network connection"
    if redirect.op == "<" or target.text in _HARMLESS_TARGETS:
        return None
    return f"it writes to {target.text} ({redirect.op})"


def options(
    *,
    deny: Iterable[str] = (),
    short: str = "",
    max_args: int | None = None,
    values: Iterable[str] = (),
    positional: Callable[[str], bool] | None = None,
) -> Check:
    """A check for a command whose dangerous options are known.

    deny: long options that write or run programs (GNU abbreviations such as `--out` are caught);
    short: option letters that do (also inside clusters such as `-uo`); max_args: positional
    arguments allowed (more would name an output file); values: options whose value is the next word;
    positional: a test every positional argument must pass.
    """
    long_deny = tuple(d.lstrip("-") for d in deny)
    value_options = set(values)
    restricted = bool(long_deny or short or max_args is not None or positional)

    def check(name: str, args: Sequence[Word]) -> str | None:
        count, options_done, skip = 0, False, False
        for word in args:
            if word.dynamic:
                if restricted:
                    return f"`{name}` gets an argument only known at run time ({word.text})"
                continue
            text = word.text
            if skip:
                skip = False
            elif options_done or text == "-" or not text.startswith("-"):
                count += 1
                if positional and not positional(text):
                    return f"`{name} {text}` may change something"
            elif text == "--":
                options_done = True
            elif text.startswith("--"):
                option = text[2:].split("=", 1)[0]
                if any(d.startswith(option) for d in long_deny):
                    return f"`{name} --{option}` may write files or run programs"
                skip = text in value_options
            elif any(c in short for c in text[1:]):
                return f"`{name} {text}` may write files or run programs"
            else:
                skip = text in value_options
        if max_args is not None and count > max_args:
            return f"`{name}` with {count} file arguments writes the last one"
        return None

    return check


ANY = options()

_FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}


def _find(name: str, args: Sequence[Word]) -> str | None:
    for word in args:
        if word.dynamic:
            return f"`{name}` gets an argument only known at run time ({word.text})"
        if word.text in _FIND_ACTIONS:
            return f"`{name} {word.text}` runs commands or changes files"
    return None


def _command(name: str, args: Sequence[Word]) -> str | None:
    if args and not args[0].dynamic and args[0].text in ("-v", "-V"):
        return None
    return "`command` runs another command"


def _printf(name: str, args: Sequence[Word]) -> str | None:
    """`printf -v VAR` assigns a shell variable (a later `$VAR` could run anything)."""
    if args and (args[0].dynamic or args[0].text.startswith("-v")):
        return f"`{name} {args[0].text}` may assign a shell variable"
    return None


_SET_WORDS = {"pipefail", "errexit", "nounset", "xtrace", "verbose", "noglob", "noclobber"}


def _set(name: str, args: Sequence[Word]) -> str | None:
    for word in args:
        if word.dynamic or not (re.fullmatch(r"[-+][a-zA-Z]+", word.text) or word.text in _SET_WORDS):
            return "`set` with these arguments changes the shell's parameters"
        if re.fullmatch(r"-[a-zA-Z]*k[a-zA-Z]*", word.text):
            return "`set -k` turns later arguments such as PAGER=... into environment variables"
    return None


def _script_check(reason: Callable[[list[str]], str | None]) -> Check:
    """A check for a script interpreter (sed, awk): its arguments must be known before it runs."""

    def check(name: str, args: Sequence[Word]) -> str | None:
        if any(word.dynamic for word in args):
            return f"`{name}` gets an argument only known at run time"
        return reason([word.text for word in args])

    return check


_sed = _script_check(sed_reason)
_awk = _script_check(awk_reason)


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


def _git(name: str, args: Sequence[Word]) -> str | None:
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


_SIMPLE_READERS = words(
    "ls cat head tail wc nl tac rev grep egrep fgrep stat du df pwd cd echo true false : test [ "
    "cut paste join comm column tr fold diff cmp basename dirname realpath readlink md5sum sha1sum "
    "sha224sum sha256sum sha384sum sha512sum b2sum cksum base32 base64 od hexdump strings id whoami "
    "groups uname printenv nproc uptime ps free lscpu arch jq seq expr sleep which type"
)

RULES: dict[str, Check] = {
    **dict.fromkeys(_SIMPLE_READERS, ANY),
    "printf": _printf,
    "rg": options(deny=("--pre", "--pre-glob", "--hostname-bin")),
    "find": _find,
    "fd": options(deny=("--exec", "--exec-batch"), short="xX"),
    "fdfind": options(deny=("--exec", "--exec-batch"), short="xX"),
    "tree": options(short="oR"),
    "file": options(deny=("--compile",), short="C"),
    "sort": options(deny=("--output", "--compress-program"), short="o"),
    "uniq": options(max_args=1, values=words("-f -s -w --skip-fields --skip-chars --check-chars")),
    "xxd": options(max_args=1, values=words("-c -g -l -o -s -n -cols -groupsize -len -seek -name")),
    "date": options(
        deny=("--set",),
        short="s",
        values=("-d", "--date", "-r", "--reference", "-f", "--file"),
        positional=lambda text: text.startswith("+"),
    ),
    "command": _command,
    "set": _set,
    "git": _git,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
}
