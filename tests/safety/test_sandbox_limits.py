"""Breach 6 of issue 15 and its class: resource exhaustion in `exec` ends, the model is told which
limit it hit, and the agent answers the next call. Real commands through the real exec tool, inside
bubblewrap and unsandboxed (the limits apply to both), with small limits so the machine stays calm."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from sandbox_helpers import STATUS, visible_base

from vllm_bot.config import Config, SandboxConfig, ToolsConfig
from vllm_bot.safety.sandbox import cgroup
from vllm_bot.tools.toolbox import build_toolbox

SMALL = {"max_memory_mb": 256, "max_processes": 64, "max_file_size_mb": 8, "max_cpu_seconds": 1}
SMALL["max_open_files"] = 256
PLAN = cgroup.plan()
PROCESSES = "sandbox.max_processes"
MEMORY = "sandbox.max_memory_mb"
FILE_SIZE = "sandbox.max_file_size_mb"
CPU = "sandbox.max_cpu_seconds"
OPEN_FILES = "sandbox.max_open_files"
PY = "python3 -c"

# (command, the config key the model must be told about or None, timeout in seconds)
EXHAUSTION = [
    (":(){ :|:& };:; sleep 2", PROCESSES, 10),  # the classic bash fork bomb (kept alive 2 s)
    (f"{PY} 'import os\nwhile True: os.fork()'", PROCESSES, 20),
    ("perl -e 'while (1) { fork() // die \"fork: Resource temporarily unavailable\" }'", PROCESSES, 20),
    ("for i in $(seq 300); do sleep 3 & done; wait", PROCESSES, 20),
    (f"{PY} 'import threading, time\nwhile True: threading.Thread(target=time.sleep, args=(5,)).start()'",
     PROCESSES, 20),
    (f"{PY} 'b = bytearray(10**9)'", MEMORY, 20),
    (f"{PY} 'a = []\nwhile True: a.append(bytearray(10**7))'", MEMORY, 20),
    ("tail /dev/zero", MEMORY, 20),
    ("head -c 600000000 /dev/zero | python3 -c 'import sys; sys.stdin.buffer.read()'", MEMORY, 20),
    ("perl -e '$x = \"x\" x (10**9); print length $x'", MEMORY, 20),
    ("head -c 20000000 /dev/zero > big1", FILE_SIZE, 20),
    ("yes > big2", FILE_SIZE, 20),
    ("truncate -s 1G big3", FILE_SIZE, 20),
    ("dd if=/dev/zero of=big4 bs=1M count=20", FILE_SIZE, 20),
    (f"{PY} 'f = open(\"big5\", \"wb\")\nwhile True: f.write(bytes(1 << 20))'", FILE_SIZE, 20),
    (f"{PY} 'while True: pass'", CPU, 20),
    ("while :; do :; done", CPU, 20),
    ("sh -c 'while :; do :; done' && echo after", CPU, 20),
    (f"{PY} 'fs = [open(\"/dev/null\") for _ in range(100000)]'", OPEN_FILES, 20),
    ("exec 3</dev/null; for i in $(seq 4 400); do eval \"exec $i</dev/null\" || exit 1; done", OPEN_FILES, 20),
    (f"{PY} 'import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass'", None, 30),
    (f"{PY} 'import sys\nsys.setrecursionlimit(10**8)\nf = lambda n: f(n + 1)\nf(0)'", None, 30),
]  # fmt: skip
RAISE = [  # trying to lift a limit fails: soft and hard are set alike
    "ulimit -n 100000", "ulimit -u unlimited", "ulimit -t unlimited", "ulimit -f unlimited",
    "ulimit -d unlimited", "ulimit -Ht 100000",
    f"{PY} 'import resource as r; r.setrlimit(r.RLIMIT_FSIZE, (r.RLIM_INFINITY, r.RLIM_INFINITY))'",
]  # fmt: skip
MODES = ["bwrap", "off"]


@pytest.fixture(scope="module", params=MODES)
def toolbox(request):
    mode = request.param
    if mode == "bwrap" and not STATUS.active:
        pytest.skip(f"bubblewrap cannot run here: {STATUS.warning}")
    base = visible_base()
    ws = base / "ws"
    ws.mkdir()
    config = Config(sandbox=SandboxConfig(mode=mode, **SMALL), tools=ToolsConfig(exec_kill_grace=0.5))
    box = build_toolbox(config, ws, base / "state")
    box.cgroups_before = our_cgroups()  # other tests' sessions, not closed yet, may hold some
    yield box
    box.close()
    shutil.rmtree(base, ignore_errors=True)


def our_cgroups() -> set[str]:
    return {
        p.name
        for parent in (PLAN.pids, PLAN.memory)
        if parent
        for p in parent.glob(f"vllm-bot-{os.getpid()}-*")
    }


def exec_call(box, command: str, timeout: int = 20):
    started = time.monotonic()
    result = box.executor.execute("exec", {"command": command, "timeout": timeout})
    return result, time.monotonic() - started


def unbounded_fork_bomb(box) -> bool:
    """Root without a pids cgroup: RLIMIT_NPROC does not bind uid 0, so nothing stops a fork bomb."""
    return not box.limits.binds_processes


@pytest.mark.parametrize(("command", "key", "timeout"), EXHAUSTION, ids=[e[0][:40] for e in EXHAUSTION])
def test_exhaustion_ends_is_explained_and_the_agent_answers(toolbox, command: str, key: str | None, timeout):
    if key == PROCESSES and unbounded_fork_bomb(toolbox):
        pytest.skip(f"no process limit binds here: {toolbox.status.missing}")
    result, _ = exec_call(toolbox, command, timeout)
    if key is not None:
        assert key in result.value, result.value[:2000]
    alive, _ = exec_call(toolbox, "echo alive", 30)  # the agent answers the next call (not timed out)
    assert alive.kind == "text" and "alive" in alive.value and "sandbox.max" not in alive.value
    left = our_cgroups()
    assert left <= toolbox.cgroups_before, f"cgroups left behind: {left - toolbox.cgroups_before}"


def test_at_least_twenty_exhaustion_variants():
    assert len(EXHAUSTION) >= 20


def test_files_stay_within_the_size_limit(toolbox):
    exec_call(toolbox, "head -c 20000000 /dev/zero > capped.bin")
    size = (toolbox.sandbox.workspace / "capped.bin").stat().st_size
    assert size <= 8 * (1 << 20)


@pytest.mark.parametrize("command", RAISE)
def test_a_command_cannot_raise_its_limits(toolbox, command: str):
    result, _ = exec_call(toolbox, command)
    assert result.kind == "error", result.value


def test_ordinary_work_is_not_limited(toolbox):
    script = (
        "for i in $(seq 20); do sleep 0.1 & done; wait; head -c 4000000 /dev/zero > ok.bin; "
        f"{PY} 'b = bytearray(50 * 10**6); print(len(b))'; ls -l ok.bin | cut -d\" \" -f5"
    )
    result, _ = exec_call(toolbox, script)
    assert result.kind == "text", result.value
    assert "50000000" in result.value and "4000000" in result.value


def test_a_pids_cgroup_is_made_per_command_and_removed(toolbox):
    if PLAN.pids is None:
        pytest.skip(f"no pids cgroup can be made here: {PLAN.problem}")
    result, _ = exec_call(toolbox, f"ls {PLAN.pids}")  # the host's cgroup tree is visible, read-only
    ran_in = set(re.findall(rf"vllm-bot-{os.getpid()}-\d+", result.value)) - toolbox.cgroups_before
    assert result.kind == "text" and len(ran_in) == 1, result.value
    assert not (Path(PLAN.pids) / ran_in.pop()).exists()  # the command's own is removed when it ends
    assert our_cgroups() <= toolbox.cgroups_before


def test_the_status_names_the_limits_and_what_is_missing(toolbox):
    status = toolbox.status
    text = "; ".join(status.layers)
    assert "limits: memory 256 MB" in text and "files up to 8 MB" in text and "1 s CPU" in text
    if PLAN.memory is None:
        assert any("cgroup" in gap and "memory" in gap for gap in status.missing)
    if os.geteuid() == 0 and status.active:
        assert any(gap.startswith("unprivileged uid") for gap in status.missing)
