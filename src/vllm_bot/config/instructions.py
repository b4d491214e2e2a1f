"""Project instructions: the `AGENTS.md` files (the convention Codex, OpenCode and others share) put
into the system prompt.

Read, in prompt order: the user's own `$XDG_CONFIG_HOME/vllm-bot/AGENTS.md`, then one per directory
from the repository root down to the workspace (nearest last, so it has the last word). Together they
get at most `system_prompt.instructions_max_tokens`; the nearest files are served first, and a file
that does not fit is cut at a line, with a note saying so in the prompt, the banner and /tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .layers import user_config_dir
from .statedir import is_stand_in

FILE_NAME = "AGENTS.md"
CHARS_PER_TOKEN = 4.0  # the estimate before the server's tokenizer has been asked

HEADER = (
    "## Project instructions\n"
    "From AGENTS.md files: the user's own first, then the repository's from its root down to the "
    "workspace; where they disagree, the later (nearer) one wins. Follow them unless the user says "
    "otherwise."
)


@dataclass
class InstructionFile:
    path: Path
    label: str  # how the user knows it: "AGENTS.md", "../AGENTS.md", "~/.config/vllm-bot/AGENTS.md"
    text: str  # as it goes into the prompt (cut when over budget)
    tokens: int  # estimated tokens of `text`
    full_tokens: int  # of the whole file

    @property
    def cut(self) -> bool:
        return self.tokens < self.full_tokens

    def describe(self) -> str:
        """`AGENTS.md (~1.2k tokens)` or `AGENTS.md (cut: ~300 of ~9,000 tokens)` or `(left out: ...)`."""
        if not self.text:
            return f"{self.label} (left out: ~{self.full_tokens:,} tokens over the budget)"
        if self.cut:
            return f"{self.label} (cut: ~{self.tokens:,} of ~{self.full_tokens:,} tokens)"
        return f"{self.label} (~{self.tokens:,} tokens)"


@dataclass
class Instructions:
    files: list[InstructionFile] = field(default_factory=list)  # in prompt order
    problems: list[str] = field(default_factory=list)  # files that exist but could not be read
    budget: int = 0
    stamp: tuple[tuple[str, int, int], ...] = ()  # instruction_stamp() when they were read

    @property
    def loaded(self) -> list[InstructionFile]:
        return [f for f in self.files if f.text]

    @property
    def section(self) -> str:
        """The system prompt's section ('' when no file was loaded)."""
        if not self.loaded:
            return ""
        parts = [HEADER]
        for f in self.loaded:
            parts.append(f"### {f.label}\n{f.text.rstrip()}")
        return "\n\n".join(parts) + "\n"

    def summary(self) -> str:
        """One line for the banner: which files, and which were cut ('' when there are none)."""
        return ", ".join(f.describe() for f in self.files)


def repository_root(workspace: Path) -> Path | None:
    """The nearest directory at or above `workspace` that holds `.git` (a directory or a file; not
    the sandbox's empty stand-in for a missing repository)."""
    for directory in (workspace, *workspace.parents):
        if (directory / ".git").exists() and not is_stand_in(directory / ".git"):
            return directory
    return None


def candidate_paths(workspace: Path, user_dir: Path | None = None) -> list[tuple[Path, str, Path]]:
    """(path, label, the directory it must stay inside) of every AGENTS.md to read, in prompt order."""
    workspace = workspace.resolve()
    user_dir = user_config_dir() if user_dir is None else user_dir
    found = []
    user_file = user_dir / FILE_NAME
    if user_file.is_file():
        found.append((user_file, _user_label(user_file), user_dir.resolve()))
    root = repository_root(workspace) or workspace
    chain = [d for d in (workspace, *workspace.parents) if d == root or root in d.parents]
    for directory in reversed(chain):
        path = directory / FILE_NAME
        if path.is_file():
            found.append((path, _label(path, workspace), root))
    return found


def _user_label(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def _label(path: Path, workspace: Path) -> str:
    up = len(workspace.parts) - len(path.parent.parts)
    return "/".join([".."] * up + [FILE_NAME])


def instruction_stamp(workspace: Path, user_dir: Path | None = None) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime, size) of each AGENTS.md there is: a change means they must be read again."""
    stamps = []
    for path, _, _ in candidate_paths(workspace, user_dir):
        try:
            info = path.stat()
        except OSError:
            continue
        stamps.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(stamps)


def estimate(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / chars_per_token) if text else 0


def load_instructions(
    workspace: Path,
    max_tokens: int,
    *,
    chars_per_token: float = CHARS_PER_TOKEN,
    user_dir: Path | None = None,
) -> Instructions:
    """Read the AGENTS.md files for `workspace` within `max_tokens` (0: read none)."""
    result = Instructions(budget=max_tokens, stamp=instruction_stamp(workspace, user_dir))
    if max_tokens <= 0:
        return result
    texts = []
    for path, label, inside in candidate_paths(workspace, user_dir):
        if not path.resolve().is_relative_to(inside):  # a link to a file elsewhere (a key, a secret)
            result.problems.append(f"{label} not read: it links outside {inside}")
            continue
        try:
            texts.append((path, label, path.read_text(encoding="utf-8", errors="replace")))
        except OSError as e:
            result.problems.append(f"{label} not read: {e.strerror}")
    left = max_tokens
    files = []
    for path, label, text in reversed(texts):  # the nearest is served first
        full = estimate(text, chars_per_token)
        kept = text if full <= left else cut(text, path, label, full, left, chars_per_token)
        tokens = estimate(kept, chars_per_token)
        left = max(0, left - tokens)
        files.append(InstructionFile(path, label, kept, tokens, full))
    result.files = list(reversed(files))
    return result


def cut(text: str, path: Path, label: str, full: int, left: int, chars_per_token: float) -> str:
    """The head of `text` that fits in `left` tokens with the note, cut at a line ('' if none fits)."""
    note = (
        f"\n[{label} is cut here: the whole file is ~{full:,} tokens, over the "
        f"system_prompt.instructions_max_tokens budget. Read {path} for the rest.]"
    )
    room = int((left - estimate(note, chars_per_token) - 1) * chars_per_token)
    if room <= 0:
        return ""
    head = text[:room]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head.rstrip() + "\n" + note if head.strip() else ""
