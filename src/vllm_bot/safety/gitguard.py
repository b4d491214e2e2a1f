"""Commands that would remove or move the workspace's `.git`: refused in every mode, --yes included.

Best effort over the parts the shell splitter finds, by path arithmetic only (no I/O):
- `rm`, `rmdir`, `unlink`, `shred`, `trash`, `mv` (also behind `sudo`, `env`, `xargs`, `bash -c`) with
  an operand that names `.git`, a path inside it, or the workspace or a directory above it. Relative
  paths are resolved from every directory an earlier `cd`/`pushd` may have entered (`cd sub && rm -rf
  ../.git`); absolute ones and `cd ..` need the workspace's path. Globs (`.g*`, `.[g]it`, `.*`) and
  brace expansion are matched; `$VAR/.git` counts; other run-time words (`$(...)`, `$DIR`) do not.
- `find` that deletes (`-delete`, `-exec rm ...`, `-exec sh ...`) starting inside `.git`, or starting
  above it with a name test matching `.git` or no name test at all, unless the expression has `-prune`.
- `... .git ... | xargs rm`: a part naming `.git` next to an `xargs` that runs a remover.
- Lines the splitter cannot parse (`if`, `for`, here-documents) are read as shellwalk guesses them.
Not seen: symlinks, programs that delete by themselves (`python -c 'shutil.rmtree(".git")'`,
`git` plumbing), `tar --remove-files`, `rsync --delete`, `env -S 'rm ...'`, paths built at run time.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePath, PurePosixPath

from vllm_bot.safety.shellsplit import Word
from vllm_bot.safety.shellwalk import Command, ShellLine, as_line, parse_line
from vllm_bot.safety.wrappers import command_start, program_name, shell_script, words

REMOVERS = frozenset(words("rm rmdir unlink shred trash trash-put mv"))
_FIND_GLOBAL = {"-H", "-L", "-P"}
_FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
_FIND_NAMES = set(words("-name -iname -path -ipath -wholename -iwholename -regex -iregex"))
_GIT_WORD = re.compile(r"(^|/)\.git(/|$)", re.IGNORECASE)
_UNKNOWN_ROOT = PurePosixPath("/\0workspace")  # never equal to a real path
_MAX_DIRS = 32
_MAX_ALTERNATIVES = 64


def git_removal_reason(command: str | ShellLine, workspace: str | PurePath | None = None) -> str | None:
    """Why `command` must never run (it removes or moves the workspace's `.git`); None otherwise."""
    root = PurePosixPath(str(workspace)) if workspace else _UNKNOWN_ROOT
    guard = _Guard(root)
    for found in as_line(command).commands:
        reason = guard.command_reason(found)
        if reason:
            return reason
    if guard.names_git and guard.xargs_removes:
        return _refusal(f"... .git ... | {guard.xargs_removes}")
    return None


def _refusal(what: str) -> str:
    return (
        f"`{what}` would remove or move the workspace's .git directory (the repository: its history, "
        "branches, stashes and staged work), which is never allowed, whatever the approval mode. Leave "
        ".git alone; to undo changes use git itself (`git restore PATH`, `git stash`) or ask the user"
    )


class _Guard:
    """Follows the commands of one line, remembering where `cd` may have gone and what feeds `xargs`."""

    def __init__(self, root: PurePosixPath) -> None:
        self.root = root
        self.git = (root / ".git").parts
        self.dirs = [root]
        self.names_git = False  # some command names .git (for `... | xargs rm`)
        self.xargs_removes: str | None = None

    def command_reason(self, command: Command) -> str | None:
        words = command.words
        name = program_name(words[0].text)
        shown = " ".join(w.text for w in words)
        if name in ("cd", "pushd"):
            self._change_dir(words[1:])
        elif name in REMOVERS:
            if any(program_name(t) == "xargs" for t in command.wrappers):
                self.xargs_removes = f"xargs {name}"
            touched = [w for w in _operands(name, words[1:]) if self._touches(w)]
            if touched and not all(self._is_lock_file(w) for w in touched):
                return _refusal(shown)
        elif name == "find":
            return _refusal(shown) if self._find_deletes_git(words[1:]) else None
        self.names_git |= any(_GIT_WORD.search(w.text) for w in words[1:])
        return None

    def _change_dir(self, args: tuple[Word, ...]) -> None:
        operands = [w for w in args if w.dynamic or not w.text.startswith("-") or w.text == "-"]
        if not operands or operands[0].dynamic or operands[0].text.startswith(("-", "~")):
            return  # $HOME, the previous directory or a run-time value: not followed
        entered = [PurePosixPath(*_resolve(d, operands[0].text)) for d in self.dirs]
        self.dirs = list(dict.fromkeys(self.dirs + entered))[:_MAX_DIRS]

    def _touches(self, word: Word) -> bool:
        """`word`, from any directory the line may be in, names .git, a path inside it or above it."""
        return bool(self._reaches(word))

    def _is_lock_file(self, word: Word) -> bool:
        """A git lock file (`.git/index.lock`, `.git/refs/heads/x.lock`) named literally: removing a
        stale one after a crashed git is the usual fix and loses nothing."""
        hits = self._reaches(word)
        return not word.dynamic and all(
            len(path) > len(self.git) and path[-1].endswith(".lock") for path in hits
        )

    def _reaches(self, word: Word) -> list[tuple[str, ...]]:
        """The resolved paths of `word` that touch .git (run-time words: a `.git` component counts)."""
        hits = []
        for text in _alternatives(word):
            if word.dynamic and ("$" in text or "`" in text):
                if _GIT_WORD.search(text):
                    hits.append(self.git)
                continue
            if not text or text.startswith("~"):
                continue
            for directory in self.dirs:
                path = _resolve(directory, text)
                if self._on_git_line(path, glob=word.dynamic):
                    hits.append(path)
        return hits

    def _on_git_line(self, path: tuple[str, ...], glob: bool) -> bool:
        if self.root == _UNKNOWN_ROOT and path[:2] != self.git[:2]:
            return False  # outside a workspace whose place is unknown
        return all(_component_matches(p, g, glob) for p, g in zip(path, self.git, strict=False))

    def _find_deletes_git(self, args: tuple[Word, ...]) -> bool:
        texts = [w.text for w in args]
        i = 0
        while i < len(texts) and (texts[i] in _FIND_GLOBAL or texts[i] == "-D" or texts[i].startswith("-O")):
            i += 2 if texts[i] == "-D" else 1
        starts = []
        while i < len(texts) and not texts[i].startswith("-") and texts[i] not in ("(", "!", ")"):
            starts.append(args[i])
            i += 1
        expr = texts[i:]
        tests = [(j, expr[j + 1]) for j, t in enumerate(expr[:-1]) if t in _FIND_NAMES]
        named = any(_pattern_names_git(v) for j, v in tests if not (j and expr[j - 1] in ("!", "-not")))
        pruned = "-prune" in expr
        self.names_git |= named and not pruned
        runs = (_runs_remover(expr[j + 1 :]) for j, t in enumerate(expr) if t in _FIND_EXEC)
        if "-delete" not in expr and not any(runs):
            return False
        for reach in (r for w in starts or [Word(".")] for r in self._reaches(w)):
            if len(reach) >= len(self.git) or (not pruned and (named or not tests)):
                return True
        return False


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


def _runs_remover(command: list[str]) -> bool:
    """`-exec rm -rf {} ;`, `-exec sudo mv ...`, `-exec sh -c 'rm -r "$1"' _ {} ;`."""
    start = command_start(command)
    if start >= len(command):
        return False
    script = shell_script(command[start:])
    if script is not None:
        return any(program_name(c.words[0].text) in REMOVERS for c in parse_line(script).commands)
    return program_name(command[start]) in REMOVERS


def _pattern_names_git(pattern: str) -> bool:
    """A find name/path/regex pattern that may match `.git` (find's `*` matches a leading dot)."""
    lowered = pattern.lower()
    return ".git" in lowered or any(fnmatch.fnmatchcase(s, lowered) for s in (".git", "./.git", "./.git/x"))


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


def _component_matches(component: str, name: str, glob: bool) -> bool:
    component, name = component.lower(), name.lower()
    if not glob or not any(c in component for c in "*?["):
        return component == name
    if name.startswith(".") and not component.startswith("."):
        return False  # bash globs match a leading dot only literally
    return fnmatch.fnmatchcase(name, component)


def _alternatives(word: Word) -> list[str]:
    return _expand_braces(word.text) if word.dynamic and "{" in word.text else [word.text]


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
