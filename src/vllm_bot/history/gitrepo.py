"""Where the agent's snapshots live: the user's repository (private refs, a temporary index) or, for a
workspace without git, a private git directory under `.vllm-bot/git` whose work tree is the workspace.

Everything runs through gitpython's command wrapper from the top of the work tree, so every path git
prints or takes is relative to that top; `scope` limits each command to the workspace.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..statedir import STATE_DIR_NAME

REF_ROOT = "refs/vllm-bot/checkpoints"
DEFAULT_MAX_FILE_MB = 50
PRIVATE_GIT_DIR = "git"  # inside .vllm-bot/
JUNK_FILE = "snapshot-excludes"  # inside .vllm-bot/: git.private_excludes, for a user repository
# Our git calls never run commands from the repository's config: no hooks (reference-transaction,
# post-index-change, ... could have been written by a sandboxed agent and would run outside the
# sandbox, in our process) and no fsmonitor hook.
SAFETY = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
PRIVATE_CONFIG = {
    "core.bare": "false",
    "core.autocrlf": "false",
    "core.filemode": "true",
    "core.symlinks": "true",
    "gc.auto": "0",
}
# Identity of the agent's auto-commits (and of the user's, when git has none configured).
BOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "vllm-bot",
    "GIT_AUTHOR_EMAIL": "vllm-bot@localhost",
    "GIT_COMMITTER_NAME": "vllm-bot",
    "GIT_COMMITTER_EMAIL": "vllm-bot@localhost",
}


class GitUnavailable(UserFacingError):
    """git is missing or the repository cannot be used; checkpoints are off for this session."""


@dataclass
class GitRepo:
    """A repository usable for snapshots of `workspace`."""

    workspace: Path
    top: Path  # top of the work tree; commands run here
    git_dir: Path
    private: bool  # True: our own git dir under .vllm-bot (the workspace has no git)
    prefix: str  # the workspace relative to `top` ("" when they are the same), with a trailing "/"
    _git: Any  # git.cmd.Git
    common_dir: Path | None = None  # where config, hooks and objects live (a linked worktree's main .git)
    max_file_bytes: int | None = DEFAULT_MAX_FILE_MB * 2**20  # bigger new files stay out of snapshots
    junk: tuple[str, ...] = ()  # untracked build junk left out of snapshots (git.private_excludes)

    def run(
        self,
        *args: str,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> str:
        """Run one git command; `index` points GIT_INDEX_FILE at a file that is not the user's index."""
        full_env = dict(self._base_env())
        if index is not None:
            full_env["GIT_INDEX_FILE"] = str(index)
        full_env.update(env or {})
        command = ["git", *SAFETY, *args]
        if stdin is None:
            return str(self._git.execute(command, env=full_env, strip_newline_in_stdout=False))
        with tempfile.TemporaryFile() as feed:  # gitpython wants a real file for stdin
            feed.write(stdin)
            feed.seek(0)
            result = self._git.execute(command, env=full_env, strip_newline_in_stdout=False, istream=feed)
        return str(result)

    def _base_env(self) -> dict[str, str]:
        # Explicit directories, found when the session started: a `.git/commondir` (or `.git` file)
        # written since by a sandboxed command cannot point our git at a config or hooks of its own.
        env = {"GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.top)}
        if self.common_dir is not None:
            env["GIT_COMMON_DIR"] = str(self.common_dir)
        return env

    def scope(self) -> list[str]:
        """Pathspec limiting a command to the workspace, without the agent's own state directory."""
        return [self.prefix or ".", f":(exclude){self.prefix}{STATE_DIR_NAME}"]

    def add_scope(self) -> list[str]:
        """Pathspec for `git add`: naming the (ignored) state directory, even to exclude it, is an
        error there; its own `.gitignore` (and info/exclude in a private repository) keeps it out."""
        return [self.prefix or "."]

    def user_index(self) -> Path | None:
        """The user's index file (None for a private repository)."""
        if self.private:
            return None
        return self.top / self.run("rev-parse", "--git-path", "index").strip()

    def head(self) -> str | None:
        """The commit HEAD points at (None: no commits yet, or a private repository)."""
        if self.private:
            return None
        try:
            return self.run("rev-parse", "--verify", "-q", "HEAD^{commit}").strip() or None
        except git_errors():
            return None


def git_errors() -> tuple[type[Exception], ...]:
    """The exceptions gitpython raises when a git command fails."""
    from git.exc import GitCommandError, GitCommandNotFound

    return (GitCommandError, GitCommandNotFound)


def open_repo(workspace: Path, state_dir: Path, excludes: list[str] | None = None) -> GitRepo:
    """The user's repository containing `workspace`, or the private one (created on first use).
    `excludes`: patterns a private repository never snapshots (None: keep the ones written before)."""
    from git.cmd import Git

    workspace = workspace.resolve()
    probe = Git(str(workspace))
    try:
        out = str(
            probe.execute(
                ["git", *SAFETY, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"]
            )
        )
    except git_errors()[1] as e:
        raise GitUnavailable(f"git is not installed ({e}); checkpoints and undo are off") from None
    except git_errors()[0]:
        return _private_repo(workspace, state_dir, excludes, Git)
    top_line, git_dir_line, common_line = out.splitlines()[:3]
    top = Path(top_line).resolve()
    rel = workspace.relative_to(top).as_posix()
    prefix = "" if rel == "." else rel + "/"
    common = (workspace / common_line).resolve()  # printed relative to where git ran, or absolute
    repo = GitRepo(workspace, top, Path(git_dir_line), False, prefix, Git(str(top)), common_dir=common)
    repo.junk = _junk_patterns(state_dir, excludes)
    return repo


def _junk_patterns(state_dir: Path, excludes: list[str] | None) -> tuple[str, ...]:
    """In the user's repository, untracked files matching `excludes` (`__pycache__/`, `*.pyc`) stay
    out of snapshots even without a .gitignore. Kept in the state dir, so `undo` and `diff` from the
    shell (which pass None) leave out what the session left out."""
    saved = state_dir / JUNK_FILE
    if excludes is None:
        return tuple(saved.read_text().split("\n")[:-1]) if saved.is_file() else ()
    wanted = "".join(f"{line}\n" for line in excludes)
    if not saved.is_file() or saved.read_text() != wanted:
        atomic_write(saved, wanted)
    return tuple(excludes)


def _private_repo(workspace: Path, state_dir: Path, excludes: list[str] | None, git_cls: Any) -> GitRepo:
    git_dir = state_dir / PRIVATE_GIT_DIR
    repo = GitRepo(workspace, workspace, git_dir, True, "", git_cls(str(workspace)))
    if not (git_dir / "HEAD").is_file():
        git_dir.mkdir(parents=True, exist_ok=True)
        git_cls(str(workspace)).execute(["git", "init", "-q", "--bare", str(git_dir)])
        # Byte-exact snapshots whatever the user's global config says; no gc while we write.
        for key, value in PRIVATE_CONFIG.items():
            repo.run("config", key, value)
    exclude = git_dir / "info" / "exclude"
    if excludes is None and exclude.is_file():
        return repo  # keep the patterns the session wrote (undo/diff from the shell pass None)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    wanted = "".join(f"{line}\n" for line in [f"/{STATE_DIR_NAME}/", *(excludes or [])])
    if not exclude.is_file() or exclude.read_text() != wanted:
        exclude.write_text(wanted)
    return repo


def atomic_write(path: Path, text: str) -> None:
    """Write by temp file + fsync + rename, so a crash leaves the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
