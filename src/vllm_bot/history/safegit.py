"""The agent's own git: every command it runs for itself (checkpoints, undo, diff, auto-commit, the
banner's status) goes through `GitRunner`, so none runs code from a repository's config.

A runner is pinned to one repository when it is made: explicit GIT_DIR, work tree and common dir,
GIT_CEILING_DIRECTORIES, no system or global config, and an environment built from scratch (the
user's GIT_* variables never reach it). Every command gets, as command-line config (which beats every
file and counts as protected config), `safe.bareRepository=explicit`, no hooks, no fsmonitor, no
pager, editor, askpass, ssh command, credential helper, gpg program, external diff, transport or
auto-gc; and, read from the repository's config just before each command (includes followed), every
key there that names a program is overridden too: `filter.*.clean/smudge/process`,
`diff.*.textconv/command`, `merge.*.driver`, `pager.*`, `credential.*.helper`, `gpg.*.program`,
`remote.*.uploadpack/receivepack/vcs`. Only plumbing and read-only porcelain are run through it.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..statedir import is_stand_in

GIT_TIMEOUT = 600.0  # a planted FIFO in an include.path must not hang the agent
LIST_TIMEOUT = 30.0
FORCED_CONFIG: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", "false"),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.attributesFile", os.devnull),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# Keys of a repository's config that name a program: overridden with "" (or "false").
_EXECUTING = re.compile(
    r"(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|"
    r"credential\..+\.helper|gpg\..+\.program|remote\..+\.(uploadpack|receivepack|vcs)|"
    r"difftool\..+\.cmd|mergetool\..+\.cmd)",
    re.IGNORECASE,
)
_SWITCHES = re.compile(r"(filter\..+\.required|pager\..+)", re.IGNORECASE)  # overridden with "false"
_KEPT_ENV = ("PATH", "HOME", "TZ", "TMPDIR", "SYSTEMROOT")
_USER_CONFIG_ENV = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")


class GitFailed(Exception):
    """A git command exited non-zero (or timed out); `stderr` says why."""

    def __init__(self, argv: list[str], status: int | None, stderr: str) -> None:
        self.argv = argv
        self.status = status
        self.stderr = stderr
        super().__init__(f"git {' '.join(argv[1:4])} failed ({status}): {stderr.strip()[:500]}")


class GitMissing(Exception):
    """git is not installed."""


def git_errors() -> tuple[type[Exception], type[Exception]]:
    """(a git command failed, git is missing)."""
    return (GitFailed, GitMissing)


@dataclass(frozen=True)
class GitPlace:
    """Where one repository is, found once and never looked up again."""

    git_dir: Path
    work_tree: Path
    common_dir: Path | None = None  # a linked worktree's main .git (config, objects, refs)


def base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for git built from scratch: PATH and HOME only from ours, C locale, no config
    but the forced keys, no terminal prompts."""
    env = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
    env.update(
        {
            "LC_ALL": "C",
            "LANGUAGE": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
        }
    )
    env.update(extra or {})
    return env


