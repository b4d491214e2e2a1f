"""The agent's own git: every command it runs for itself (checkpoints, undo, diff, auto-commit, the
banner's status, batch's copies) runs through a GitPython `Git` pinned so that none runs code from a
repository's config or from the environment.

GitPython is imported with the first command, never at start-up, and its import runs nothing (it
would run whatever GIT_PYTHON_GIT_EXECUTABLE names); then `git.refresh` pins the git on PATH by its
absolute path. GitPython starts each git from our environment with the `Git` object's laid over it;
`_exact_popen` gives git the object's environment alone, so the user's GIT_CONFIG (which moves what
`git config --list` reads), GIT_EXEC_PATH or GIT_CONFIG_PARAMETERS never reach it.

A `Git` object is pinned to one repository: explicit GIT_DIR, work tree and common dir,
GIT_CEILING_DIRECTORIES, no system or global config, an environment built from scratch, and as its
persistent `-c` options (command-line config beats every file and counts as protected config)
`safe.bareRepository=explicit`, no hooks, no fsmonitor, no pager, editor, askpass, ssh command,
credential helper, gpg program, external diff, transport or auto-gc. Every key of the repository's
config that names a program, read just before each command (includes followed), is overridden too:
`filter.*.clean/smudge/process`, `diff.*.textconv/command`, `merge.*.driver`, `pager.*`,
`credential.*.helper`, `gpg.*.program`, `remote.*.uploadpack/receivepack/vcs`; through
GIT_CONFIG_COUNT, since a `-c` cannot name a key with `=` in it (`filter.a=b.clean`). Only plumbing
and read-only porcelain are run through it.
"""

from __future__ import annotations

import contextvars
import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..config.statedir import is_stand_in
from ..safety.sandbox.paths import host_which

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

_PYTHON_ENV = ("GIT_PYTHON_GIT_EXECUTABLE", "GIT_PYTHON_REFRESH", "GIT_PYTHON_TRACE")  # read by `import git`
_EXACT_ENV: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("git_env", default=None)
_LOADING = threading.Lock()
_gitpython: ModuleType | None = None


class GitFailed(Exception):
    """A git command exited non-zero (or timed out); `stderr` says why."""

    def __init__(self, argv: list[str], status: int | None, stderr: str) -> None:
        self.argv = argv
        self.status = status
        self.stderr = stderr
        super().__init__(f"git {' '.join(argv[1:4])} failed ({status}): {stderr.strip()[:500]}")


class GitMissing(Exception):
    """git is not installed."""


GIT_ERRORS = (GitFailed, GitMissing)


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


def _exact_popen(
    command: str | Sequence[Any], env: Mapping[str, str] | None = None, **kwargs: Any
) -> subprocess.Popen[Any]:
    """GitPython's Popen: a git of ours gets exactly the environment `execute` set."""
    exact = _EXACT_ENV.get()
    return subprocess.Popen(command, env=env if exact is None else exact, **kwargs)


def _load_gitpython() -> ModuleType:
    """GitPython, imported without running anything, with the git on PATH pinned by its path."""
    global _gitpython
    with _LOADING:
        if _gitpython is not None:
            return _gitpython
        program = host_which("git")
        if program is None:
            raise GitMissing("git is not on PATH")
        saved = {name: os.environ.pop(name) for name in _PYTHON_ENV if name in os.environ}
        os.environ.update(GIT_PYTHON_GIT_EXECUTABLE=os.devnull, GIT_PYTHON_REFRESH="quiet")
        try:
            import git
        finally:
            for name in _PYTHON_ENV:
                os.environ.pop(name, None)
            os.environ.update(saved)
        if not hasattr(git.cmd, "safer_popen"):  # where `execute` starts git; named so since 3.1.41
            raise GitMissing(f"GitPython {git.__version__} cannot run git with its own environment")
        git.cmd.safer_popen = _exact_popen
        token = _EXACT_ENV.set(base_env())
        try:
            git.refresh(program)  # runs `<program> version`
        except git.GitCommandNotFound as e:
            raise GitMissing(str(e)) from None
        finally:
            _EXACT_ENV.reset(token)
        _gitpython = git
        return git


def pinned_git(cwd: Path, env: dict[str, str]) -> Any:
    """A GitPython `Git` in `cwd`: the forced keys as its persistent `-c` options, `env` (built from
    scratch) as its whole environment."""
    git = _load_gitpython().Git(cwd)
    git.set_persistent_git_options(c=[f"{key}={value}" for key, value in FORCED_CONFIG])
    git.update_environment(**env)
    return git


