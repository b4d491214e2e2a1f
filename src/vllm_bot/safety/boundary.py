"""The boundary of a session: what the model's work may see and write, and which files it must not
change without the user. One object, built once per session; every enforcer derives from it: the
sandbox's mounts (sandbox/bwrap.py), the file tools' path checks (tools/paths.py), the approval
policy's rules for files that configure the agent (policy.py), the checks after every command
(sandbox/tripwire.py) and the set-up and check runners of batch and eval.

Hide by default, show by list. Inside `$HOME` commands see only the writable roots (the workspace,
`sandbox.writable_paths`, `tools.allowed_paths`) and the toolchains a build needs (`VISIBLE_IN_HOME`,
the `PATH` entries under home, the interpreter the agent runs on, the tool venvs `~/.local/bin` links
to, `sandbox.visible_paths`), read-only; everything else under `$HOME` is absent. Outside `$HOME`
they see the system read-only, minus what is always hidden (`sandbox.hidden_paths`, the agent's own
config and state, the bundled eval data). A workspace at `$HOME` or above it keeps every dotfile and
dot-folder at the top of `$HOME` out of reach (hidden from commands, refused to the file tools), all
of them, not a list.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..config import Config, SandboxConfig
from ..config.layers import user_config_dir
from ..config.statedir import STATE_DIR_NAME, user_state_dir
from ..prompts import message

# Toolchains a build needs, relative to $HOME: shown read-only to commands (extend with
# sandbox.visible_paths). Never a whole tool's folder where it also keeps credentials (`.cargo`
# keeps `credentials.toml` beside `bin`; `.cache` keeps a Hugging Face token).
VISIBLE_IN_HOME = (
    ".local/bin", ".local/lib", ".pyenv", ".rbenv", ".nvm", ".volta", ".fnm", ".local/share/fnm",
    ".bun/bin", ".deno/bin", ".cargo/bin", ".cargo/registry", ".rustup", "go/bin", "go/pkg/mod",
    ".sdkman/candidates", ".asdf/installs", ".asdf/shims", ".local/share/mise/installs",
    ".local/share/mise/shims", ".juliaup", ".elan", ".ghcup/bin", ".cabal/bin", ".dotnet",
    ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".cache/pip", ".cache/uv",
    ".cache/pypoetry/virtualenvs", ".local/share/virtualenvs", ".virtualenvs", ".conda",
    "miniconda3", "anaconda3", "miniforge3", "mambaforge", ".pixi/bin",
)  # fmt: skip
# Files that configure the agent inside a workspace: what they say runs programs (MCP servers) or
# changes what the agent may do, so the model never writes them without the user.
MCP_JSON = ".mcp.json"
PROJECT_CONFIG = f"{STATE_DIR_NAME}/config.json"
INSTRUCTIONS = "AGENTS.md"  # steers every later session in this folder
RuleName = Literal[
    "outside-workspace", "hidden", "home-dotfiles", "git-internals", "agent-state", "agent-config",
    "agent-instructions", "read-only", "home-top", "toolchain",
]  # fmt: skip
Effect = Literal["deny", "ask", "ask-unless-full-auto"]


@dataclass(frozen=True)
class Rule:
    """Why an access is restricted: a named rule, its effect, the path it protects and what the user
    can do about it."""

    name: RuleName
    effect: Effect
    path: Path
    advice: str

    def describe(self, shown: str, where: str | None = None) -> str:
        """`shown` (the path as the model wrote it) and why it is restricted; `where` names the
        protected path (default: as it is)."""
        text = message(f"rule_{self.name}", where=where or str(self.path))
        return f"{shown} {text} (rule {self.name}; {self.advice})"


@dataclass(frozen=True)
class Boundary:
    """What one session's model may see and write. `roots` are writable; `shown` are visible
    read-only inside $HOME; `hidden` are never visible; `guarded` are the git dirs and the agent's
    state dir that stay read-only inside the roots."""

    workspace: Path
    home: Path
    roots: tuple[Path, ...]
    shown: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    guarded: tuple[Path, ...] = ()
    workspace_read_only: bool = False  # plan mode: nothing in the workspace changes
    unix_sockets: bool = False  # commands may create AF_UNIX sockets (sandbox.unix_sockets)
    notes: tuple[str, ...] = field(default=(), compare=False)

    # -- what a path is --------------------------------------------------------------------
    @property
    def home_inside_root(self) -> bool:
        """The workspace (or another writable root) is $HOME or above it."""
        return self.home != Path("/") and _within(self.home, self.roots) is not None

    def home_dotfile(self, real: Path) -> Path | None:
        """The top-level dot entry of $HOME that `real` is in (or is), when a root holds $HOME."""
        if not self.home_inside_root or real == self.home or not real.is_relative_to(self.home):
            return None
        top = real.relative_to(self.home).parts[0]
        return self.home / top if top.startswith(".") else None

    def visible(self, real: Path) -> bool:
        """Whether a sandboxed command sees `real` (a resolved path) at all."""
        return _within(real, self.hidden) is None and self.exposed(real)

    def exposed(self, real: Path) -> bool:
        """Whether the sandbox's mounts show `real` before the hidden paths are masked."""
        if _within(real, self.shown) is not None:
            return True
        if self.home_dotfile(real) is not None:
            return False
        if _within(real, self.roots) is not None:
            return True
        if self.home != Path("/") and real.is_relative_to(self.home):
            return False
        return not (real.is_relative_to("/tmp") or real.is_relative_to("/run"))

    def judge(self, real: Path, *, write: bool) -> Rule | None:
        """The rule that restricts the file tools' access to `real` (resolved), None when allowed."""
        hidden = _within(real, self.hidden)
        if hidden is not None:
            return Rule("hidden", "deny", hidden, "the user can read or change it themselves")
        dotfile = self.home_dotfile(real)
        if dotfile is not None:
            advice = "start the agent in a project folder to work on files"
            return Rule("home-dotfiles", "deny", dotfile, advice)
        root = _within(real, self.roots)
        if root is None:
            advice = "the user can add a folder to sandbox.writable_paths"
            return Rule("outside-workspace", "deny", self.workspace, advice)
        return self.judge_write(real) if write else None

    def judge_write(self, real: Path) -> Rule | None:
        if self.home_inside_root and real.parent == self.home and not os.path.lexists(real):
            return Rule("home-top", "deny", self.home, "work inside a folder of the home directory")
        if self.workspace_read_only:
            return Rule("read-only", "deny", self.workspace, "plan mode is on: present the plan first")
        toolchain = self.read_only_shown(real)
        if toolchain is not None:
            return Rule("toolchain", "deny", toolchain, "the user can change it themselves")
        guarded = _within(real, self.guarded) or _named_inside(real, _within(real, self.roots))
        if guarded is not None and guarded.name == STATE_DIR_NAME:
            if real == guarded / "config.json":
                return Rule("agent-config", "ask", real, "only the user can allow it")
            return Rule("agent-state", "deny", guarded, "the user can change it themselves")
        if guarded is not None:
            return Rule("git-internals", "deny", guarded, "use git commands through exec")
        if real == self.workspace / MCP_JSON:
            return Rule("agent-config", "ask", real, "only the user can allow it")
        if real.name == INSTRUCTIONS:
            return Rule("agent-instructions", "ask-unless-full-auto", real, "the user can allow it")
        return None

    def read_only_shown(self, real: Path) -> Path | None:
        """The show-list folder that keeps `real` read-only inside a root at or above $HOME (the
        sandbox mounts the show-list over such a root; a root inside $HOME is mounted over it)."""
        shown = _within(real, [p for p in self.shown if p.is_relative_to(self.home)])
        if shown is None or self.home == Path("/"):
            return None
        inner = [r for r in self.roots if not self.home.is_relative_to(r)]
        return None if _within(real, inner) is not None else shown

    def agent_files(self) -> list[Path]:
        """The files in the workspace that configure the agent (whether they exist or not)."""
        return [self.workspace / MCP_JSON, self.workspace / PROJECT_CONFIG]

    def describe_shown(self) -> list[str]:
        """The show-list as the user reads it (/sandbox, doctor): `~/x` for paths under $HOME."""
        return [_tilde(path, self.home) for path in self.shown]


