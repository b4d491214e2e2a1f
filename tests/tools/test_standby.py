"""The next exec command's launcher, started ahead (tools/standby.py): the command that uses it runs
exactly as a fresh start would (output, exit code, cwd, stdin, environment, marker, cgroup), anything
that does not fit starts fresh, and nothing of it outlives the session. Sandboxed in a repository,
bubblewrap itself starts ahead, and is given up for a fresh start when a path it mounts changed.
Real processes, cgroups and sandboxes, in bubblewrap and unsandboxed."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import pytest
from sandbox_helpers import GIT, STATUS, needs_bwrap, visible_base

from vllm_bot.config import Config, SandboxConfig
from vllm_bot.safety.sandbox import cgroup
from vllm_bot.safety.sandbox.limits import standby_launcher
from vllm_bot.tools.reaper import MARKER_VAR
from vllm_bot.tools.toolbox import build_toolbox

PLAN = cgroup.plan()
pytestmark = pytest.mark.skipif(
    PLAN.pids is None and PLAN.memory is None, reason=f"no cgroup can be made here: {PLAN.problem}"
)


@pytest.fixture(params=["bwrap", "off"])
def box(request):
    if request.param == "bwrap" and not STATUS.active:
        pytest.skip(f"bubblewrap cannot run here: {STATUS.warning}")
    base = visible_base()
    (base / "ws").mkdir()
    toolbox = build_toolbox(Config(sandbox=SandboxConfig(mode=request.param)), base / "ws", base / "state")
    yield toolbox
    toolbox.close()
    shutil.rmtree(base, ignore_errors=True)


def run(box, command: str) -> str:
    result = box.executor.execute("exec", {"command": command})
    return result.value


def waiting(box) -> int:
    """The pid of the launcher waiting for the next command (after one command has run)."""
    standby = box.executor.context.standby
    standby.settle()
    assert standby.pid is not None
    return standby.pid


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_next_command_runs_in_the_launcher_started_ahead(box):
    run(box, "true")
    pid = waiting(box)
    out = run(box, f'echo "pid=$$ cwd=$PWD"; echo "marker=${MARKER_VAR}"; readlink /proc/self/fd/0; exit 3')
    ws = box.sandbox.workspace
    assert "Exit code 3" in out
    if box.sandboxed:
        assert f"cwd={ws}" in out  # bwrap's PID namespace gives the shell another pid inside
    else:
        assert f"pid={pid} cwd={ws}" in out
    marker = out.split("marker=")[1].split()[0]
    assert len(marker) == 16 and "/dev/null" in out
    assert not alive(pid)  # it was the command's shell, and it ended with it


def test_arguments_cross_the_pipe_unchanged(box):
    run(box, "true")
    waiting(box)
    out = run(box, "printf '[%s]' \"a b\" 'c\"d' $'e\\nf' 'ü' '' \"$((6 * 7))\"")
    assert '[a b][c"d][e\nf][ü][][42]' in out


def test_a_changed_environment_starts_fresh_and_the_standby_is_killed(box):
    run(box, "true")
    pid = waiting(box)
    box.executor.context.env = {**box.executor.context.env, "ADDED_LATER": "yes"}
    out = run(box, 'echo "added=$ADDED_LATER pid=$$"')
    assert "added=yes" in out and f"pid={pid} " not in out + " "
    assert not alive(pid)


def test_a_command_with_a_nul_byte_is_refused_and_the_next_one_runs(box):
    run(box, "true")
    pid = waiting(box)
    refused = box.executor.execute("exec", {"command": "echo a\0b"})
    assert refused.kind == "error" and "NUL" in refused.value
    assert not alive(pid)
    assert "after" in run(box, "echo after")


def test_closing_kills_the_standby_and_removes_every_cgroup(box):
    run(box, "true")
    pid = waiting(box)
    box.close()
    assert not alive(pid)
    left = [
        p for parent in (PLAN.pids, PLAN.memory) if parent for p in parent.glob(f"vllm-bot-{os.getpid()}-*")
    ]
    assert not left


def test_a_standby_whose_agent_went_away_exits_without_running_anything(tmp_path):
    """The agent died: the launcher's stdin reaches its end with no arguments."""
    proc = subprocess.Popen(standby_launcher([]), stdin=subprocess.PIPE, cwd=tmp_path)
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert not list(tmp_path.iterdir())