def execute(
    git: Any, args: list[str], extra: dict[str, str] | None = None, stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT,
) -> bytes:  # fmt: skip
    """`git <args>` through a pinned `Git`, `extra` added to its environment; stdout as bytes.
    Raises GitFailed / GitMissing. The timeout is ours: GitPython's runs `pgrep` or `ps`."""
    token = _EXACT_ENV.set({**git.environment(), **(extra or {})})
    try:
        process = getattr(git, args[0])(*args[1:], as_process=True, istream=subprocess.PIPE)
    except _load_gitpython().GitCommandNotFound as e:
        raise GitMissing(str(e)) from None
    finally:
        _EXACT_ENV.reset(token)
    try:
        out, err = process.communicate(stdin or b"", timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise GitFailed(["git", *args], None, f"timed out after {timeout:.0f} s") from None
    if process.returncode != 0:
        raise GitFailed(["git", *args], process.returncode, err.decode("utf-8", "replace"))
    return out  # type: ignore[no-any-return]


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = GIT_TIMEOUT) -> str:
    """One git command outside a pinned repository (`env`: base_env()'s); stdout as text."""
    git = pinned_git(cwd, env if env is not None else base_env())
    return execute(git, list(args), timeout=timeout).decode("utf-8", "surrogateescape")


class GitRunner:
    """Runs git in one pinned repository, never running what its config names."""

    def __init__(self, place: GitPlace) -> None:
        self.place = place
        pinned = {"GIT_DIR": str(place.git_dir), "GIT_WORK_TREE": str(place.work_tree)}
        pinned["GIT_CEILING_DIRECTORIES"] = str(place.work_tree.parent)
        if place.common_dir is not None:
            pinned["GIT_COMMON_DIR"] = str(place.common_dir)
        self.git = pinned_git(place.work_tree, base_env(pinned))
        self._listed: tuple[tuple[bytes, ...], list[tuple[str, str]]] | None = None

    def overrides(self) -> list[tuple[str, str]]:
        """An override for every key of the repository's config (and what it includes) that names a
        program, read now: what the next command will read."""
        place = self.place
        configs = [(place.common_dir or place.git_dir) / "config", place.git_dir / "config.worktree"]
        try:
            files = tuple(path.read_bytes() if path.is_file() else b"" for path in configs)
        except OSError:
            files = ()  # unreadable: listed again each time
        if self._listed and self._listed[0] == files and b"include" not in b"".join(files).lower():
            return self._listed[1]  # the same files, including no others: the same keys
        problem = blocking_include(configs)
        if problem:
            raise GitFailed(["git", "config"], None, problem)
        try:
            listed = self.run_bytes("config", "--list", "--name-only", "--includes", "-z", overrides=[])
        except GitFailed:
            listed = b""  # no readable config: git will not read one either (or fail the same way)
        pairs = []
        for key in dict.fromkeys(filter(None, listed.decode("utf-8", "surrogateescape").split("\0"))):
            if _SWITCHES.fullmatch(key):
                pairs.append((key, "false"))
            elif _EXECUTING.fullmatch(key):
                pairs.append((key, ""))
        self._listed = (files, pairs)
        return pairs

    def run(self, *args: str, **options: Any) -> str:
        """`run_bytes`, with stdout as text."""
        return self.run_bytes(*args, **options).decode("utf-8", "surrogateescape")

    def run_bytes(
        self,
        *args: str,
        index: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
        timeout: float = GIT_TIMEOUT,
        overrides: list[tuple[str, str]] | None = None,
    ) -> bytes:
        """One git command from the top of the work tree; `index` points GIT_INDEX_FILE elsewhere."""
        extra = {**(env or {}), **({"GIT_INDEX_FILE": str(index)} if index is not None else {})}
        pairs = self.overrides() if overrides is None else overrides
        for i, (key, value) in enumerate(pairs):  # GIT_CONFIG_COUNT: any key, `=` in it or not
            extra |= {f"GIT_CONFIG_KEY_{i}": key, f"GIT_CONFIG_VALUE_{i}": value}
        extra["GIT_CONFIG_COUNT"] = str(len(pairs))
        return execute(self.git, list(args), extra, stdin, timeout)


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
        out = run_git(
            Path("/"), "config", "--file", str(config), "--no-includes", "-z", "--get-regexp", INCLUDE_KEYS,
            env=base_env({"GIT_CEILING_DIRECTORIES": "/"}), timeout=LIST_TIMEOUT,
        )  # fmt: skip
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
    if extra and blocking_include([dot_git / "config", dot_git / "config.worktree"]):
        return None  # unusable as it stands; the runner says why if it is ever pinned to it
    try:
        out = run_git(
            workspace, "rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel",
            env=base_env(extra), timeout=LIST_TIMEOUT,
        )  # fmt: skip
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
        return run_git(place.work_tree if place else Path.home(), "config", "--get", key, env=env).strip()
    except GIT_ERRORS:
        return ""
