"""The read-only allowlist: which command lines cannot change anything, so they may run unasked.

A line is read-only only if the shell splitter decomposes it completely and every part is a known
read-only command whose options cannot write files or run other programs. Everything else (unknown
commands, wrappers such as env/xargs/timeout, eval, `bash -c`, redirections to files, assignments
that could steer a later expansion, anything unparsable) is not. A word that is only known at run time
(`$VAR`, `*.py`, `$(...)`) may become any option, so it is accepted only by commands for which no
option is dangerous. Redirections to /dev/null, /dev/stdout, /dev/stderr and between descriptors
(`2>&1`) are accepted: they cannot create or change a file.

Builtins that evaluate an argument as a variable name or an arithmetic expression run the command
substitutions inside it (`test -v 'a[$(cmd)]'` runs cmd). Those that are not on the list at all
(`let`, `declare`, `read`, `unset`, `printf -v`, ...) ask; the splitter refuses `((`, `[[`, `$((`,
`${x:offset}`, `${!x}` and subscripts, so such a line asks too; `test`/`[` are read-only only with
every argument known, `-v` only on a plain name, and integer comparisons only between plain integers.
`git` is read-only only in the workspace's own repository: not after `cd`/`pushd` in the same line,
not with `-C`/`--git-dir`/`GIT_*` (see gitreadonly).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from vllm_bot.safety.argcheck import ANY, Check, options
from vllm_bot.safety.gitreadonly import git_command, git_repository_reason
from vllm_bot.safety.scriptcheck import awk_reason, sed_reason
from vllm_bot.safety.shellsplit import Redirect, SimpleCommand, Word
from vllm_bot.safety.shellwalk import ShellLine, parse_line
from vllm_bot.safety.wrappers import words

MAX_LENGTH = 10_000

_FD = re.compile(r"\d+-?|-")
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_SAFE_ASSIGNMENT = re.compile(r"LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|NO_COLOR")
_ALLOWED_CONTROL = {"\n", "\t"}


def is_read_only_command(command: str) -> bool:
    """True only if every part of the shell line is a known read-only command with safe options."""
    return why_not_read_only(command) is None


def why_not_read_only(command: str) -> str | None:
    """None for a read-only line; otherwise a short reason (for the approval prompt and logs)."""
    return why_line_not_read_only(parse_line(command))


def why_line_not_read_only(line: ShellLine) -> str | None:
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
        reason = why_part_not_read_only(part)
        if reason:
            return reason
    return git_repository_reason(line.parts)


def why_part_not_read_only(part: SimpleCommand) -> str | None:
    for redirect in part.redirects:
        reason = why_redirect_not_read_only(redirect)
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


def why_redirect_not_read_only(redirect: Redirect) -> str | None:
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


_FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}


def _find(name: str, args: Sequence[Word]) -> str | None:
    for word in args:
        if word.dynamic:
            return f"`{name}` gets an argument only known at run time ({word.text})"
        if word.text in _FIND_ACTIONS:
            return f"`{name} {word.text}` runs commands or changes files"
    return None


_TEST_NAME_OPERATORS = {"-v", "-R"}  # the operand is a variable name (bash evaluates a subscript)
_TEST_INTEGER_OPERATORS = set(words("-eq -ne -lt -le -gt -ge"))
_INTEGER = re.compile(r"[ \t]*[-+]?[0-9]+[ \t]*")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _test(name: str, args: Sequence[Word]) -> str | None:
    """`test`/`[`: every argument known; `-v`/`-R` only on a plain name; `-eq` and friends only between
    plain integers (bash evaluates both inside `[[`, and a version or option may do so here)."""
    texts = [word.text for word in args]
    if any(word.dynamic for word in args):
        return f"`{name}` gets an argument only known at run time (bash may evaluate it as a name)"
    for i, text in enumerate(texts):
        operand = texts[i + 1] if i + 1 < len(texts) else ""
        if text in _TEST_NAME_OPERATORS and not _PLAIN_NAME.fullmatch(operand):
            return f"`{name} {text} {operand}` evaluates a subscript (it can run commands)"
        integers = 0 < i < len(texts) - 1 and _INTEGER.fullmatch(texts[i - 1]) and _INTEGER.fullmatch(operand)
        if text in _TEST_INTEGER_OPERATORS and 0 < i < len(texts) - 1 and not integers:
            return f"`{name}` compares {texts[i - 1]} {text} {operand}, which are not plain integers"
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


_SIMPLE_READERS = words(
    "ls cat head tail wc nl tac rev grep egrep fgrep stat du df pwd cd echo true false : "
    "cut paste join comm column tr fold diff cmp basename dirname realpath readlink md5sum sha1sum "
    "sha224sum sha256sum sha384sum sha512sum b2sum cksum base32 base64 od hexdump strings id whoami "
    "groups uname printenv nproc uptime ps free lscpu arch jq seq expr sleep which type"
)

RULES: dict[str, Check] = {
    **dict.fromkeys(_SIMPLE_READERS, ANY),
    "printf": _printf,
    "test": _test,
    "[": _test,
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
    "git": git_command,
    "sed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
}