def build(
    workspace: Path,
    config: Config,
    *,
    env: Mapping[str, str] | None = None,
    state_dirs: Sequence[Path] = (),
    read_only: bool = False,
) -> Boundary:
    """The boundary of a session in `workspace` under `config` (the user's config files and state
    dirs hidden; `state_dirs` adds more of the agent's own folders)."""
    env = os.environ if env is None else env
    files = config.provenance.files
    hidden_files = [Path(p) for label, p, how in files if label in CONFIG_FILES and how != "not found"]
    return for_workspace(
        workspace,
        config.sandbox,
        allowed=config.tools.allowed_paths,
        env=env,
        extra_hidden=[
            *hidden_files,
            *(d for d in state_dirs if not _real(d).is_relative_to(_real(workspace))),
        ],
        read_only=read_only,
    )


CONFIG_FILES = ("defaults file", "user config", "--config")


def for_workspace(
    workspace: Path,
    sandbox: SandboxConfig | None = None,
    *,
    allowed: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    extra_hidden: Iterable[Path] = (),
    read_only: bool = False,
) -> Boundary:
    """The boundary from its parts (tests and the tool executor build one without a whole config)."""
    env = os.environ if env is None else env
    sandbox = sandbox or SandboxConfig()
    ws = _real(workspace)
    home = _real(env.get("HOME") or Path.home())
    extra = [*sandbox.writable_paths, *allowed]
    roots = [ws, *_dedupe(p for p in (_expand(e, ws, home) for e in extra) if p.is_dir())]
    roots = [r for i, r in enumerate(roots) if r not in roots[:i]]
    hidden = [_expand(e, ws, home) for e in sandbox.hidden_paths]
    hidden += [_real(p) for p in extra_hidden]
    hidden += [_real(user_config_dir(env)), _real(user_state_dir(create=False, env=env)), *eval_data()]
    from .sandbox.paths import git_dirs  # an import cycle: the sandbox builds on the boundary

    guarded = [ws / STATE_DIR_NAME, ws / ".git", *git_dirs(ws)]
    return Boundary(
        workspace=ws,
        home=home,
        roots=tuple(roots),
        shown=tuple(_show_list(home, sandbox.visible_paths, env, ws)),
        # a hidden folder that holds the workspace (eval's copies live in our state dir) hides the rest
        hidden=tuple(h for h in _dedupe(hidden) if not ws.is_relative_to(h)),
        guarded=tuple(_dedupe(guarded)),
        workspace_read_only=read_only,
        unix_sockets=sandbox.unix_sockets,
    )


