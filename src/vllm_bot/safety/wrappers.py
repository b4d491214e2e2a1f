"""Programs that run other programs (`sudo`, `env`, `bash -c`, interpreters), for the approval policy.

Everything here compares a command by its program name (the basename), so `/bin/sh -c ...`,
`/usr/bin/env ...` and `/usr/bin/sudo ...` are treated like `sh -c`, `env` and `sudo`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath


def words(text: str) -> tuple[str, ...]:
    """A word list written as one string (keeps long allowlists readable)."""
    return tuple(text.split())


# Programs that run whatever their arguments say: an "always" grant for them would grant everything.
OPEN_ENDED = frozenset(
    words(
        "bash sh zsh dash ksh mksh ash csh tcsh fish busybox env sudo su doas pkexec runuser setpriv sg "
        "newgrp xargs parallel timeout nice nohup exec eval source . command builtin time watch strace "
        "ltrace gdb valgrind setsid stdbuf ionice taskset chrt chroot unshare nsenter flock script "
        "unbuffer faketime fakeroot proot firejail bwrap systemd-run ssh perl ruby node php lua luajit "
        "pypy pypy3 tclsh expect pwsh awk gawk mawk nawk sed find rm"
    )
)
WRAPPERS = frozenset(
    words(
        "sudo doas env nice nohup timeout time exec command builtin xargs stdbuf ionice setsid pkexec "
        "fakeroot unbuffer chronic busybox toybox parallel watch catchsegv"
    )
)
SHELLS = frozenset(words("bash sh zsh dash ksh mksh ash fish"))
# Options of the wrappers that take the next word as their value (`sudo -u root`, `timeout -s KILL`).
_VALUE_OPTIONS = {
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "--unset", "--chdir"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "time": {"-f", "-o", "--format", "--output"},
    "exec": {"-a"},
    "xargs": {"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter"},
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "ionice": {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
    "watch": {"-n", "--interval", "-q", "--equexit"},
    "parallel": {"-j", "--jobs", "-a", "--arg-file", "-d", "--delimiter", "-S", "--sshlogin"},
}
# Programs that run the shell command given to one of their options (`su -c CMD`, `script -c CMD`).
_COMMAND_OPTIONS = {
    "su": ("-c", "--command"),
    "runuser": ("-c", "--command"),
    "script": ("-c", "--command"),
    "flock": ("-c", "--command"),
    "sg": ("-c",),
}
_DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")
_SHELL_FLAG = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*")


def program_of(word: str) -> str:
    """The program a command word names: `/usr/bin/env` -> `env`."""
    return PurePosixPath(word).name if "/" in word else word


def command_start(words: list[str]) -> int:
    """Index of the real command behind wrappers (`sudo -u x`, `env X=1`, `timeout 5s`, `nice -n 5`)."""
    i = 0
    while i < len(words) and program_of(words[i]) in WRAPPERS:
        wrapper = program_of(words[i])
        i += 1
        while i < len(words):
            word = words[i]
            if word in _VALUE_OPTIONS.get(wrapper, ()):
                i += 2
            elif word.startswith("-") or "=" in word or _DURATION.fullmatch(word):
                i += 1
            else:
                break
    return min(i, len(words))


def shell_script(words: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (also `sh -lc`, `/bin/sh -ec`, `eval WORDS`, `su -c SCRIPT`,
    `script -c SCRIPT`); None for other commands."""
    index = script_index(words)
    if index is None:
        return None
    return " ".join(words[1:]) if program_of(words[0]) == "eval" else words[index]


def script_index(words: list[str]) -> int | None:
    """Where the script of `shell_script` starts in `words` (for `eval`, every word from 1 on)."""
    if not words:
        return None
    name = program_of(words[0])
    if name == "eval":
        return 1 if len(words) > 1 else None
    flags = _COMMAND_OPTIONS.get(name)
    for i, word in enumerate(words[1:-1], start=1):
        if (name in SHELLS and _SHELL_FLAG.fullmatch(word)) or (flags and word in flags):
            return i + 1
    return None


def split_env_string(words: list[str]) -> list[str]:
    """`env -S 'rm -rf x' y` runs `rm -rf x y`: the split string becomes words of their own."""
    if not words or program_of(words[0]) != "env":
        return words
    for i, word in enumerate(words[1:], start=1):
        for flag in ("--split-string=", "--split-string", "-S"):
            if word.startswith(flag):
                text = word[len(flag) :] or (words[i + 1] if i + 1 < len(words) else "")
                rest = words[i + 1 + (not word[len(flag) :]) :]
                return [*words[:i], *text.split(), *rest]
        if not word.startswith("-") and "=" not in word:
            break
    return words