def test_a_dead_standby_is_replaced_by_a_fresh_start(box):
    run(box, "true")
    pid = waiting(box)
    os.kill(pid, 9)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "still works" in run(box, "echo still works")


@pytest.fixture
def repo_box():
    """Sandboxed in a repository: nothing needs a mount point made, so the sandbox starts ahead."""
    base = visible_base()
    (base / "ws").mkdir()
    subprocess.run([*GIT, "init", "-q", str(base / "ws")], check=True)
    (base / "secret.txt").write_text("first secret\n")
    (base / "secrets").mkdir()
    hidden = [str(base / "secret.txt"), str(base / "later.txt")]
    config = Config(sandbox=SandboxConfig(mode="bwrap", hidden_paths=hidden))
    toolbox = build_toolbox(config, base / "ws", base / "state")
    yield toolbox, base
    toolbox.close()
    shutil.rmtree(base, ignore_errors=True)


def started_sandbox(box) -> int:
    """The pid of the sandbox waiting for the next command, once its launcher has become bwrap."""
    pid = waiting(box)
    deadline = time.monotonic() + 5
    while os.path.basename(os.readlink(f"/proc/{pid}/exe")) != "bwrap" and time.monotonic() < deadline:
        time.sleep(0.01)
    return pid


def ran_ahead(box, command: str) -> tuple[bool, str]:
    """Run `command` a while after the sandbox started ahead; whether it ran in that sandbox (its
    PID 1, bubblewrap, had started before the command was sent) and the command's output."""
    started_sandbox(box)
    time.sleep(0.3)
    with open("/proc/uptime") as f:
        sent = float(f.read().split()[0])
    out = run(box, f"echo pid1-started=$(cut -d' ' -f22 /proc/1/stat); {command}")
    ticks = int(out.split("pid1-started=")[1].split()[0])
    return ticks / os.sysconf("SC_CLK_TCK") < sent - 0.1, out


@needs_bwrap
def test_in_a_repository_the_sandbox_itself_waits_ahead_and_runs_the_command(repo_box):
    box, _ = repo_box
    run(box, "true")
    pid = started_sandbox(box)
    time.sleep(0.2)  # its thread is still there: bwrap --die-with-parent did not take it away
    assert alive(pid) and os.readlink(f"/proc/{pid}/exe").endswith("bwrap")
    ahead, out = ran_ahead(
        box, 'echo "pid=$$ cwd=$PWD"; touch /etc/standby-probe; touch .git/hooks/x; exit 4'
    )
    assert ahead and "Exit code 4" in out and f"cwd={box.sandbox.workspace}" in out
    assert "pid=2 " in out  # bubblewrap's PID namespace: its init is 1, the shell the next
    assert out.count("Read-only file system") == 2
    assert not alive(pid)


@needs_bwrap
def test_a_hidden_file_renamed_over_while_the_sandbox_waited_stays_hidden(repo_box):
    """A mount holds the file it was made on: a fresh start hides the new file at that path."""
    box, base = repo_box
    assert "first secret" not in run(box, f"cat {base}/secret.txt")
    started_sandbox(box)
    (base / "new.txt").write_text("second secret\n")
    os.rename(base / "new.txt", base / "secret.txt")
    out = run(box, f"cat {base}/secret.txt; echo done")
    assert "done" in out and "second secret" not in out


@needs_bwrap
def test_a_hidden_file_made_while_the_sandbox_waited_is_hidden(repo_box):
    box, base = repo_box
    run(box, "true")
    started_sandbox(box)
    (base / "later.txt").write_text("made later\n")
    out = run(box, f"cat {base}/later.txt; echo done")
    assert "done" in out and "made later" not in out


@pytest.fixture
def plain_box():
    """Sandboxed in a folder without a repository: the sandbox masks the missing `.git`."""
    base = visible_base()
    (base / "ws").mkdir()
    toolbox = build_toolbox(Config(sandbox=SandboxConfig(mode="bwrap")), base / "ws", base / "state")
    yield toolbox, base / "ws"
    toolbox.close()
    shutil.rmtree(base, ignore_errors=True)


