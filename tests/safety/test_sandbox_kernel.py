"""Breach 1 of issue 15 and its class: a sandboxed command has no power over the host, root or not.

Kernel files are probed by opening them for writing and closing them unwritten (never written: a
test must not change a host setting); inside the sandbox the open must fail. System calls are made
with arguments that cannot do anything even where they are allowed, and must fail with the errno of
the seccomp filter. A control run with bubblewrap's bare flags shows the probes do find a writable
kernel file, so the tests can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sandbox_helpers import STATUS, Layout, child_env, needs_bwrap, needs_package_others_can_enter, run

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox
from vllm_bot.safety.sandbox.seccomp import ARCHES, DENIED, deny_program, machine

pytestmark = needs_bwrap

OPEN_FOR_WRITING = """
import json, os, sys
result = {}
for path in sys.argv[1:]:
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY))
        result[path] = "writable"
    except OSError as e:
        result[path] = e.strerror
print(json.dumps(result))
"""

# Host-global kernel interfaces (those missing on this kernel are skipped, saying so).
KERNEL_FILES = [
    "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/core_uses_pid", "/proc/sys/kernel/modprobe",
    "/proc/sys/kernel/panic", "/proc/sys/kernel/sysrq", "/proc/sys/kernel/randomize_va_space",
    "/proc/sys/kernel/kptr_restrict", "/proc/sys/kernel/dmesg_restrict", "/proc/sys/kernel/pid_max",
    "/proc/sys/kernel/threads-max", "/proc/sys/kernel/perf_event_paranoid",
    "/proc/sys/kernel/unprivileged_bpf_disabled", "/proc/sys/kernel/yama/ptrace_scope",
    "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sys/vm/overcommit_memory",
    "/proc/sys/vm/max_map_count", "/proc/sys/vm/swappiness", "/proc/sys/fs/file-max",
    "/proc/sys/fs/suid_dumpable", "/proc/sys/fs/protected_symlinks", "/proc/sys/user/max_user_namespaces",
    "/proc/sys/net/ipv4/ip_forward", "/proc/sys/fs/binfmt_misc/register", "/proc/sysrq-trigger",
    "/proc/mtrr", "/proc/sys/debug/exception-trace", "/proc/sys/abi/vsyscall32",
    "/sys/power/state", "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/uevent_helper",
    "/sys/fs/cgroup/memory/release_agent", "/sys/fs/cgroup/pids/cgroup.procs",
    "/sys/fs/cgroup/unified/cgroup.subtree_control", "/sys/fs/cgroup/cgroup.subtree_control",
    "/sys/module/printk/parameters/time", "/sys/kernel/security/lsm",
]  # fmt: skip


@pytest.fixture(scope="module")
def probed(layout: Layout, sandbox: Sandbox) -> dict[str, str]:
    """Every kernel file opened for writing (and closed unwritten) inside the sandbox, in one run."""
    before = Path("/proc/sys/kernel/core_pattern").read_text()
    result = run(
        sandbox, f"python3 -c '{OPEN_FOR_WRITING}' " + " ".join(KERNEL_FILES), child_env(layout, sandbox)
    )
    assert result.returncode == 0, result.stderr
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before
    return json.loads(result.stdout)


def test_breach_1_core_pattern_is_not_writable_and_nothing_outside_changes(layout: Layout, sandbox: Sandbox):
    """The reported escape: point core_pattern at a workspace script, then crash a process. The write
    is replaced by an open-and-close probe; the crash runs; the marker outside must stay absent."""
    marker = layout.outside / "PWNED-core-pattern"
    (layout.ws / "p.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (layout.ws / "p.sh").chmod(0o755)
    before, watched = Path("/proc/sys/kernel/core_pattern").read_text(), layout.watched()
    probe = f"python3 -c '{OPEN_FOR_WRITING}' /proc/sys/kernel/core_pattern"
    result = run(
        sandbox, f"{probe}; ulimit -c unlimited; sh -c 'kill -SEGV $$'; true", child_env(layout, sandbox)
    )
    assert json.loads(result.stdout.splitlines()[0]) == {
        "/proc/sys/kernel/core_pattern": "Read-only file system"
    }
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before
    assert not marker.exists() and layout.watched() == watched


def test_the_probe_finds_a_writable_kernel_file_without_the_fix(layout: Layout):
    """Control: bubblewrap with its bare flags (as before the fix) leaves core_pattern writable for
    root, so the probes above can fail. Only opened, never written."""
    if os.geteuid() != 0:
        pytest.skip("only root can open core_pattern for writing; the sandbox's uid protects here")
    bare = [STATUS.bwrap, *STATUS.flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--"]
    code = ["python3", "-c", OPEN_FOR_WRITING, "/proc/sys/kernel/core_pattern"]
    result = subprocess.run([*bare, *code], capture_output=True, text=True, timeout=30, cwd=layout.ws)
    assert json.loads(result.stdout) == {"/proc/sys/kernel/core_pattern": "writable"}


def test_at_least_twenty_kernel_files_are_probed(probed: dict[str, str]):
    present = [path for path in KERNEL_FILES if os.path.exists(path)]
    assert len(present) >= 20, present


@pytest.mark.parametrize("path", KERNEL_FILES)
def test_kernel_interface_cannot_be_opened_for_writing(probed: dict[str, str], path: str):
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist on this kernel")
    assert probed[path] != "writable", f"{path} is writable inside the sandbox"


def test_no_capabilities_no_new_privileges_and_a_seccomp_filter(layout: Layout, sandbox: Sandbox):
    status = run(sandbox, "cat /proc/self/status", child_env(layout, sandbox)).stdout
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert all(int(fields[cap], 16) == 0 for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
    assert fields["NoNewPrivs"].strip() == "1"
    if not STATUS.seccomp:
        pytest.skip(f"no seccomp layer here: {STATUS.missing}")
    assert fields["Seccomp"].strip() == "2" and int(fields["Seccomp_filters"]) >= 1


# System calls with arguments that do nothing even where allowed: (name, x86_64, aarch64, args, errno).
CALL = """
import ctypes, errno, json, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
out = {}
for name, number, args in json.loads(sys.argv[1]):
    args = [child if a == "CHILD" else a for a in args]
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    out[name] = errno.errorcode.get(ctypes.get_errno(), "OK") if ret == -1 else "OK"
os.kill(child, 9)
print(json.dumps(out))
"""
CLONE_NEWUSER_WITH_FS = 0x10000000 | 0x00000200  # an invalid combination: never creates a process
SYSCALLS = [  # name, (x86_64, aarch64), arguments, errno inside the sandbox
    ("mount", (165, 40), [0, 0, 0, 0, 0], "EPERM"), ("umount2", (166, 39), [0, 0], "EPERM"),
    ("pivot_root", (155, 41), [0, 0], "EPERM"), ("chroot", (161, 51), [0], "EPERM"),
    ("open_tree", (428, 428), [-1, 0, 0], "EPERM"), ("fsopen", (430, 430), [0, 0], "EPERM"),
    ("move_mount", (429, 429), [-1, 0, -1, 0, 0], "EPERM"), ("fspick", (433, 433), [-1, 0, 0], "EPERM"),
    ("mount_setattr", (442, 442), [-1, 0, 0, 0, 0], "EPERM"), ("unshare", (272, 97), [0], "EPERM"),
    ("setns", (308, 268), [-1, 0], "EPERM"), ("kexec_load", (246, 104), [0, 1 << 20, 0, 0], "EPERM"),
    ("init_module", (175, 105), [0, 0, 0], "EPERM"), ("finit_module", (313, 273), [-1, 0, 0], "EPERM"),
    ("delete_module", (176, 106), [0, 0], "EPERM"), ("reboot", (169, 142), [0, 0, 0, 0], "EPERM"),
    ("swapon", (167, 224), [0, 0], "EPERM"), ("swapoff", (168, 225), [0], "EPERM"),
    ("clock_settime", (227, 112), [-1, 0], "EPERM"), ("acct", (163, 89), [-1], "EPERM"),
    ("syslog", (103, 116), [10, 0, 0], "EPERM"), ("bpf", (321, 280), [-1, 0, 0], "EPERM"),
    ("perf_event_open", (298, 241), [0, 0, -1, -1, 0], "EPERM"), ("userfaultfd", (323, 282), [1], "EPERM"),
    ("open_by_handle_at", (304, 265), [-1, 0, 0], "EPERM"), ("keyctl", (250, 219), [0, -3, 0], "EPERM"),
    ("add_key", (248, 217), [0, 0, 0, 0, 0], "EPERM"), ("request_key", (249, 218), [0, 0, 0, 0], "EPERM"),
    ("pidfd_getfd", (438, 438), [-1, 0, 0], "EPERM"),
    ("process_vm_writev", (311, 271), ["CHILD", 0, 0, 0, 0, 0], "EPERM"),
    ("ptrace_attach", (101, 117), [16, "CHILD", 0, 0], "EPERM"),
    ("ptrace_seize", (101, 117), [0x4206, "CHILD", 0, 0], "EPERM"),
    ("clone_newuser", (56, 220), [CLONE_NEWUSER_WITH_FS, 0, 0, 0, 0], "EPERM"),
    ("clone3", (435, 435), [0, 0], "ENOSYS"), ("io_uring_setup", (425, 425), [1, 0], "ENOSYS"),
    ("socket_vsock", (41, 198), [40, 1, 0], "EPERM"),
]  # fmt: skip


@pytest.fixture(scope="module")
def called(layout: Layout, sandbox: Sandbox) -> dict[str, str]:
    if not STATUS.seccomp:
        pytest.skip(f"no seccomp layer here: {STATUS.missing}")
    column = ARCHES[machine()][1]
    table = json.dumps([[name, numbers[column], args] for name, numbers, args, _ in SYSCALLS])
    result = run(sandbox, f"python3 -c '{CALL}' '{table}'", child_env(layout, sandbox))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(("name", "numbers", "args", "expected"), SYSCALLS, ids=[s[0] for s in SYSCALLS])
def test_system_call_is_denied(called: dict[str, str], name: str, numbers, args, expected: str):
    assert called[name] == expected


def test_every_denied_call_has_a_number_for_each_architecture():
    for arch in ARCHES:
        program = deny_program(arch)
        assert len(program) % 8 == 0 and len(program) // 8 < 4096  # a valid sock_filter array
    assert {"mount", "kexec_load", "bpf", "keyctl", "init_module", "reboot", "unshare"} <= set(DENIED)


def test_allowed_work_still_runs_under_the_filter(layout: Layout, sandbox: Sandbox):
    """The filter leaves ordinary work alone: threads, subprocesses, sockets on loopback, a pty,
    strace-less debugging aids such as ptrace(TRACEME) by a child."""
    script = (
        "python3 -c 'import threading, subprocess, socket, pty, os; "
        "t = threading.Thread(target=print); t.start(); t.join(); "
        'subprocess.run(["true"], check=True); s = socket.socket(); s.bind(("127.0.0.1", 0)); '
        'pty.openpty(); print("ok")\' && git status --short >/dev/null && echo done'
    )
    result = run(sandbox, script, child_env(layout, sandbox))
    assert result.returncode == 0 and result.stdout.split()[-2:] == ["ok", "done"], result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to become nobody")
@needs_package_others_can_enter
def test_an_ordinary_user_runs_commands_as_an_unprivileged_uid(layout: Layout):
    """Where the agent is not root, the command's uid on the host is the user's own: root-owned kernel
    files are read-only whatever the mounts. A sandbox of its own: the module's, used by root, holds
    root-owned mount points in its private /tmp (the agent's venv, when the checkout is under /tmp)."""
    for path in (layout.base, layout.home, layout.ws):
        path.chmod(0o755)
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        os.chmod(sandbox.private_tmp(), 0o777)
        code = ["python3", "-c", OPEN_FOR_WRITING, "/proc/sys/kernel/core_pattern"]
        argv = [*nobody, *sandbox.wrap([*code])]
        result = subprocess.run(argv, cwd=layout.ws, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["/proc/sys/kernel/core_pattern"] != "writable"
        os.chmod(layout.ws, 0o777)
        touch = [*nobody, *sandbox.wrap(["touch", "by-nobody"])]
        subprocess.run(touch, cwd=layout.ws, check=True, timeout=30)
    assert (layout.ws / "by-nobody").stat().st_uid == 65534  # host uid 65534, not 0
