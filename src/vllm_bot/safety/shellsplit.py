"""Split a bash command line into every simple command it would run, for the approval policy.

A conservative subset of bash: lists (`;` `&` `&&` `||` newlines), pipelines, `( ... )` subshells,
`{ ...; }` groups, redirections, quotes, `$(...)`, backticks and `<(...)`/`>(...)`. The commands inside
substitutions are returned next to the outer ones. Whatever is outside the subset (here-documents,
`if`/`for`/`case`, functions, arithmetic, `${x:-...}`) raises `ShellSyntaxError`, so the caller can
say "cannot judge" instead of guessing.

Quote removal is done, `$'...'` decoded; a word whose value is only known when it runs (variables,
globs, brace expansion, substitutions, a leading `~`, a `$'...'` escape whose bytes depend on the
locale) is marked `dynamic`, because it may turn into any argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vllm_bot.safety.ansic import decode_ansi_c

MAX_DEPTH = 16

_BLANK = " \t"
_META = set(" \t\n;&|()<>")
_REDIRECT = re.compile(r"(\d*)(&>>|&>|>>|>\||>&|<&|<<<|<<-|<<|<>|>|<)")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(_NAME)
_ASSIGNMENT = re.compile(rf"({_NAME})(\[[^\]]*\])?\+?=")
_SIMPLE_PARAMETER = re.compile(rf"#?(?:{_NAME}|[0-9]+|[@*#?$!-])")
_SPECIAL_PARAMETER = set("@*#?$!-0123456789")
_UNSUPPORTED = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select", "time", "coproc", "[[", "]]", "((", "}",
}  # fmt: skip


class ShellSyntaxError(ValueError):
    """The command line is not valid bash, or uses a construct this splitter does not judge."""


@dataclass(frozen=True)
class Word:
    text: str  # the value after quote removal (for dynamic parts: their source text)
    dynamic: bool = False  # the value is only known at run time, so it may become any argument


@dataclass(frozen=True)
class Redirect:
    op: str  # < > >> >| <> <<< <& >& &> &>>
    fd: int | None
    target: Word


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[Word, ...]
    assignments: tuple[tuple[str, Word], ...] = ()
    redirects: tuple[Redirect, ...] = ()


def split_commands(line: str) -> list[SimpleCommand]:
    """Every simple command `bash -c line` could run; raises ShellSyntaxError outside the subset."""
    out: list[SimpleCommand] = []
    _Parser(join_continuations(line), out, 0).parse()
    return out


def join_continuations(line: str) -> str:
    """Remove backslash-newline pairs as bash does before it splits words: everywhere except inside
    single quotes, `$'...'` and comments."""
    out: list[str] = []
    i, quote = 0, ""  # quote: "" | "'" | '"' | "$'" | "#"
    while i < len(line):
        c = line[i]
        if quote in ("", '"') and line.startswith("\\\n", i):
            i += 2
            continue
        if quote == "#":
            quote = "" if c == "\n" else quote
        elif (quote in ("'", "$'") and c == "'") or (quote == '"' and c == '"'):
            quote = ""
        elif c == "\\" and quote in ("", '"', "$'"):
            out.append(line[i : i + 2])
            i += 2
            continue
        elif quote == "":
            if c == "#" and (not out or out[-1][-1] in " \t\n;&|()<>"):
                quote = "#"
            elif c in ("'", '"'):
                quote = "$'" if c == "'" and out and out[-1] == "$" else c
        out.append(c)
        i += 1
    return "".join(out)


class _Parser:
    def __init__(self, text: str, out: list[SimpleCommand], depth: int):
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("substitutions nested too deeply")
        self.text = text
        self.pos = 0
        self.out = out
        self.depth = depth

    # -- structure ---------------------------------------------------------------------------
    def parse(self) -> None:
        self._list(closer=None)
        if self.pos != len(self.text):
            raise ShellSyntaxError(f"unexpected {self._peek()!r} at offset {self.pos}")

    def _list(self, closer: str | None) -> None:
        """command lists up to `closer` (')' or '}'), which is consumed."""
        while True:
            self._skip_blanks(newlines=True)
            if self._at_end():
                if closer:
                    raise ShellSyntaxError(f"missing {closer!r}")
                return
            if self._peek() == ")":
                if closer != ")":
                    raise ShellSyntaxError(f"unexpected ')' at offset {self.pos}")
                self.pos += 1
                return
            if closer == "}" and self._at_word("}"):
                self.pos += 1
                return
            self._pipeline()
            self._skip_blanks()
            op = self._operator()
            if op in ("&&", "||"):
                self._skip_blanks(newlines=True)
                if self._at_end() or self._peek() == ")":
                    raise ShellSyntaxError(f"{op} at the end of a list")
            elif op not in (";", "&", "\n"):
                if op == "" and (self._at_end() or self._peek() == ")"):
                    continue
                raise ShellSyntaxError(f"unexpected {op or self._peek()!r} at offset {self.pos}")

    def _operator(self) -> str:
        for op in ("&&", "||", ";;", ";", "&", "\n"):
            if self.text.startswith(op, self.pos) and not self.text.startswith("&>", self.pos):
                self.pos += len(op)
                return op
        return ""

    def _pipeline(self) -> None:
        if self._at_word("!"):
            self.pos += 1
        self._command()
        while True:
            self._skip_blanks()
            if self.text.startswith("||", self.pos) or not self.text.startswith("|", self.pos):
                return
            self.pos += 2 if self.text.startswith("|&", self.pos) else 1
            self._skip_blanks(newlines=True)
            self._command()

    def _command(self) -> None:
        self._skip_blanks()
        if self.text.startswith("((", self.pos):
            raise ShellSyntaxError("arithmetic commands are not supported")
        if self._peek() == "(":
            self.pos += 1
            self._list(closer=")")
        elif self._at_word("{"):
            self.pos += 1
            self._list(closer="}")
        else:
            self._simple()
            return
        redirects = self._trailing_redirects()
        if redirects:
            self.out.append(SimpleCommand((), (), tuple(redirects)))

    def _trailing_redirects(self) -> list[Redirect]:
        redirects: list[Redirect] = []
        while True:
            self._skip_blanks()
            redirect = self._redirect()
            if redirect is None:
                return redirects
            redirects.append(redirect)

    def _simple(self) -> None:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        redirects: list[Redirect] = []
        while True:
            self._skip_blanks()
            if self._at_end() or (self._peek() in ";&|)\n" and not self.text.startswith("&>", self.pos)):
                break
            if self._peek() == "(":
                raise ShellSyntaxError("'(' inside a command (function definitions are not supported)")
            redirect = self._redirect()
            if redirect is not None:
                redirects.append(redirect)
                continue
            start, collected = self.pos, len(self.out)
            word = self._word()
            match = _ASSIGNMENT.match(self.text, start)
            if not words and match and match.end() <= self.pos and "$" not in match.group(0):
                self.pos = match.end()
                del self.out[collected:]  # the value is parsed again below
                if self._peek() == "(":
                    raise ShellSyntaxError("array assignments are not supported")
                value = self._word() if self.pos < len(self.text) and self._peek() not in _META else Word("")
                assignments.append((match.group(1), value))
                continue
            if not words and self.text[start : self.pos] in _UNSUPPORTED:
                raise ShellSyntaxError(f"'{word.text}' is not supported")
            words.append(word)
        if not (words or assignments or redirects):
            raise ShellSyntaxError(f"empty command at offset {self.pos}")
        self.out.append(SimpleCommand(tuple(words), tuple(assignments), tuple(redirects)))

    def _redirect(self) -> Redirect | None:
        if self.text.startswith(("<(", ">("), self.pos):
            return None
        match = _REDIRECT.match(self.text, self.pos)
        if not match:
            return None
        op = match.group(2)
        if op in ("<<", "<<-"):
            raise ShellSyntaxError("here-documents are not supported")
        self.pos = match.end()
        self._skip_blanks()
        if self._at_end() or (self._peek() in _META and not self.text.startswith(("<(", ">("), self.pos)):
            raise ShellSyntaxError(f"redirection {op} without a target")
        fd = int(match.group(1)) if match.group(1) else None
        return Redirect(op, fd, self._word())

    # -- words -------------------------------------------------------------------------------
    def _word(self) -> Word:
        begin = self.pos
        parts: list[str] = []
        dynamic = False
        openers: dict[str, int] = {}  # unquoted "{" / "[" -> offset in the word (brace expansion, globs)
        while not self._at_end():
            c = self._peek()
            if c in "<>" and self.text.startswith("(", self.pos + 1):
                parts.append(self._substitution(self.pos + 2, c + "("))
                dynamic = True
            elif c in _META:
                break
            elif c == "\\":
                if self.pos + 1 >= len(self.text):
                    raise ShellSyntaxError("a backslash at the end of the line")
                parts.append(self.text[self.pos + 1])
                self.pos += 2
            elif c == "'":
                end = self.text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                parts.append(self.text[self.pos + 1 : end])
                self.pos = end + 1
            elif c == '"':
                text, dyn = self._double_quoted()
                parts.append(text)
                dynamic |= dyn
            elif c in "$`":
                text, dyn = self._expansion(quoted=False)
                parts.append(text)
                dynamic |= dyn
            else:
                # `~`, `~+` (the working directory), `~-`, `~user`: bash expands a tilde at the start
                # of a word and after `=` or `:` in assignment-like words (`a=~`, `P=x:~`).
                dynamic |= c == "~" and (self.pos == begin or self.text[self.pos - 1] in "=:")
                if c in "{[" and c not in openers:
                    openers[c] = sum(map(len, parts))
                dynamic |= c in "*?"
                parts.append(c)
                self.pos += 1
        text = "".join(parts)
        # Conservative: any closer after an unquoted opener counts, quoted or not.
        for opener, closer in (("{", "}"), ("[", "]")):
            if opener in openers and closer in text[openers[opener] + 1 :]:
                dynamic = True
        return Word(text, dynamic)

    def _double_quoted(self) -> tuple[str, bool]:
        self.pos += 1
        parts: list[str] = []
        dynamic = False
        while True:
            if self._at_end():
                raise ShellSyntaxError("unterminated double quote")
            c = self._peek()
            if c == '"':
                self.pos += 1
                return "".join(parts), dynamic
            if c == "\\" and self.pos + 1 < len(self.text) and self.text[self.pos + 1] in '$`"\\\n':
                if self.text[self.pos + 1] != "\n":
                    parts.append(self.text[self.pos + 1])
                self.pos += 2
            elif c in "$`" and not self.text.startswith("$'", self.pos):
                text, dyn = self._expansion(quoted=True)
                parts.append(text)
                dynamic |= dyn
            else:
                parts.append(c)
                self.pos += 1

    def _expansion(self, quoted: bool) -> tuple[str, bool]:
        """`$...` or a backtick at self.pos: (text, dynamic)."""
        text = self.text
        if text.startswith("`", self.pos):
            return self._backtick(), True
        nxt = text[self.pos + 1 : self.pos + 2]
        if text.startswith("$((", self.pos) or nxt == "[":
            raise ShellSyntaxError("arithmetic expansion is not supported")
        if nxt == "(":
            return self._substitution(self.pos + 2, "$("), True
        if nxt == "{":
            end = text.find("}", self.pos)
            if end < 0 or not _SIMPLE_PARAMETER.fullmatch(text, self.pos + 2, end):
                raise ShellSyntaxError("parameter expansion with operators is not supported")
            source, self.pos = text[self.pos : end + 1], end + 1
            return source, True
        if nxt == "'" and not quoted:
            return self._ansi_c_quoted()
        if nxt == '"' and not quoted:
            self.pos += 1
            return self._double_quoted()
        match = _NAME_RE.match(text, self.pos + 1)
        if match:
            source, self.pos = text[self.pos : match.end()], match.end()
            return source, True
        if nxt and nxt in _SPECIAL_PARAMETER:
            self.pos += 2
            return "$" + nxt, True
        self.pos += 1
        return "$", False

    def _ansi_c_quoted(self) -> tuple[str, bool]:
        """`$'...'` at self.pos: its decoded value, dynamic only when an escape's bytes depend on the
        locale or are not text (a code point above 0x7F, a NUL that ends the word early)."""
        end = self.pos + 2
        while end < len(self.text) and self.text[end] != "'":
            end += 2 if self.text[end] == "\\" else 1
        if end >= len(self.text):
            raise ShellSyntaxError("unterminated $'...' quote")
        source, self.pos = self.text[self.pos : end + 1], end + 1
        value = decode_ansi_c(source[2:-1])
        return (source, True) if value is None else (value, False)

    def _substitution(self, inner_start: int, opener: str) -> str:
        """`$(`, `<(` or `>(` ... `)`: parse the inner list in place and collect its commands."""
        self.pos = inner_start
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ShellSyntaxError("substitutions nested too deeply")
        self._list(closer=")")
        self.depth -= 1
        return opener + self.text[inner_start : self.pos]

    def _backtick(self) -> str:
        inner: list[str] = []
        i = self.pos + 1
        while i < len(self.text) and self.text[i] != "`":
            if self.text[i] == "\\" and i + 1 < len(self.text) and self.text[i + 1] in "$`\\":
                i += 1
            inner.append(self.text[i])
            i += 1
        if i >= len(self.text):
            raise ShellSyntaxError("unterminated backtick")
        _Parser("".join(inner), self.out, self.depth + 1).parse()
        source, self.pos = self.text[self.pos : i + 1], i + 1
        return source

    # -- low level ---------------------------------------------------------------------------
    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _at_end(self) -> bool:
        return self.pos >= len(self.text)

    def _at_word(self, word: str) -> bool:
        """A reserved word (`{`, `}`, `!`) standing alone at self.pos."""
        end = self.pos + len(word)
        return self.text.startswith(word, self.pos) and (end >= len(self.text) or self.text[end] in _META)

    def _skip_blanks(self, newlines: bool = False) -> None:
        while not self._at_end():
            c = self._peek()
            if c in _BLANK or (newlines and c == "\n"):
                self.pos += 1
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return