@needs_bwrap
def test_without_a_repository_the_sandbox_waits_ahead_with_its_empty_git(plain_box):
    """The empty `.git` that keeps a repository from being made stays while the sandbox waits, so
    the next command runs in it; the session leaves neither the mount point nor its note."""
    box, ws = plain_box
    assert "Read-only" in run(box, "mkdir .git/x")
    pid = started_sandbox(box)
    assert list((ws / ".git").iterdir()) == []
    ahead, out = ran_ahead(box, "mkdir .git/x; git init -q; echo $$")
    assert ahead and out.count("Read-only file system") == 2 and not alive(pid)
    box.close()
    assert not (ws / ".git").exists()
    assert [n.name for n in (ws / ".vllm-bot" / "mount-points").iterdir()] == [".lock"]


@needs_bwrap
def test_with_a_writable_git_a_folder_without_one_still_gets_the_read_only_stand_in():
    """sandbox.git_writable lets commands write a repository's `.git`, never make one: the empty
    stand-in stays read-only, and the sandbox started ahead is the one the command runs in."""
    base = visible_base()
    (base / "ws").mkdir()
    config = Config(sandbox=SandboxConfig(mode="bwrap", git_writable=True))
    box = build_toolbox(config, base / "ws", base / "state")
    try:
        assert "Read-only" in run(box, "mkdir .git/x")
        ahead, out = ran_ahead(box, "mkdir .git/y; git init -q")
        assert ahead and out.count("Read-only file system") == 2
    finally:
        box.close()
        shutil.rmtree(base, ignore_errors=True)
    assert not (base / "ws" / ".git").exists()


@needs_bwrap
def test_two_sessions_in_one_folder_never_lift_each_others_empty_git(plain_box):
    """The second session mounts on the first one's empty `.git`: the first leaves it in place
    after its commands while the second uses it, and the last one out removes it."""
    first, ws = plain_box
    second = build_toolbox(Config(sandbox=SandboxConfig(mode="bwrap")), ws, ws.parent / "state2")
    try:
        run(first, "true")
        started_sandbox(first)  # waiting, mounted on the `.git` the first session made
        done: dict[str, str] = {}
        loop = "for i in $(seq 30); do mkdir .git/hooks 2>/dev/null && echo MADE && break; sleep 0.05; done"
        worker = threading.Thread(target=lambda: done.setdefault("out", run(second, loop)))
        worker.start()
        time.sleep(0.3)
        for _ in range(3):
            run(first, "true")  # the first session's commands end, and their sandboxes with them
        worker.join(30)
        assert "MADE" not in done["out"] and (ws / ".git").is_dir()
        assert list((ws / ".git").iterdir()) == []
        first.close()
        assert (ws / ".git").is_dir()  # the second session still uses it
    finally:
        second.close()
    assert not (ws / ".git").exists()


@needs_bwrap
def test_while_the_sandbox_waits_the_file_tools_cannot_fill_its_empty_git(plain_box):
    box, ws = plain_box
    run(box, "true")
    started_sandbox(box)
    for path in (".git/HEAD", ".git/config", ".git/objects/x"):
        result = box.executor.execute("write", {"path": path, "content": "planted\n"})
        assert result.kind == "error", path
    assert list((ws / ".git").iterdir()) == []
    assert "runs" in run(box, "echo runs")


@needs_bwrap
def test_a_git_made_by_the_user_while_the_sandbox_waited_is_theirs(plain_box):
    """The user's `git init` fills the empty `.git`: the next command starts fresh, sees the user's
    repository read-only, and the session keeps it."""
    box, ws = plain_box
    run(box, "true")
    pid = started_sandbox(box)
    subprocess.run([*GIT, "init", "-q", str(ws)], check=True)
    out = run(box, "git rev-parse --show-toplevel; touch .git/x")
    assert str(ws) in out and "Read-only file system" in out and not alive(pid)
    box.close()
    assert (ws / ".git" / "HEAD").is_file()


@needs_bwrap
def test_in_a_folder_of_a_repository_commands_find_that_repository():
    """The empty `.git` masking the folder's own is passed over: git finds the repository above."""
    base = visible_base()
    subprocess.run([*GIT, "init", "-q", str(base)], check=True)
    (base / "ws").mkdir()
    box = build_toolbox(Config(sandbox=SandboxConfig(mode="bwrap")), base / "ws", base / "state")
    try:
        for _ in range(2):  # fresh, then in the sandbox started ahead
            out = run(box, "git rev-parse --show-toplevel; ls -a .git | wc -l")
            assert f"{base}\n2" in out
    finally:
        box.close()
        shutil.rmtree(base, ignore_errors=True)
