"""Run commands inside bubblewrap, as the session's boundary (safety/boundary.py) says.

Mount order matters (later mounts cover earlier ones): the whole filesystem read-only, fresh /dev
and /proc with every host-global kernel interface read-only (kernelfs.py), an empty /run (service
sockets: D-Bus, Docker, systemd), a private /tmp; then $HOME as an empty read-only tmpfs with only
the boundary's show-list bound back read-only (and, for a workspace at or above $HOME, its
non-dot entries read-write); the writable roots read-write; the repositories' git dirs read-only
(unless sandbox.git_writable; then `.git` is bound onto itself so it cannot be renamed away and
replaced); protected paths inside the writable trees read-only again; and what the boundary always
hides that would still be visible. Protected paths that do not exist yet get an empty mount point so
they cannot be created, removed when the command ends (`release_mount_points`), never while another
session in the same workspace mounts on it too (mountpoints.py). The command itself starts under the
seccomp filter (seccomp.py) and the resource limits (limits.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from vllm_bot.config import SandboxConfig
from vllm_bot.config.statedir import is_stand_in, workspace_state_dir
from vllm_bot.safety.boundary import Boundary, for_workspace
from vllm_bot.safety.sandbox import kernelfs, seccomp
from vllm_bot.safety.sandbox.limits import SECCOMP_FD, Launch, launcher, resolve
from vllm_bot.safety.sandbox.mountpoints import MountPoints
from vllm_bot.safety.sandbox.paths import (
    SCAN_LIMIT,
    Protected,
    git_dirs,
    nested_repositories,
    protected_paths,
)
from vllm_bot.safety.sandbox.status import SandboxStatus, unavailable_message


class SandboxUnavailable(RuntimeError):
    """sandbox.mode is bwrap but bubblewrap cannot run; the message names the cause and the fix."""


class Sandbox:
    """Builds the bwrap argv for one workspace. `wrap` is what the exec tool calls."""

    def __init__(
        self,
        workspace: Path,
        config: SandboxConfig,
        status: SandboxStatus,
        *,
        private_tmp: Path | None = None,
        home: Path | None = None,
        boundary: Boundary | None = None,
    ):
        self.workspace = Path(workspace).resolve()
        self.config = config
        self.status = status
        if boundary is None:
            env = {**os.environ, **({"HOME": str(home)} if home is not None else {})}
            boundary = for_workspace(self.workspace, config, env=env)
        self.boundary = boundary
        self._private_tmp = Path(private_tmp).resolve() if private_tmp is not None else None
        self._own_tmp = private_tmp is None
        self._mounts = MountPoints(self.workspace)  # the empty mount points made or borrowed
        self.problems: list[str] = []  # protections that could not be applied (shown by the app)
        self._host_dir: Path | None = None  # our files outside the sandbox (the seccomp program)
        self._nested: dict[Path, list[Path]] = {}  # writable root -> its nested repositories
        self._lasting: list[str] = []  # problems found once per session (the nested-repository search)
        self._shm_size = resolve(config).memory

    @property
    def active(self) -> bool:
        return self.config.mode != "off" and self.status.active

    @property
    def tmpdir(self) -> str | None:
        """TMPDIR for child commands: the private /tmp when sandboxed, else leave the user's."""
        return "/tmp" if self.active else None

    def wrap(self, argv: list[str], launch: Launch | None = None) -> list[str]:
        """argv that runs `argv` inside the sandbox, under the seccomp filter and `launch`'s cgroups
        and rlimits (unchanged when the sandbox is off or unavailable in auto mode); raises
        SandboxUnavailable in bwrap mode without a working bwrap."""
        if self.config.mode == "off":
            return list(argv)
        if not self.status.active or self.status.bwrap is None:
            if self.config.mode == "bwrap":
                raise SandboxUnavailable(unavailable_message(self.status))
            return list(argv)
        if self.workspace == Path("/"):
            raise SandboxUnavailable(f"refusing to sandbox with {self.workspace} as the writable workspace")
        inner = launcher(argv, ulimits=launch.ulimits) if launch is not None else list(argv)
        return self._confine(self.status.bwrap, inner, launch)

    def _confine(self, bwrap: str, inner: list[str], launch: Launch | None) -> list[str]:
        program = self.seccomp_file()
        filter_args = ["--seccomp", str(SECCOMP_FD)] if program is not None else []
        command = [bwrap, *self.status.flags, *filter_args, *self.mount_args(), "--", *inner]
        join = launch.join if launch is not None else []
        if program is None and not join:
            return command
        return launcher(command, join=join, seccomp=str(program) if program is not None else None)

    def mount_args(self) -> list[str]:
        """The bwrap mount arguments (creates the private /tmp and missing mount points on first use)."""
        self.problems = []
        workspace_state_dir(self.workspace)
        with self._mounts.locked():  # no other session removes a mount point while these are computed
            return self._mount_args()

    def _mount_args(self) -> list[str]:
        args = ["--ro-bind", "/", "/", *kernelfs.dev_args(self._shm_size), *kernelfs.proc_args()]
        args += self._run_args()
        args += ["--bind", str(self.private_tmp()), "/tmp"]
        # shown under the private /tmp: the agent's own interpreter or package, when a checkout is there
        args += [
            a for p in self.boundary.shown if p.is_relative_to("/tmp") for a in ("--ro-bind", str(p), str(p))
        ]
        roots = list(self.boundary.roots)
        git_args, read_only_git = self._git_args(roots)
        # a git dir under the hidden $HOME outside the roots (a batch copy's worktree of ~/proj) is
        # bound before $HOME turns read-only: bwrap makes its mount point there
        home = self.boundary.home
        binds = [git_args[i : i + 3] for i in range(0, len(git_args), 3)]
        in_home = [b for b in binds if Path(b[2]).is_relative_to(home) and not _inside(Path(b[2]), roots)]
        args += self._home_and_roots_args(roots, [a for b in in_home for a in b])
        args += [a for b in binds if b not in in_home for a in b]
        args += self._protect_args(roots, read_only_git)
        args += self._hide_args()
        self.problems += self._lasting
        return args

    def seccomp_file(self) -> Path | None:
        """The compiled seccomp program, written once per session outside the sandbox's view."""
        if not self.status.seccomp:
            return None
        if self._host_dir is None:
            remove_stale_tmp_dirs()
            self._host_dir = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-host-")).resolve()
            self._host_dir.chmod(0o755)  # nothing secret: the program is the same for everyone
            program = seccomp.deny_program(unix_sockets=self.boundary.unix_sockets)
            (self._host_dir / "seccomp.bpf").write_bytes(program)
        return self._host_dir / "seccomp.bpf"

    def private_tmp(self) -> Path:
        if self._private_tmp is None:
            remove_stale_tmp_dirs()
            prefix = f"{TMP_PREFIX}{os.getpid()}-"
            self._private_tmp = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
        return self._private_tmp

    def release_mount_points(self) -> None:
        """Remove the empty mount points made for the last command (made again for the next one's
        sandbox). Only when no sandbox using them runs or waits: removing a mount point lifts its
        mount in every sandbox."""
        self._mounts.release()

    def close(self) -> None:
        """Remove the mount points we used (if still empty and no other session uses them), their
        note, and our private /tmp."""
        self._mounts.close()
        if self._own_tmp and self._private_tmp is not None:
            shutil.rmtree(self._private_tmp, ignore_errors=True)
            self._private_tmp = None
        if self._host_dir is not None:
            shutil.rmtree(self._host_dir, ignore_errors=True)
            self._host_dir = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pieces ------------------------------------------------------------------------------
    def _run_args(self) -> list[str]:
        var_run = Path("/var/run")
        args = kernelfs.run_args(var_run.is_dir() and not var_run.is_symlink())
        resolv = Path("/etc/resolv.conf").resolve()
        if self.status.network and resolv.is_relative_to("/run") and resolv.exists():
            args += ["--ro-bind", str(resolv.parent), str(resolv.parent)]  # DNS for sandbox.network
        return args

    def _home_and_roots_args(self, roots: list[Path], git_in_home: list[str]) -> list[str]:
        """$HOME hidden but for the show-list (read-only), the roots (read-write) and the roots' git
        dirs under it (`git_in_home`: their bind arguments); for a root at or above $HOME, its entries
        at the top of $HOME too, but not the dot entries."""
        home = self.boundary.home
        bind = "--ro-bind" if self.boundary.workspace_read_only else "--bind"  # plan mode: a kernel fact
        if home == Path("/") or not home.is_dir():
            return [arg for root in roots for arg in (bind, str(root), str(root))] + git_in_home
        outer = [root for root in roots if _inside(home, [root])]
        args = [arg for root in outer for arg in (bind, str(root), str(root))]
        args += ["--tmpfs", str(home)]
        if outer:
            args += _top_of_home(home, bind)
        for shown in (p for p in self.boundary.shown if p.is_relative_to(home)):
            args += ["--ro-bind-try", str(shown), str(shown)]
        args += [arg for root in roots if root not in outer for arg in (bind, str(root), str(root))]
        return [*args, *git_in_home, "--remount-ro", str(home)]

    def _git_args(self, roots: list[Path]) -> tuple[list[str], list[Path]]:
        """The repositories' git dirs read-only (or, with sandbox.git_writable, `.git` pinned in place),
        git dirs hidden by the private /tmp bound back; returns (args, the git dirs made read-only)."""
        writable = self.config.git_writable and not self.boundary.workspace_read_only
        args: list[str] = []
        read_only: list[Path] = []
        for root in roots:
            dot_git = root / ".git"
            if writable and dot_git.is_dir() and not dot_git.is_symlink() and not is_stand_in(dot_git):
                args += ["--bind", str(dot_git), str(dot_git)]
            for repo in [root, *([] if writable else self._nested_repositories(root))]:
                if not self.boundary.exposed(repo):
                    continue  # hidden anyway (a repository among the dot-folders of $HOME, say)
                if repo != root and (repo / ".git").is_file():  # a nested worktree's or submodule's link
                    args += ["--ro-bind-try", str(repo / ".git"), str(repo / ".git")]
                for git_dir in git_dirs(repo):
                    if self.boundary.home_dotfile(git_dir) is not None:
                        continue  # `~/.git` of a dotfiles repository stays hidden with the rest
                    inside = _inside(git_dir, roots)
                    if (not inside or not writable) and git_dir.is_dir() and git_dir not in read_only:
                        args += ["--ro-bind-try", str(git_dir), str(git_dir)]
                        read_only += [git_dir] if inside else []
        return args, read_only

    def _nested_repositories(self, root: Path) -> list[Path]:
        """Repositories inside `root` (looked for once per session; new ones are the model's own)."""
        if root not in self._nested:
            found, stopped = nested_repositories(root)
            self._nested[root] = found
            if stopped:
                self._lasting.append(
                    f"stopped looking for nested repositories in {root} after {SCAN_LIMIT:,} folders; "
                    "the .git of any further one stays writable"
                )
        return self._nested[root]

    def _protect_args(self, roots: list[Path], read_only_git: list[Path]) -> list[str]:
        protected = protected_paths(self.workspace)
        for root in roots[1:]:
            protected += [p for p in protected_paths(root) if p.path.exists()]
        protected += [Protected(path, "file", False) for path in self.boundary.agent_files()]
        args: list[str] = []
        for item in protected:
            path = item.path
            if not _inside(path, roots) or not self.boundary.visible(path):
                continue  # read-only or hidden already
            if _inside(path, read_only_git) and path not in read_only_git and not path.is_symlink():
                continue  # inside a read-only git dir (a symlink's target may lie elsewhere)
            if path.is_symlink():
                args += self._protect_symlink(path, item.kind, roots)
                continue
            if not path.exists():
                if not item.create or not path.parent.is_dir() or path.parent.is_symlink():
                    continue
                self._make_mount_point(path, item.kind)
            elif item.create:
                self._mounts.borrow(path)  # made by another session here: it must not remove it under us
            args += ["--ro-bind", str(path), str(path)]
        return args

    def _protect_symlink(self, link: Path, kind: str, roots: list[Path]) -> list[str]:
        """A mount cannot cover a symlink itself: protect its target, and the directory holding the
        link so it cannot be pointed elsewhere."""
        args: list[str] = []
        target = link.resolve()
        if _inside(target, roots):
            if not target.exists() and target.parent.is_dir():
                self._make_mount_point(target, kind)
            if target.exists():
                args += ["--ro-bind", str(target), str(target)]
        if link.parent in roots:
            self.problems.append(f"{link} is a symlink in a writable directory and cannot be protected")
        else:
            args += ["--ro-bind", str(link.parent), str(link.parent)]
        return args

    def _make_mount_point(self, path: Path, kind: str) -> None:
        try:
            self._mounts.make(path, kind)
        except OSError as e:  # it appeared meanwhile (or as a symlink): do not run unprotected
            raise SandboxUnavailable(f"cannot protect {path}: {e.strerror}") from None

    def _hide_args(self) -> list[str]:
        """What the boundary always hides, where a command would still see it."""
        args: list[str] = []
        for path in self.boundary.hidden:
            if not path.exists() or _inside(self.workspace, [path]) or not self.boundary.exposed(path):
                continue
            if path.is_dir():
                args += ["--tmpfs", str(path), "--remount-ro", str(path)]
            else:
                args += ["--ro-bind", "/dev/null", str(path)]
        return args


def _top_of_home(home: Path, bind: str) -> list[str]:
    """The entries at the top of $HOME for a workspace at or above it: read-write, but for the dot
    entries (all of them stay hidden); a symlink stays a symlink (its target is judged where it is)."""
    args: list[str] = []
    with os.scandir(home) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry.path), entry.path]
            elif entry.is_dir() or entry.is_file():
                args += [bind, entry.path, entry.path]
    return args


TMP_PREFIX = "vllm-bot-tmp-"


def remove_stale_tmp_dirs() -> None:
    """Private /tmp dirs of sessions that died without cleaning up (named after their process id)."""
    for path in Path(tempfile.gettempdir()).glob(f"{TMP_PREFIX}*-*"):
        pid = path.name[len(TMP_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(path, ignore_errors=True)


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)
