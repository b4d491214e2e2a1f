"""Protected paths that do not exist yet, worktrees, symlinked hooks, clean-up, and a non-root user."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_helpers import (
    GIT,
    STATUS,
    Layout,
    child_env,
    make_layout,
    manifest,
    needs_bwrap,
    needs_package_others_can_enter,
    remove_layout,
    run,
)

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox, is_protected, protected_paths

pytestmark = needs_bwrap


@pytest.fixture
def layout():
    layout = make_layout()
    yield layout
    remove_layout(layout)


@pytest.fixture
def plain_layout():
    layout = make_layout(git=False)
    yield layout
    remove_layout(layout)


def assert_all_fail(sandbox: Sandbox, layout: Layout, commands: list[str]) -> None:
    env = child_env(layout, sandbox)
    for command in commands:
        result = run(sandbox, command, env)
        assert result.returncode != 0, f"{command!r} succeeded"


def test_no_repository_cannot_get_one(plain_layout: Layout):
    ws = plain_layout.ws
    with Sandbox(ws, SandboxConfig(), STATUS, home=plain_layout.home) as sandbox:
        assert_all_fail(sandbox, plain_layout, [
            "git init", "git init -q .", "mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
            "echo '[core]' > .git/config", "rmdir .git && mkdir .git", "mv .git elsewhere",
        ])  # fmt: skip
        assert list((ws / ".git").iterdir()) == []  # the empty mount point, nothing inside
        env = child_env(plain_layout, sandbox)
        assert run(sandbox, "echo fine > notes.txt", env).returncode == 0
    assert not (ws / ".git").exists()  # close() removed the mount point it made
    assert (ws / "notes.txt").read_text() == "fine\n"


def test_empty_mount_point_does_not_hide_a_parent_repository(plain_layout: Layout):
    parent = plain_layout.base
    subprocess.run([*GIT, "init", "-q", str(parent)], check=True)
    with Sandbox(plain_layout.ws, SandboxConfig(), STATUS, home=plain_layout.home) as sandbox:
        sandbox.mount_args()
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=plain_layout.ws, capture_output=True, text=True
        )
        assert top.stdout.strip() == str(parent)


def test_an_empty_git_left_behind_is_a_mask_not_a_repository(plain_layout: Layout):
    """A session killed while its sandbox waited leaves the empty `.git`: still no repository can
    be made in it, by commands or by the file tools, and git passes over it."""
    ws = plain_layout.ws
    (ws / ".git").mkdir()
    assert [(p.path, p.create) for p in protected_paths(ws) if p.path.name == ".git"] == [(ws / ".git", True)]
    assert is_protected(ws / ".git" / "HEAD", ws) and is_protected(ws / ".git" / "objects" / "x", ws)
    with Sandbox(ws, SandboxConfig(), STATUS, home=plain_layout.home) as sandbox:
        assert_all_fail(sandbox, plain_layout, ["git init -q .", "mkdir .git/objects", "rmdir .git"])
    assert list((ws / ".git").iterdir()) == []


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def note_line(path: Path) -> str:
    st = os.lstat(path)
    return f"{st.st_dev} {st.st_ino} {path}\n"


def session_notes(notes: Path) -> list[str]:
    return sorted(n.name for n in notes.iterdir() if n.name != ".lock")


def test_the_mount_points_of_a_killed_session_are_removed_by_the_next(plain_layout: Layout):
    """Only what the dead session noted, still the very file it made, empty, and used by no live
    session; never through a directory swapped for a symlink."""
    ws = plain_layout.ws
    notes = ws / ".vllm-bot" / "mount-points"
    notes.mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "kept").mkdir()
    (ws / "kept" / "file").write_text("the user's\n")
    (ws / "live").mkdir()
    outside = plain_layout.base / "outside"
    (outside / "marker").mkdir(parents=True)
    (ws / "sub" / "dir" / "marker").mkdir(parents=True)
    swapped = note_line(ws / "sub" / "dir" / "marker")
    (ws / "sub" / "dir").rename(ws / "sub" / "moved")
    (ws / "sub" / "dir").symlink_to(outside)
    (ws / "renamed").mkdir()
    replaced = note_line(ws / "renamed")
    (ws / "renamed").rename(ws / "elsewhere")
    (ws / "renamed").mkdir()  # another directory at that path now: not the one noted
    dead = f"{dead_pid()}-0a1b2c3d"
    lines = [note_line(ws / ".git"), note_line(ws / "kept"), swapped, replaced]
    (notes / dead).write_text("".join(lines))
    (notes / "1-deadbeef").write_text(note_line(ws / "live"))  # pid 1 runs: not touched
    with Sandbox(ws, SandboxConfig(), STATUS, home=plain_layout.home) as sandbox:
        sandbox.mount_args()
        assert dead not in session_notes(notes) and "1-deadbeef" in session_notes(notes)
        ours = [n for n in session_notes(notes) if n.startswith(f"{os.getpid()}-")]
        assert len(ours) == 1 and (notes / ours[0]).read_text() == note_line(ws / ".git")
    assert not (ws / ".git").exists()  # removed, made again for this session, and removed at its end
    assert (ws / "kept" / "file").exists() and (ws / "live").is_dir() and (ws / "renamed").is_dir()
    assert (outside / "marker").is_dir()  # the note named it through sub/dir, now a symlink out
    assert session_notes(notes) == ["1-deadbeef"]


def test_a_mount_point_reached_through_a_swapped_directory_is_not_removed(layout: Layout):
    """A command swaps the directory holding a mount point for a symlink out of the workspace: the
    clean-up after it removes nothing there (it would run as the agent's user, root here)."""
    ws = layout.ws
    victim = layout.base / "victim"
    victim.mkdir()
    (victim / "marker").touch()
    with Sandbox(ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        env = child_env(layout, sandbox)
        assert run(sandbox, "mkdir -p sub/dir && ln -s sub/dir/marker .gitmodules", env).returncode == 0
        sandbox.release_mount_points()
        run(sandbox, "true", env)  # its mounts protect the symlink's target: a mount point is made
        assert (ws / "sub" / "dir" / "marker").exists()
        swap = f"mv sub/dir sub/moved && ln -s {victim} sub/dir"
        assert run(sandbox, swap, env).returncode == 0
        sandbox.release_mount_points()
    assert (victim / "marker").exists()


@pytest.mark.parametrize("git_writable", [False, True])
def test_missing_hooks_and_modules_cannot_be_created(layout: Layout, git_writable: bool):
    git = layout.ws / ".git"
    shutil.rmtree(git / "hooks")
    assert not (git / "modules").exists()
    with Sandbox(layout.ws, SandboxConfig(git_writable=git_writable), STATUS, home=layout.home) as sandbox:
        assert_all_fail(sandbox, layout, [
            "echo x > .git/hooks/pre-commit", "mkdir .git/hooks/x", "mkdir .git/hooks",
            "mkdir -p .git/modules/sub/hooks", "mkdir .git/modules",
        ])  # fmt: skip
        env = child_env(layout, sandbox)
        result = run(sandbox, f"{' '.join(GIT)} commit -q --allow-empty -m sandboxed", env)
        assert (result.returncode == 0) is git_writable, result.stderr  # .git itself: git_writable
    assert not (git / "hooks").exists() and not (git / "modules").exists()  # restored as they were


@pytest.mark.parametrize("git_writable", [False, True])
def test_missing_config_file_is_masked(layout: Layout, git_writable: bool):
    config = layout.ws / ".git" / "config"
    config.unlink()
    with Sandbox(layout.ws, SandboxConfig(git_writable=git_writable), STATUS, home=layout.home) as sandbox:
        assert_all_fail(sandbox, layout, ["git config core.hooksPath x", "echo x > .git/config"])
        assert not config.exists() or config.read_text() == ""  # read-only .git, or an empty mask
    assert not config.exists()


def test_worktree_git_file_and_its_git_dirs_are_protected(layout: Layout):
    tree = layout.base / "tree"
    subprocess.run([*GIT, "-C", str(layout.ws), "worktree", "add", "-q", str(tree)], check=True)
    main_git = layout.ws / ".git"
    watched = [manifest(tree / ".git"), manifest(main_git / "hooks"), manifest(main_git / "config")]
    with Sandbox(tree, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        assert_all_fail(sandbox, layout, [
            "echo 'gitdir: /tmp/evil' > .git", "rm .git", "git config core.hooksPath x",
            f"echo x > {main_git}/hooks/pre-commit", f"echo x > {main_git}/worktrees/tree/config.worktree",
        ])  # fmt: skip
        assert run(sandbox, "git status --short", child_env(layout, sandbox)).returncode == 0
    assert [manifest(tree / ".git"), manifest(main_git / "hooks"), manifest(main_git / "config")] == watched


def test_writable_paths_let_a_worktree_commit_but_hooks_stay_protected(layout: Layout):
    tree = layout.base / "tree"
    subprocess.run([*GIT, "-C", str(layout.ws), "worktree", "add", "-q", str(tree)], check=True)
    main_git = layout.ws / ".git"
    config = SandboxConfig(writable_paths=[str(main_git)], git_writable=True)
    with Sandbox(tree, config, STATUS, home=layout.home) as sandbox:
        env = child_env(layout, sandbox)
        result = run(sandbox, f"echo x > f && {' '.join(GIT)} add f && {' '.join(GIT)} commit -qm wt", env)
        assert result.returncode == 0, result.stderr
        assert_all_fail(sandbox, layout, [
            f"echo x > {main_git}/hooks/pre-commit", "git config core.hooksPath x",
            f"echo x >> {main_git}/hooks/post-checkout",
        ])  # fmt: skip


@pytest.mark.parametrize("git_writable", [False, True])
def test_symlinked_hooks_protect_the_target_and_the_link(layout: Layout, git_writable: bool):
    git = layout.ws / ".git"
    (layout.ws / "githooks").mkdir()
    shutil.rmtree(git / "hooks")
    (git / "hooks").symlink_to("../githooks")
    with Sandbox(layout.ws, SandboxConfig(git_writable=git_writable), STATUS, home=layout.home) as sandbox:
        assert_all_fail(sandbox, layout, [
            "echo x > .git/hooks/pre-commit", "echo x > githooks/pre-commit", "rm .git/hooks",
            "ln -sfn /tmp .git/hooks",
        ])  # fmt: skip
    assert list((layout.ws / "githooks").iterdir()) == [] and os.readlink(git / "hooks") == "../githooks"


def test_symlinked_state_dir_is_reported_not_silently_ignored(layout: Layout):
    (layout.ws / "real-state").mkdir()
    (layout.ws / ".vllm-bot").symlink_to("real-state")
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        sandbox.mount_args()
        assert any(".vllm-bot" in problem for problem in sandbox.problems)


def test_protected_paths_helper_for_file_tools(layout: Layout):
    ws = layout.ws
    paths = {p.path.relative_to(ws).as_posix() for p in protected_paths(ws)}
    assert {".vllm-bot", ".git/hooks", ".git/config", ".git/modules", ".gitmodules"} <= paths
    assert is_protected(ws / ".git" / "hooks" / "pre-commit", ws)
    assert is_protected(ws / "sub" / ".." / ".git" / "config", ws)
    assert not is_protected(ws / "src" / "app.py", ws)


def test_commands_die_with_the_process_that_started_them(layout: Layout):
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        tag = "61.2345"
        argv = sandbox.wrap(["sleep", tag])
        starter = "import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(60)"
        parent = subprocess.Popen(
            [sys.executable, "-c", starter, *argv], cwd=layout.ws, env=child_env(layout, sandbox)
        )
        assert _wait_for(lambda: _processes_with(tag), True)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert _wait_for(lambda: _processes_with(tag), False), "sandboxed command outlived its parent"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to switch to nobody")
@needs_package_others_can_enter
def test_confinement_as_an_unprivileged_user(layout: Layout):
    for path in (layout.base, layout.home, layout.outside):
        path.chmod(0o755)
    subprocess.run(["chmod", "-R", "a+rwX", str(layout.ws)], check=True)
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        os.chmod(sandbox.private_tmp(), 0o777)
        env = child_env(layout, sandbox)
        sandbox.mount_args()
        before = layout.watched()
        nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        for command in ["echo x > ../outside/new", "echo x > .git/hooks/pre-commit", "git config core.x y",
                        "mount -o remount,rw /", "echo ok > mine.txt && id -u"]:  # fmt: skip
            argv = [*nobody, *sandbox.wrap(["bash", "-c", command])]
            result = subprocess.run(argv, cwd=layout.ws, env=env, capture_output=True, text=True, timeout=30)
            assert (result.returncode == 0) is command.startswith("echo ok"), (command, result.stderr)
        assert layout.watched() == before
        assert (layout.ws / "mine.txt").stat().st_uid == 65534


def _processes_with(tag: str) -> bool:
    """Is the sandboxed `sleep TAG` itself running (not just a process that has TAG in its argv)?"""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().split(b"\0")[:2] == [
                b"sleep",
                tag.encode(),
            ]:
                return True
        except OSError:
            continue
    return False


def _wait_for(check, expected: bool, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check() is expected:
            return True
        time.sleep(0.05)
    return False
