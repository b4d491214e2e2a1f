"""Where the agent's snapshots live: its own git directory, `.vllm-bot/git`, whose work tree is the
workspace, in every workspace (with git or without), as Gemini CLI and Qwen Code keep theirs.

The config of that directory is ours: rewritten each time it is opened, and every command runs
through `safegit.GitRunner` anyway. The store is self-contained (every blob of a snapshot is in it),
so undo works even when the user's `.git` is damaged or gone. The user's repository (if any) is found
once, safely (`safegit.find_user_repo`), and used only by auto-commit and the banner, through
plumbing. Nothing in the user's `.git` (config, hooks, attributes, a broken HEAD, a planted
repository beside it) can make our git run a program: its config is never the one we run with.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..config.statedir import STATE_DIR_NAME, atomic_write
from ..errors import UserFacingError
from .safegit import GitFailed, GitMissing, GitPlace, GitRunner, find_user_repo, read_user_setting, run_git

REF_ROOT = "refs/vllm-bot/checkpoints"
DEFAULT_MAX_FILE_MB = 50
PRIVATE_GIT_DIR = "git"  # inside .vllm-bot/
JUNK_FILE = "snapshot-excludes"  # inside .vllm-bot/: git.private_excludes, for a user repository
# Byte-exact snapshots whatever anyone's config says; no gc while we write.
SHADOW_CONFIG = {
    "core": {"repositoryformatversion": "0", "bare": "false", "autocrlf": "false", "filemode": "true",
             "symlinks": "true", "logallrefupdates": "false"},
    "gc": {"auto": "0"},
}  # fmt: skip
_FOREIGN = ("commondir", "config.worktree", "info/attributes", "info/grafts", "hooks")
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
class UserRepo:
    """The user's repository, pinned when the session started."""

    place: GitPlace
    runner: GitRunner

    @property
    def git_dir(self) -> Path:
        return self.place.git_dir

    @property
    def common_dir(self) -> Path:
        return self.place.common_dir or self.place.git_dir

    def run(self, *args: str, index: Path | None = None, env: dict[str, str] | None = None) -> str:
        return self.runner.run(*args, index=index, env=env)

    def head(self) -> str | None:
        """The commit HEAD points at (None: no commits yet, or HEAD is unreadable)."""
        try:
            return self.run("rev-parse", "--verify", "-q", "HEAD^{commit}").strip() or None
        except GitFailed:
            return None


@dataclass
class GitRepo:
    """The snapshot store of `workspace`: our git directory, the workspace as its work tree."""

    workspace: Path
    git_dir: Path
    runner: GitRunner
    user: UserRepo | None = None
    max_file_bytes: int | None = DEFAULT_MAX_FILE_MB * 2**20  # bigger new files stay out of snapshots
    extra_env: dict[str, str] = field(default_factory=dict)  # see `seeing_user_objects`
    junk: tuple[str, ...] = ()  # in a user repository: untracked build junk left out (private_excludes)

    @property
    def top(self) -> Path:
        return self.workspace

    @property
    def private(self) -> bool:
        """True when the workspace has no repository of its own (no auto-commit)."""
        return self.user is None

    def run(
        self,
        *args: str,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> str:
        """Run one git command in the snapshot store; `index` points GIT_INDEX_FILE at our index."""
        return self.runner.run(*args, index=index, env={**self.extra_env, **(env or {})}, stdin=stdin)

    def run_bytes(self, *args: str, stdin: bytes | None = None) -> bytes:
        return self.runner.run_bytes(*args, env=self.extra_env, stdin=stdin)

    @contextmanager
    def seeing_user_objects(self) -> Iterator[None]:
        """Commands inside also read the user's objects (auto-commit builds on HEAD); new objects
        still go to our store, which never depends on theirs."""
        if self.user is None:
            yield
            return
        self.extra_env = {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.user.common_dir / "objects")}
        try:
            yield
        finally:
            self.extra_env = {}

    def scope(self) -> list[str]:
        """Pathspec of the workspace without the agent's own state directory."""
        return [".", f":(exclude){STATE_DIR_NAME}"]

    def add_scope(self) -> list[str]:
        """Pathspec for `git add`: naming the (ignored) state directory, even to exclude it, is an
        error there; info/exclude keeps it out."""
        return ["."]

    def head(self) -> str | None:
        """The commit HEAD of the user's repository points at (None without one)."""
        return self.user.head() if self.user else None

    @property
    def user_prefix(self) -> str:
        """The workspace relative to the top of the user's work tree ("" or "sub/dir/")."""
        if self.user is None:
            return ""
        rel = os.path.relpath(self.workspace, self.user.place.work_tree)
        return "" if rel == "." else rel.replace(os.sep, "/") + "/"


