"""Commands that would remove or move the workspace's `.git`: refused where that is certain, asked
where it cannot be known, in every mode, --yes included. The sandbox's read-only bind is the first
line; this is the second, for runs without it.

By path arithmetic only (no I/O) over every command the line runs (shellwalk: wrappers such as
`sudo`, `env -S`, `xargs`, `timeout`, `busybox` set aside; `bash -c`, `eval`, `su -c`, `trap` scripts
read):
- `rm`, `rmdir`, `unlink`, `shred`, `trash`, `mv` with an operand that names `.git`, a path inside it,
  or the workspace or a directory above it: refused. Relative paths are resolved from every directory
  an earlier `cd`/`pushd` may have entered; absolute ones and `cd ..` need the workspace's path.
  Quoting is undone (`$'\x2egit'`, `"."git`), globs and braces are matched (`.g?t`, `.[g]it`,
  `{.git,x}`; `shopt -s dotglob` makes `*` match `.git`), `~+`, `$PWD` and variables set earlier in
  the line (`d=.git; rm -rf $d`) are substituted. A run-time word with a `.git` component
  (`$X/.git`) is refused; any other operand known only at run time (`$(echo .git)`, `$X`, `~-`, a
  relative path after `cd "$X"`) asks.
- A redirection that writes into `.git` (`> .git/HEAD`): refused.
- `find` that deletes (`-delete`, `-exec rm ...`) from inside `.git`, or from above it matching `.git`
  or anything a git directory holds (see gitfind): refused; expressions not untangled: asked.
- `git clean` that removes nested repositories or ignored files (`-ff`, `-x`, `-X`): asked.
- Scripts not read (`eval "$x"`, `bash -c "$(...)"`, a shell reading its input, `hash -p`,
  aliases), removers fed by `xargs`, and a command name known only at run time next to an operand
  that may be `.git`: asked.
Not seen: symlinks, programs that delete by themselves (`python -c 'shutil.rmtree(".git")'`, `make`,
scripts in files), `git` plumbing, `tar --remove-files`, `rsync --delete`.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import PurePath, PurePosixPath

from vllm_bot.safety.gitfind import judge_find_expression, names_git
from vllm_bot.safety.shellsplit import Word
from vllm_bot.safety.shellwalk import Command, ShellLine, as_line, parse_line
from vllm_bot.safety.wrappers import SHELLS, command_start, program_of, shell_script, words

REMOVERS = frozenset(words("rm rmdir unlink shred trash trash-put mv"))
_FIND_GLOBAL = {"-H", "-L", "-P"}
_FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
_GIT_WORD = re.compile(r"(^|/)\.git(/|$)", re.IGNORECASE)
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_WRITES = {">", ">>", ">|", "<>", "&>", "&>>"}
_DECLARERS = {"export", "declare", "typeset", "local", "readonly"}
_UNKNOWN_ROOT = PurePosixPath("/\0workspace")  # never equal to a real path
_MAX_DIRS = 32
_MAX_ALTERNATIVES = 64


@dataclass(frozen=True)
class GitRisk:
    deny: str | None = None  # the line certainly removes or moves .git
    ask: str | None = None  # it may: only the user can say


def git_removal_reason(command: str | ShellLine, workspace: str | PurePath | None = None) -> str | None:
    """Why `command` must never run (it removes or moves the workspace's `.git`); None otherwise."""
    return git_removal_risk(command, workspace).deny


def git_removal_risk(command: str | ShellLine, workspace: str | PurePath | None = None) -> GitRisk:
    """Whether `command` removes the workspace's `.git` (deny), may (ask), or does not (neither)."""
    root = PurePosixPath(str(workspace)) if workspace else _UNKNOWN_ROOT
    guard = _Guard(root)
    line = as_line(command)
    guard.scan(line)
    for found in line.commands:
        deny = guard.command_reason(found)
        if deny:
            return GitRisk(deny=deny)
    deny = guard.redirect_reason(line)
    if deny:
        return GitRisk(deny=deny)
    if guard.names_git and guard.xargs_removes:
        return GitRisk(deny=_refusal(f"... .git ... | {guard.xargs_removes}"))
    if guard.xargs_removes:
        guard.doubt(f"`{guard.xargs_removes}` removes paths it reads from its input")
    return GitRisk(ask=guard.doubts[0] if guard.doubts else None)


def _refusal(what: str, does: str = "remove or move") -> str:
    return (
        f"`{what}` would {does} the workspace's .git directory (the repository: its history, "
        "branches, stashes and staged work), which is never allowed, whatever the approval mode. Leave "
        ".git alone; to undo changes use git itself (`git restore PATH`, `git stash`) or ask the user"
    )


@dataclass
class _Guard:
    """Follows the commands of one line: where `cd` may have gone, what variables hold, what feeds
    `xargs`, and what cannot be known."""

    root: PurePosixPath
    dirs: list[PurePosixPath] = field(default_factory=list)
    lost: bool = False  # a `cd` went somewhere only known at run time
    dotglob: bool = False  # `*` may match `.git` (shopt -s dotglob, GLOBIGNORE)
    variables: dict[str, str | None] = field(default_factory=dict)  # None: set to a run-time value
    names_git: bool = False  # some command names .git (for `... | xargs rm`)
    xargs_removes: str | None = None
    doubts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.git = (self.root / ".git").parts
        self.dirs = [self.root]

    def doubt(self, what: str) -> None:
        self.doubts.append(
            f"{what}, so it may remove the workspace's .git (the repository); that needs the user's "
            "approval whatever the approval mode"
        )

    def scan(self, line: ShellLine) -> None:
        """What the whole line sets up: variables, dot-globbing, aliases."""
        text = line.text
        self.dotglob = "dotglob" in text or "GLOBIGNORE" in text
        if "expand_aliases" in text:
            self.doubt("it turns on aliases, which can hide any command")
        for part in line.parts or ():
            for name, value in part.assignments:
                self._assign(name, value)
            if part.words and part.words[0].text in _DECLARERS:
                for word in part.words[1:]:
                    var, sep, text = word.text.partition("=")
                    if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
                        self._assign(var, Word(text, word.dynamic))

    def _assign(self, name: str, value: Word) -> None:
        known = None if value.dynamic else value.text
        self.variables[name] = known if self.variables.get(name, known) == known else None

    def command_reason(self, command: Command) -> str | None:
        words_ = command.words
        shown = " ".join(w.text for w in words_)
        if command.opaque:
            self.doubt(f"`{shown}` runs a script only known when it runs")
            return None
        if words_[0].dynamic:
            self._dynamic_program(words_)
            return None
        name = program_of(words_[0].text)
        args = words_[1:]
        if name in ("cd", "pushd", "popd"):
            self._change_dir(args if name != "popd" else (Word("-", True),))
        elif name in REMOVERS:
            if any(program_of(t) == "xargs" for t in command.wrappers):
                self.xargs_removes = f"xargs {name}"
            if self._removes_git(_operands(name, args), shown):
                return _refusal(shown)
        elif name == "find":
            return _refusal(shown) if self._find_deletes_git(args, shown) else None
        elif self._other(name, args, shown):
            return _refusal(shown)
        self.names_git |= any(_GIT_WORD.search(w.text) for w in args)
        return None

    def _other(self, name: str, args: tuple[Word, ...], shown: str) -> bool:
        """Doubts about other commands; True for a `trap` whose script removes .git."""
        texts = [w.text for w in args]
        if name == "git" and texts[:1] == ["clean"] and _cleans_deep(texts[1:]):
            self.doubt(f"`{shown}` removes nested repositories or ignored files")
        elif name in SHELLS and not any(t.startswith("-") and "c" in t for t in texts):
            if not [t for t in texts if not t.startswith("-")]:
                self.doubt(f"`{shown}` runs commands it reads from its input")
        elif (name == "hash" and "-p" in texts) or (name == "enable" and "-f" in texts) or name == "alias":
            self.doubt(f"`{shown}` can make a name run another program")
        elif name == "trap" and args:
            if args[0].dynamic:
                self.doubt(f"`{shown}` sets a trap only known when it runs")
                return False
            risk = git_removal_risk(args[0].text, None if self.root == _UNKNOWN_ROOT else self.root)
            self.doubts += [risk.ask] if risk.ask else []
            return risk.deny is not None
        return False

    def _dynamic_program(self, words_: tuple[Word, ...]) -> None:
        """`$RM -rf .git`, `$(echo rm) x`: the program is only known at run time."""
        shown = " ".join(w.text for w in words_)
        if any(self._reaches(w) or self._unknown(w) for w in words_[1:]):
            self.doubt(f"`{shown}` runs a program only known when it runs")

    def _change_dir(self, args: tuple[Word, ...]) -> None:
        operands = [w for w in args if w.dynamic or not w.text.startswith("-") or w.text == "-"]
        if not operands:
            self.lost = True  # `cd` alone: the home directory
            return
        targets = self._expand(operands[0])
        if targets is None or any(t.startswith(("-", "~")) for t in targets):
            self.lost = True  # $HOME, the previous directory or a run-time value: not followed
            return
        entered = [PurePosixPath(*_resolve(d, t)) for d in self.dirs for t in targets]
        self.dirs = list(dict.fromkeys(self.dirs + entered))[:_MAX_DIRS]

    def _removes_git(self, operands: list[Word], shown: str) -> bool:
        touched = [w for w in operands if self._reaches(w)]
        if touched and not all(self._is_lock_file(w) for w in touched):
            return True
        unknown = [w for w in operands if not self._reaches(w) and self._unknown(w)]
        if unknown:
            self.doubt(f"`{shown}` removes {unknown[0].text}, which is only known when it runs")
        return False

    def _unknown(self, word: Word) -> bool:
        """The path cannot be placed: a run-time value, or relative after a `cd` to one."""
        texts = self._expand(word)
        if texts is None:
            return True
        return self.lost and any(not t.startswith("/") for t in texts)

    def _is_lock_file(self, word: Word) -> bool:
        """A git lock file (`.git/index.lock`) named literally: removing a stale one after a crashed
        git is the usual fix and loses nothing."""
        hits = self._reaches(word)
        return not word.dynamic and all(
            len(path) > len(self.git) and path[-1].endswith(".lock") for path in hits
        )

    def _reaches(self, word: Word) -> list[tuple[str, ...]]:
        """The resolved paths of `word` that touch .git (run-time words: a `.git` component counts)."""
        texts = self._expand(word)
        if texts is None:
            return [self.git] if _GIT_WORD.search(word.text) else []
        hits = []
        for text in texts:
            if not text or text.startswith("~"):
                continue
            for directory in self.dirs:
                path = _resolve(directory, text)
                if self._on_git_line(path, glob=word.dynamic):
                    hits.append(path)
        return hits

    def _expand(self, word: Word) -> list[str] | None:
        """The texts `word` may stand for (braces expanded, `~+`, `$PWD` and known variables
        substituted); None when a part is only known at run time."""
        if not word.dynamic:
            return [word.text]
        out = []
        for text in _expand_braces(word.text) if "{" in word.text else [word.text]:
            if text == "~+" or text.startswith("~+/"):
                text = "." + text[2:]
            text = _VARIABLE.sub(lambda m: self._value(m.group(1) or m.group(2)), text)
            if "\0" in text or "$" in text or "`" in text or text.startswith("~"):
                return None
            out.append(text)
        return out

    def _value(self, name: str) -> str:
        if name == "PWD":
            return "."
        value = self.variables.get(name)
        return "\0" if value is None else value  # NUL: unknown (never part of a real word)

    def _on_git_line(self, path: tuple[str, ...], glob: bool) -> bool:
        if self.root == _UNKNOWN_ROOT and path[:2] != self.git[:2]:
            return False  # outside a workspace whose place is unknown
        return all(_component_matches(p, g, glob, self.dotglob) for p, g in zip(path, self.git, strict=False))

    def _find_deletes_git(self, args: tuple[Word, ...], shown: str) -> bool:
        texts = [w.text for w in args]
        i = 0
        while i < len(texts) and (texts[i] in _FIND_GLOBAL or texts[i] == "-D" or texts[i].startswith("-O")):
            i += 2 if texts[i] == "-D" else 1
        starts = []
        while i < len(texts) and not texts[i].startswith("-") and texts[i] not in ("(", "!", ")"):
            starts.append(args[i])
            i += 1
        expr = texts[i:]
        tests = [expr[j + 1] for j, t in enumerate(expr[:-1]) if t in ("-name", "-iname", "-path", "-ipath")]
        self.names_git |= any(names_git(t) for t in tests) and "-prune" not in expr
        runs = [_runs_remover(expr[j + 1 :]) for j, t in enumerate(expr) if t in _FIND_EXEC]
        if "-delete" not in expr and not any(runs):
            if any(r is None for r in runs):
                self.doubt(f"`{shown}` runs a command only known when it runs")
            return False
        starts = starts or [Word(".")]
        if any(w.dynamic and w.text != "{}" for w in args[i:]) or any(self._unknown(w) for w in starts):
            self.doubt(f"`{shown}` deletes with arguments only known when it runs")
            return False
        reaches = [r for w in starts for r in self._reaches(w)]
        if any(len(r) >= len(self.git) for r in reaches):
            return True  # it starts inside .git
        if not reaches:
            return False
        verdict = judge_find_expression(expr, [w.text for w in starts])
        if verdict.unsure:
            self.doubt(f"`{shown}` may delete inside .git ({verdict.unsure})")
        return verdict.hits

    def redirect_reason(self, line: ShellLine) -> str | None:
        for part in line.parts or ():
            for redirect in part.redirects:
                if redirect.op in _WRITES and self._reaches(redirect.target):
                    return _refusal(f"{redirect.op} {redirect.target.text}", "overwrite a file of")
        return None


def _cleans_deep(args: list[str]) -> bool:
    """`git clean -ffdx`: two -f remove nested repositories; -x/-X remove ignored files (the agent's
    own .vllm-bot/ with its checkpoints among them)."""
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    longs = [a for a in args if a.startswith("--")]
    return flags.count("f") + longs.count("--force") >= 2 or "x" in flags or "X" in flags


def _operands(name: str, args: tuple[Word, ...]) -> list[Word]:
    out: list[Word] = []
    options_done, skip = False, False
    for word in args:
        text = word.text
        if skip:
            skip = False
        elif options_done or word.dynamic or not text.startswith("-") or text == "-":
            out.append(word)
        elif text == "--":
            options_done = True
        elif name == "mv" and text.startswith("--target-directory="):
            out.append(Word(text.split("=", 1)[1]))
        elif name == "mv" and text in ("-S", "--suffix"):
            skip = True
    return out


def _runs_remover(command: list[str]) -> bool | None:
    """`-exec rm -rf {} ;`, `-exec sudo mv ...`, `-exec sh -c 'rm -r "$1"' _ {} ;`; None: a script
    that could not be read."""
    start = command_start(command)
    if start >= len(command):
        return False
    script = shell_script(command[start:])
    if script is not None:
        found = parse_line(script).commands
        if any(c.opaque or c.words[0].dynamic for c in found):
            return None
        return any(program_of(c.words[0].text) in REMOVERS for c in found)
    return program_of(command[start]) in REMOVERS


def _resolve(directory: PurePosixPath, text: str) -> tuple[str, ...]:
    """Lexical resolution (no symlinks): `..` drops a component, `.` and empty ones vanish."""
    parts = ["/"] if text.startswith("/") else list(directory.parts)
    for component in text.split("/"):
        if component == "..":
            if len(parts) > 1:
                parts.pop()
        elif component not in ("", "."):
            parts.append(component)
    return tuple(parts)


def _component_matches(component: str, name: str, glob: bool, dotglob: bool) -> bool:
    component, name = component.lower(), name.lower()
    if not glob or not any(c in component for c in "*?["):
        return component == name
    if name.startswith(".") and not component.startswith(".") and not dotglob:
        return False  # bash globs match a leading dot only literally
    return fnmatch.fnmatchcase(name, component)


def _expand_braces(text: str) -> list[str]:
    """`{.git,src}` -> [".git", "src"], nested too; a group without a comma stays as it is."""
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char == "{":
            depth, start = depth + 1, (i if depth == 0 else start)
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _split_top_level(text[start + 1 : i])
                if len(options) > 1:
                    out: list[str] = []
                    for option in options:
                        out += _expand_braces(text[:start] + option + text[i + 1 :])
                    return out[:_MAX_ALTERNATIVES]
    return [text]


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (char == "{") - (char == "}")
        current.append(char)
    parts.append("".join(current))
    return parts
