"""One walk over a shell line for the rules that refuse commands (policy's wipe check, gitguard).

`parse_line` splits a line once; `ShellLine.commands` are the real commands of every part: wrappers
in front (`sudo`, `env`, `timeout`, `xargs`) are set aside and `bash -c SCRIPT` is replaced by the
commands of SCRIPT (nested up to `MAX_DEPTH`). A line the splitter cannot parse (`if`/`for`/`case`,
here-documents, functions) is guessed at instead: cut at `; & | ( )` and newlines, leading keywords
dropped, each piece parsed again (or split at blanks) and its words cut again at keywords. The guess
errs toward seeing more commands than bash would run, which only makes a refusal likelier; it is
never used to let a command run (the read-only and grant rules need `parts`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from vllm_bot.safety.shellsplit import ShellSyntaxError, SimpleCommand, Word, split_commands
from vllm_bot.safety.wrappers import command_start, script_index, shell_script, split_env_string, words

__all__ = ["MAX_DEPTH", "Command", "ShellLine", "as_line", "parse_line"]

MAX_DEPTH = 4
_KEYWORDS = frozenset(
    words(
        "if then else elif fi for in while until do done case esac function select coproc ! { } [[ ]] (( ))"
    ),
)
_LEADING_KEYWORDS = re.compile(r"^(?:\s*(?:" + "|".join(map(re.escape, sorted(_KEYWORDS))) + r")(?=\s|$))+")
_RUN_TIME = re.compile(r"[$*?\[{`]")  # the word's value is only known when it runs
_CUTS = set(";&|()")


@dataclass(frozen=True)
class Command:
    words: tuple[Word, ...]  # the program and its arguments (never empty)
    wrappers: tuple[str, ...] = ()  # the wrapper words in front of it: `sudo -u root`, `xargs -0`
    opaque: bool = False  # it runs a script that was not read: known only at run time, or nested too deep


@dataclass(frozen=True)
class ShellLine:
    text: str
    parts: tuple[SimpleCommand, ...] | None  # None: outside the splitter's subset (see `error`)
    error: str | None = None

    @cached_property
    def commands(self) -> tuple[Command, ...]:
        """Every command the line may run, wrappers set aside and shell scripts walked."""
        return tuple(_walk(self, 0))


def parse_line(text: str) -> ShellLine:
    """The line split once; never raises."""
    try:
        return ShellLine(text, tuple(split_commands(text)))
    except ShellSyntaxError as e:
        return ShellLine(text, None, str(e))


def as_line(command: str | ShellLine) -> ShellLine:
    return command if isinstance(command, ShellLine) else parse_line(command)


def _walk(line: ShellLine, depth: int) -> Iterator[Command]:
    parts = line.parts if line.parts is not None else _guess_parts(line.text)
    for part in parts:
        words_ = _split_env(part.words)
        texts = [w.text for w in words_]
        start = command_start(texts)
        if start >= len(texts):
            continue
        script = shell_script(texts[start:])
        index = script_index(texts[start:])
        if script is None or index is None:
            yield Command(words_[start:], tuple(texts[:start]))
        elif depth >= MAX_DEPTH or any(w.dynamic for w in words_[start + index :]):
            yield Command(words_[start:], tuple(texts[:start]), opaque=True)
        else:
            yield from _walk(parse_line(script), depth + 1)


def _split_env(words_: tuple[Word, ...]) -> tuple[Word, ...]:
    texts = [w.text for w in words_]
    split = split_env_string(texts)
    if split == texts:
        return words_
    return tuple(Word(t, bool(_RUN_TIME.search(t))) for t in split)


def _guess_parts(text: str) -> list[SimpleCommand]:
    out: list[SimpleCommand] = []
    for piece in _pieces(text):
        piece = _LEADING_KEYWORDS.sub("", piece, count=1)
        try:
            parts = split_commands(piece)
        except ShellSyntaxError:
            parts = [SimpleCommand(_loose_words(piece))]
        for part in parts:
            out += [SimpleCommand(chunk) for chunk in _cut_at_keywords(part.words)]
    return out


def _pieces(text: str) -> Iterator[str]:
    """`text` cut at `; & | ( )` outside quotes and at every newline (a here-document body may hold
    an unpaired quote, so quoting never spans lines here)."""
    for row in text.split("\n"):
        start, quote, i = 0, "", 0
        while i < len(row):
            char = row[i]
            if char == "\\" and quote != "'":
                i += 1
            elif quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char in _CUTS:
                yield row[start:i]
                start = i + 1
            i += 1
        yield row[start:]


def _loose_words(piece: str) -> tuple[Word, ...]:
    try:
        texts = shlex.split(piece, comments=True)
    except ValueError:
        texts = piece.split()
    return tuple(Word(t, bool(_RUN_TIME.search(t))) for t in texts)


def _cut_at_keywords(words_: tuple[Word, ...]) -> Iterator[tuple[Word, ...]]:
    chunk: list[Word] = []
    for word in (*words_, Word("}")):
        if word.text in _KEYWORDS:
            if chunk:
                yield tuple(chunk)
            chunk = []
        else:
            chunk.append(word)
