"""Judge the programs given to sed and awk: read-only unless they can write files or run commands.

sed is accepted with a script made only of addresses and commands that print or edit the pattern
space (`p`, `d`, `q`, `s///` without the `w`/`e` flags, ...); `w`, `W`, `r`, `R`, `e`, the text
commands (`a`, `i`, `c`) and `-i` are not. awk is accepted with `-F`/`-v` only and a program that
contains no `system`, `getline`, pipe, output redirection or `@` directive. Both fail safe: what the
small scanners do not understand is "not read-only".
"""

from __future__ import annotations

import re

_SED_FLAGS = {"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "--separate", "-z",
              "--null-data", "-u", "--unbuffered", "--posix", "--debug", "--sandbox"}  # fmt: skip
_SED_SIMPLE = set("pPdDqQ=lLnNgGhHxzF{}")
# `[`, then `^` and `]` that stay literal, then classes ([:alpha:], [=a=], [.a.]) or characters but a
# backslash, up to the closing `]`
_SED_BRACKET = re.compile(r"\[\^?\]?(?:\[([:=.]).*?\1\]|[^\]\\\n])*\]")
_SED_SUBSTITUTE_FLAGS = re.compile(r"[gpiImM0-9]*")
_SED_LABEL = re.compile(r"[ \t]*[A-Za-z0-9_.-]*")
_SED_EXIT_CODE = re.compile(r"[ \t]*\d*")
_SED_NUMBER = re.compile(r"\d+(~\d+)?|\$")


def sed_reason(args: list[str]) -> str | None:
    """None when `sed ARGS` only prints; otherwise why not."""
    scripts: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        text = args[i]
        i += 1
        if text in ("-e", "--expression") or text.startswith("--expression="):
            if "=" not in text and i >= len(args):
                return "sed -e without a script"
            scripts.append(text.split("=", 1)[1] if "=" in text else args[i])
            i += "=" not in text
        elif text.startswith("--"):
            if text not in _SED_FLAGS and not text.startswith("--line-length="):
                return f"`sed {text}` may write files or read a script file"
        elif text.startswith("-") and text != "-":
            cluster, _, attached = text[1:].partition("e")
            if any(c not in "nErszu" for c in cluster):
                return f"`sed {text}` may write files or read a script file"
            if "e" in text[1:]:
                if not attached and i >= len(args):
                    return "sed -e without a script"
                scripts.append(attached or args[i])
                i += not attached
        else:
            positional.append(text)
    if not scripts:
        if not positional:
            return "sed without a script"
        scripts.append(positional[0])
    for script in scripts:
        reason = _sed_script_reason(script)
        if reason:
            return reason
    return None


def _sed_script_reason(script: str) -> str | None:
    try:
        _SedScanner(script).scan()
    except ValueError as e:
        return f"the sed script {script!r} {e}"
    return None


class _SedScanner:
    def __init__(self, script: str):
        self.s = script
        self.i = 0

    def scan(self) -> None:
        while True:
            self._skip(" \t\n;")
            if self.i >= len(self.s):
                return
            if self._peek() == "#":
                end = self.s.find("\n", self.i)
                self.i = len(self.s) if end < 0 else end
                continue
            self._address()
            if self._peek() == ",":
                self.i += 1
                if self._peek() in "+~":
                    self.i += 1
                self._address(required=True)
            self._skip(" \t")
            if self._peek() == "!":
                self.i += 1
                self._skip(" \t")
            command = self._command()
            self._skip(" \t")
            if command != "{" and self.i < len(self.s) and self._peek() not in ";\n}#":
                raise ValueError(f"has unexpected text at {self.s[self.i :]!r}")

    def _command(self) -> str:
        c = self._peek()
        self.i += 1
        if c in "sy":
            self._delimited(2, regex=c == "s")
            if c == "s":
                flags = _SED_SUBSTITUTE_FLAGS.match(self.s, self.i)
                self.i = flags.end() if flags else self.i
                if self._peek() in ("w", "e"):
                    raise ValueError("uses the w or e flag (writes a file or runs a command)")
        elif c in "btT:":
            label = _SED_LABEL.match(self.s, self.i)
            self.i = label.end() if label else self.i
        elif c in "qQlL":
            number = _SED_EXIT_CODE.match(self.s, self.i)
            self.i = number.end() if number else self.i
        elif c not in _SED_SIMPLE:
            raise ValueError(f"uses the command {c!r}" if c else "is incomplete")
        return c

    def _address(self, required: bool = False) -> None:
        c = self._peek()
        number = _SED_NUMBER.match(self.s, self.i)
        if number:
            self.i = number.end()
        elif c == "/" or c == "\\":
            if c == "\\":
                self.i += 1
            self._delimited(1, regex=True)
            while self._peek() in ("I", "M"):
                self.i += 1
        elif required:
            raise ValueError("has an incomplete address range")

    def _delimited(self, parts: int, regex: bool = False) -> None:
        """A delimiter and `parts` fields ended by it (backslash escapes the next character). With
        `regex` the first field is a regular expression, where the delimiter is an ordinary character
        inside a bracket expression: sed reads `s/[/]/#/w FILE` as a `w` flag after `#`."""
        delimiter = self._peek()
        if delimiter in ("", "\n", "\\"):
            raise ValueError("has a bad delimiter")
        self.i += 1
        for field in range(parts):
            while self.i < len(self.s) and self.s[self.i] != delimiter:
                if regex and field == 0 and self.s[self.i] == "[":
                    self._bracket()
                    continue
                self.i += 2 if self.s[self.i] == "\\" else 1
            if self.i >= len(self.s):
                raise ValueError("is not terminated")
            self.i += 1

    def _bracket(self) -> None:
        """Past a bracket expression (`[/]`, `[^]a]`, `[[:alpha:]/]`); one with a backslash in it is
        refused, as sed versions differ in reading it."""
        end = _SED_BRACKET.match(self.s, self.i)
        if end is None:
            raise ValueError("has a bracket expression it cannot read")
        self.i = end.end()

    def _peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def _skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1


_AWK_FORBIDDEN = ("system", "getline", "|", ">", "@")


def awk_reason(args: list[str]) -> str | None:
    """None when `awk ARGS` only prints; otherwise why not."""
    program: str | None = None
    i = 0
    while i < len(args) and program is None:
        text = args[i]
        if text in ("-F", "-v"):
            i += 2
            continue
        if text.startswith(("-F", "-v")) or text == "--":
            i += 1
            continue
        if text.startswith("-") and text != "-":
            return f"`awk {text}` may read a program file, load code or write a file"
        program = text
    if program is None:
        return "awk without a program"
    for token in _AWK_FORBIDDEN:
        if token in program:
            return f"the awk program contains {token!r} (it may run commands or write files)"
    return None