def open_repo(workspace: Path, state_dir: Path, excludes: list[str] | None = None) -> GitRepo:
    """The snapshot store (created on first use), pinned together with the user's repository.
    `excludes`: patterns never snapshotted in a workspace without git (None: keep the ones written
    before)."""
    workspace = workspace.resolve()
    git_dir = (state_dir / PRIVATE_GIT_DIR).resolve()
    try:
        place = find_user_repo(workspace)
        _init_store(git_dir, workspace)
    except GitMissing as e:
        raise GitUnavailable(f"git is not installed ({e}); checkpoints and undo are off") from None
    user = UserRepo(place, GitRunner(place)) if place is not None else None
    _write_config(git_dir, place)
    _write_excludes(git_dir, place, excludes)
    runner = GitRunner(GitPlace(git_dir, workspace, git_dir))
    junk = _junk_patterns(state_dir, excludes) if user is not None else ()
    return GitRepo(workspace, git_dir, runner, user, junk=junk)


def _junk_patterns(state_dir: Path, excludes: list[str] | None) -> tuple[str, ...]:
    """In the user's repository, untracked files matching `excludes` (`__pycache__/`, `*.pyc`) stay
    out of snapshots even without a .gitignore, but files the user's git tracks never do (so they
    cannot go to info/exclude). Kept in the state dir: `undo` and `diff` from the shell pass None."""
    saved = state_dir / JUNK_FILE
    if excludes is None:
        return tuple(saved.read_text(encoding="utf-8").splitlines()) if saved.is_file() else ()
    wanted = "".join(f"{line}\n" for line in excludes)
    if not saved.is_file() or saved.read_text(encoding="utf-8") != wanted:
        atomic_write(saved, wanted)
    return tuple(excludes)


def _init_store(git_dir: Path, workspace: Path) -> None:
    if (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir() and (git_dir / "refs").is_dir():
        return
    git_dir.mkdir(parents=True, exist_ok=True)
    # No template: nothing of the system's (sample hooks, info/exclude) is copied in.
    run_git(workspace, "init", "-q", "--bare", "--template=", str(git_dir))


def _write_config(git_dir: Path, place: GitPlace | None) -> None:
    """Our config, rewritten on every open (whatever was changed in it is gone), and nothing else of
    git's that could point elsewhere or name programs."""
    for name in _FOREIGN:
        path = git_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink()
    sections = {section: dict(values) for section, values in SHADOW_CONFIG.items()}
    excludes_file = read_user_setting(place, "core.excludesFile")
    if excludes_file:
        sections["core"]["excludesfile"] = excludes_file
    text = "".join(
        f"[{section}]\n" + "".join(f"\t{key} = {_quote(value)}\n" for key, value in values.items())
        for section, values in sections.items()
    )
    atomic_write(git_dir / "config", text)
    (git_dir / "objects" / "info" / "alternates").unlink(missing_ok=True)  # self-contained


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _write_excludes(git_dir: Path, place: GitPlace | None, excludes: list[str] | None) -> None:
    """What snapshots leave out besides the work tree's .gitignore files: our state directory, the
    user's `.git/info/exclude` (in a repository) or `git.private_excludes` (without one)."""
    exclude = git_dir / "info" / "exclude"
    if place is None and excludes is None and exclude.is_file():
        return  # keep the patterns the session wrote (undo/diff from the shell pass None)
    lines = [f"/{STATE_DIR_NAME}/"]
    if place is not None:
        user_exclude = (place.common_dir or place.git_dir) / "info" / "exclude"
        try:
            lines.append(user_exclude.read_text(encoding="utf-8", errors="replace").rstrip("\n"))
        except OSError:
            pass
    else:
        lines += excludes or []
    wanted = "".join(f"{line}\n" for line in lines)
    if not exclude.is_file() or exclude.read_text(encoding="utf-8", errors="replace") != wanted:
        atomic_write(exclude, wanted)