def eval_data() -> list[Path]:
    """The bundled eval suite's hidden tests (and, in a checkout, the reference solutions)."""
    package = Path(__file__).resolve().parents[1]
    found = [package / "eval" / "tasks"]
    checkout = package.parents[1]
    if (checkout / "cli.py").is_file():
        found.append(checkout / "tests" / "eval")
    return found


def _show_list(home: Path, extra: Sequence[str], env: Mapping[str, str], workspace: Path) -> list[Path]:
    """The folders commands see read-only where they would see nothing (under $HOME, or under /tmp,
    which is private to the sandbox): toolchains, PATH, the agent's interpreter and its own package
    (what a batch or eval check runs with: `{python}` and the eval harness), the tool venvs linked
    from the shown bin folders, and sandbox.visible_paths."""
    candidates = [home / rel for rel in VISIBLE_IN_HOME] if home != Path("/") else []
    candidates += [Path(p) for p in env.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    candidates += [Path(sys.prefix), Path(sys.base_prefix), Path(__file__).resolve().parents[1]]
    candidates += [_expand(e, workspace, home) for e in extra]
    shown: list[Path] = []
    for path in candidates:
        real = _real(path)
        in_home = home != Path("/") and real != home and real.is_relative_to(home)
        if not (in_home or real.is_relative_to("/tmp")) or not real.exists() or real in shown:
            continue
        shown.append(real)
    for folder in [p for p in shown if p.name == "bin"]:
        shown += [v for v in _linked_venvs(folder, home) if v not in shown]
    return _dedupe(shown)


def _linked_venvs(folder: Path, home: Path) -> list[Path]:
    """The environments that the programs in `folder` link to, under $HOME (pipx, uv tool)."""
    found: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries[:500]:
        if not entry.is_symlink():
            continue
        target = _real(entry.path)
        if target.is_relative_to(home) and target.parent != folder:
            found.append(target.parent.parent if target.parent.name == "bin" else target.parent)
    return found


def _expand(entry: str, workspace: Path, home: Path) -> Path:
    text = entry[1:] if entry == "~" or entry.startswith("~/") else None
    path = home / text.lstrip("/") if text is not None else Path(entry)
    return _real(path if path.is_absolute() else workspace / path)


def _dedupe(paths: Iterable[Path]) -> list[Path]:
    """Paths in order, without repeats and without those inside an earlier-or-later one of them."""
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(o != p and p.is_relative_to(o) for o in unique)]


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def _within(path: Path, roots: Iterable[Path]) -> Path | None:
    for root in roots:
        if path == root or path.is_relative_to(root):
            return root
    return None


def _named_inside(real: Path, root: Path | None) -> Path | None:
    """The `.git` or `.vllm-bot` folder (any case) `real` is in below `root`: a nested repository's
    hooks and config run as surely as the workspace's own."""
    if root is None or real == root:
        return None
    folder = root
    for part in real.relative_to(root).parts:
        folder = folder / part
        if part.lower() == ".git" or part == STATE_DIR_NAME:
            return folder
    return None


def _tilde(path: Path, home: Path) -> str:
    return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) and path != home else str(path)