def with_config(env: dict[str, str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """`env` plus `pairs` as command-line config (GIT_CONFIG_COUNT/KEY_n/VALUE_n)."""
    out = {k: v for k, v in env.items() if not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    for i, (key, value) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    out["GIT_CONFIG_COUNT"] = str(len(pairs))
    return out


def execute(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT,
) -> str:
    """Run git; stdout as text. Raises GitFailed / GitMissing."""
    return execute_bytes(argv, env, cwd, stdin, timeout).decode("utf-8", "surrogateescape")


def execute_bytes(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT,
) -> bytes:
    """Run git; stdout as bytes. Raises GitFailed / GitMissing."""
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout,
        )
    except FileNotFoundError as e:
        raise GitMissing(str(e)) from None
    except subprocess.TimeoutExpired:
        raise GitFailed(argv, None, f"timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise GitFailed(argv, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc.stdout


class GitRunner:
    """Runs git in one pinned repository, never running what its config names."""

    def __init__(self, place: GitPlace) -> None:
        self.place = place
        self._listed: tuple[tuple[bytes, ...], list[tuple[str, str]]] | None = None

    def _config_files(self) -> tuple[bytes, ...] | None:
        """The bytes of every config file git reads here (system and global are off); None when one
        includes others, whose place and contents only git itself works out."""
        place = self.place
        paths = [(place.common_dir or place.git_dir) / "config", place.git_dir / "config.worktree"]
        contents = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError:
                data = b""
            if b"include" in data.lower():
                return None
            contents.append(data)
        return tuple(contents)

    def pinned_env(self) -> dict[str, str]:
        place = self.place
        env = {
            "GIT_DIR": str(place.git_dir),
            "GIT_WORK_TREE": str(place.work_tree),
            "GIT_CEILING_DIRECTORIES": str(place.work_tree.parent),
        }
        if place.common_dir is not None:
            env["GIT_COMMON_DIR"] = str(place.common_dir)
        return base_env(env)

    def overrides(self) -> list[tuple[str, str]]:
        """The forced keys plus an override for every key of the repository's config (and what it
        includes) that names a program, read now: what the next command will read."""
        files = self._config_files()
        if files is not None and self._listed is not None and self._listed[0] == files:
            return self._listed[1]  # the same files: the same keys
        env = with_config(self.pinned_env(), list(FORCED_CONFIG))
        if files is None:
            self._check_includes()
        try:
            listed = execute(
                ["git", "config", "--list", "--name-only", "--includes", "-z"],
                env,
                self.place.work_tree,
                timeout=LIST_TIMEOUT,
            )
        except GitFailed:
            listed = ""  # no readable config: git will not read one either (or fail the same way)
        pairs = list(FORCED_CONFIG)
        for key in dict.fromkeys(filter(None, listed.split("\0"))):
            if _SWITCHES.fullmatch(key):
                pairs.append((key, "false"))
            elif _EXECUTING.fullmatch(key):
                pairs.append((key, ""))
        if files is not None:
            self._listed = (files, pairs)
        return pairs

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return with_config({**self.pinned_env(), **(extra or {})}, self.overrides())

    def _check_includes(self) -> None:
        place = self.place
        configs = [(place.common_dir or place.git_dir) / "config", place.git_dir / "config.worktree"]
        problem = blocking_include(configs)
        if problem:
            raise GitFailed(["git", "config"], None, problem)

    def run(
        self,
        *args: str,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
        timeout: float = GIT_TIMEOUT,
    ) -> str:
        """One git command from the top of the work tree; `index` points GIT_INDEX_FILE elsewhere."""
        return self.run_bytes(*args, index=index, env=env, stdin=stdin, timeout=timeout).decode(
            "utf-8", "surrogateescape"
        )

    def run_bytes(
        self,
        *args: str,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
        timeout: float = GIT_TIMEOUT,
    ) -> bytes:
        """`run`, with stdout as bytes (packs)."""
        extra = dict(env or {})
        if index is not None:
            extra["GIT_INDEX_FILE"] = str(index)
        return execute_bytes(["git", *args], self.env(extra), self.place.work_tree, stdin, timeout)


MAX_INCLUDE_DEPTH = 10  # git's own limit on nested includes
INCLUDE_KEYS = r"^include(if\..*)?\.path$"


def blocking_include(configs: list[Path]) -> str | None:
    """Why git would hang on these config files, or None: one includes something other than a
    regular file (a FIFO or a device), which git opens and waits on, so every command would wait
    until its timeout. Each file is read for its include paths alone (`--no-includes`: nothing it
    names is opened), and the regular files it includes the same way, as deep as git follows them."""
    pending = [(config, 0) for config in configs]
    seen: set[Path] = set()
    while pending:
        config, depth = pending.pop()
        if config in seen or depth > MAX_INCLUDE_DEPTH or not config.is_file():
            continue
        seen.add(config)
        try:
            if b"include" not in config.read_bytes().lower():
                continue  # nothing to follow: no git run for it
        except OSError:
            continue
        for target in _include_paths(config):
            if target.exists() and not target.is_file():
                return (
                    f"the repository's config ({config}) includes {target}, which is not a regular file "
                    "(a FIFO or a device): git would wait on it, so the agent's own git does not run in "
                    "this repository until that include is removed"
                )
            pending.append((target, depth + 1))
    return None


def _include_paths(config: Path) -> list[Path]:
    """The paths one config file includes (`include.path`, `includeIf.*.path`), resolved as git
    does: `~/` from HOME, relative to the including file's directory. Read outside any repository:
    inside one, git would read that repository's whole config (includes and all) first."""
    try:
        out = execute(
            ["git", "config", "--file", str(config), "--no-includes", "-z", "--get-regexp", INCLUDE_KEYS],
            base_env({"GIT_CEILING_DIRECTORIES": "/"}),
            Path("/"),
            timeout=LIST_TIMEOUT,
        )
    except GitFailed:
        return []  # no include (exit 1), or a file git cannot read either
    paths = []
    for entry in filter(None, out.split("\0")):
        _, _, value = entry.partition("\n")
        if value:
            paths.append(config.parent / os.path.expanduser(value))  # an absolute value stays as it is
    return paths


def find_user_repo(workspace: Path) -> GitPlace | None:
    """The repository the workspace belongs to, found safely: its own `.git` if it has one (never a
    repository further up when that one is broken), else the nearest `.git` above it; never a bare
    repository found by discovery (the workspace root or a subdirectory laid out as one)."""
    workspace = workspace.resolve()
    dot_git = workspace / ".git"
    own = os.path.lexists(dot_git) and not is_stand_in(dot_git)  # not the sandbox's empty stand-in
    extra = {"GIT_DIR": str(dot_git)} if own else {}
    env = with_config(base_env(extra), list(FORCED_CONFIG))
    if extra and blocking_include([dot_git / "config", dot_git / "config.worktree"]):
        return None  # unusable as it stands; the runner says why if it is ever pinned to it
    try:
        out = execute(
            ["git", "rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel"],
            env,
            workspace,
            timeout=LIST_TIMEOUT,
        )
    except GitFailed:
        return None
    lines = out.splitlines()
    if len(lines) < 2:
        return None  # a bare repository: nothing we can snapshot against
    git_dir = Path(lines[0])
    common = (workspace / lines[1]).resolve()  # printed relative to where git ran, or absolute
    top = workspace if extra else Path(lines[2]).resolve() if len(lines) > 2 else workspace
    return GitPlace(git_dir, top, common)


def read_user_setting(place: GitPlace | None, key: str) -> str:
    """A config value as the user's own git sees it (global config included; reading runs nothing)."""
    env = base_env({"GIT_DIR": str(place.git_dir)} if place else {})
    for name in _USER_CONFIG_ENV:  # where the user's git finds its config files
        env.pop(name, None)
        if name in os.environ:
            env[name] = os.environ[name]
    try:
        return execute(
            ["git", "config", "--get", key], env, place.work_tree if place else Path.home()
        ).strip()
    except (GitFailed, GitMissing):
        return ""
