"""exec: real subprocesses. Output capping, timeouts that leave no process behind, closed stdin."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor


def executor(ws: Path, env: dict[str, str] | None = None, **cfg: object) -> ToolExecutor:
    settings = {"exec_timeout": 5, "exec_kill_grace": 0.3, **cfg}
    return ToolExecutor(ws, ToolsConfig(**settings), env=env)  # type: ignore[arg-type]


def run(ex: ToolExecutor, command: str, **kw: object):
    return ex.execute("exec", {"command": command, **kw})


def token() -> str:
    """A number no other process has on its command line (used as a sleep duration)."""
    return str(random.randint(10**8, 10**9))


def survivors(tag: str) -> list[str]:
    """Live processes whose command line contains `tag`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag in cmdline and state != "Z":
            found.append(f"{name}: {cmdline}")
    return found


def zombie_children() -> list[int]:
    zombies = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == os.getpid():
                zombies.append(int(name))
    return zombies


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_exit_code_and_interleaved_output(tmp_path: Path) -> None:
    r = run(executor(tmp_path), "for i in 1 2 3; do echo o$i; echo e$i >&2; done; exit 3")
    assert r.kind == "error"
    assert r.value.startswith("Exit code 3 (")
    assert "o1\ne1\no2\ne2\no3\ne3" in r.value


def test_success_is_a_text_result_and_empty_output_is_said(tmp_path: Path) -> None:
    r = run(executor(tmp_path), "true")
    assert r.kind == "text" and "Exit code 0" in r.value and "(no output)" in r.value


def test_runs_in_the_workspace_with_a_noninteractive_environment(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "FROM_BASE": "base"}
    ex = executor(tmp_path, env=env, exec_env={"CI": "1"})
    r = run(
        ex,
        'pwd; echo "$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$GIT_EDITOR|$EDITOR|$FROM_BASE|$CI"; '
        "[ -t 0 ] || echo no-tty",
    )
    assert r.kind == "text", r.value
    assert str(tmp_path.resolve()) in r.value
    assert "cat|cat|0|true|true|base|1" in r.value
    assert "no-tty" in r.value


def test_reading_stdin_returns_at_once_because_stdin_is_closed(tmp_path: Path) -> None:
    r = run(executor(tmp_path), 'read line; echo "read=$?"; python3 -c "input()"')
    assert "Timed out" not in r.value
    assert "read=1" in r.value and "EOFError" in r.value


def test_git_commit_without_message_does_not_wait_for_an_editor(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    r = run(executor(tmp_path, env=env), "git init -q . && git commit --allow-empty && git log")
    assert "Timed out" not in r.value
    assert r.kind == "error" and "empty commit message" in r.value


def test_timeout_kills_the_whole_tree_whatever_it_does(tmp_path: Path) -> None:
    """Escape-the-reaper patterns, run concurrently: each must time out and leave no process."""
    t = token()
    daemon = (
        "python3 -c 'import os,time\nif os.fork()==0:\n os.setsid()\n if os.fork()==0:\n  time.sleep(999)\n"
        " os._exit(0)\ntime.sleep(999)' " + t
    )
    patterns = {
        "background": f"sleep {t} & sleep {t}",
        "setsid": f"setsid sleep {t} & sleep {t}",
        "nohup": f"nohup sleep {t} >/dev/null 2>&1 & sleep {t}",
        "trap_term": f"trap '' TERM; sleep {t}",
        "subshell_double_fork": f"(sleep {t} &); sleep {t}",
        "disown": f"sleep {t} & disown; sleep {t}",
        "setsid_ignoring_term": f"setsid bash -c 'trap \"\" TERM; sleep {t}' & sleep {t}",
        "env_i": f"env -i /bin/sleep {t} & sleep {t}",
        "process_substitution": f"cat <(sleep {t})",
        "stopped_child": f"sleep {t} & kill -STOP $!; sleep {t}",
        "python_double_fork_daemon": daemon,
        "pipeline": f"sleep {t} | cat",
        "busy_writer": f"yes {t} > /dev/null",
    }
    before = set(zombie_children())  # other tests in this process may have left orphans of their own
    ex = executor(tmp_path, exec_timeout=1)
    with ThreadPoolExecutor(max_workers=len(patterns)) as pool:
        results = dict(zip(patterns, pool.map(lambda c: run(ex, c), patterns.values()), strict=True))
    not_timed_out = {
        name: r.value[:120] for name, r in results.items() if "Timed out after 1 s" not in r.value
    }
    assert not_timed_out == {}
    assert survivors(t) == []
    assert set(zombie_children()) - before == set()


def test_background_processes_left_after_exit_are_stopped_and_reported(tmp_path: Path) -> None:
    t = token()
    ex = executor(tmp_path)
    r = run(ex, f"echo started; sleep {t} &")
    assert r.kind == "text" and "started" in r.value and "stopped 1 background process" in r.value
    r = run(ex, f"nohup sleep {t} >/dev/null 2>&1 &")
    assert "stopped 1 background process" in r.value
    assert survivors(t) == []


def test_cancel_interrupts_and_kills(tmp_path: Path) -> None:
    t = token()
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    r = executor(tmp_path).execute("exec", {"command": f"echo before; sleep {t}"}, cancel=cancel)
    assert r.kind == "error" and "Interrupted by the user" in r.value and "before" in r.value
    assert survivors(t) == []


def test_live_output_reaches_the_callback_in_order(tmp_path: Path) -> None:
    chunks: list[str] = []
    r = executor(tmp_path).execute("exec", {"command": "echo a; sleep 0.2; echo b"}, on_output=chunks.append)
    assert r.kind == "text"
    assert "".join(chunks) == "a\nb\n" and len(chunks) >= 2


def test_yes_is_capped_with_bounded_memory_and_spilled(tmp_path: Path) -> None:
    ex = executor(tmp_path, exec_timeout=1, output_limit=2000, exec_spill_bytes=1_000_000)
    peak, stop = [rss_bytes()], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak.append(rss_bytes())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    baseline = rss_bytes()
    sampler.start()
    try:
        r = run(ex, "yes")
    finally:
        stop.set()
        sampler.join()
    assert "Timed out" in r.value and "elided" in r.value
    assert "only the first 1.0 MB were saved" in r.value
    assert len(r.value) < 3000
    spills = list((tmp_path / ".vllm-bot" / "outputs").glob("exec-*.log"))
    assert len(spills) == 1 and spills[0].stat().st_size == 1_000_000
    assert (tmp_path / ".vllm-bot" / ".gitignore").read_text().endswith("*\n")  # the state dir ignores itself
    assert max(peak) - baseline < 64 * 2**20


def test_large_output_keeps_head_and_tail_and_saves_everything(tmp_path: Path) -> None:
    ex = executor(tmp_path, output_limit=4000)
    r = run(ex, "seq 1 500000; echo done")
    assert r.kind == "text"
    assert r.value.split("\n")[1] == "1"
    assert r.value.rstrip().endswith("done")
    assert "lines) of 3.4 MB elided; the full output is in .vllm-bot/outputs/exec-" in r.value
    spill = next((tmp_path / ".vllm-bot" / "outputs").glob("exec-*.log"))
    expected = subprocess.run("seq 1 500000; echo done", shell=True, capture_output=True, check=True).stdout
    assert spill.read_bytes() == expected
    assert (
        ex.execute("read", {"path": str(spill), "offset": 250000, "limit": 1}).value.split("\n")[1]
        == "250000→250000"
    )


def test_timeout_is_clamped_to_the_maximum(tmp_path: Path) -> None:
    r = run(executor(tmp_path, exec_max_timeout=3), "true", timeout=50)
    assert r.kind == "text" and "above the maximum; used 3 s" in r.value


def test_wrap_command_is_applied_and_start_failures_are_errors(tmp_path: Path) -> None:
    ex = ToolExecutor(tmp_path, ToolsConfig(), wrap_command=lambda argv: ["env", "WRAPPED=yes", *argv])
    assert "wrapped=yes" in run(ex, "echo wrapped=$WRAPPED").value
    broken = ToolExecutor(tmp_path, ToolsConfig(), wrap_command=lambda argv: ["/nonexistent/sandbox", *argv])
    r = run(broken, "echo hi")
    assert r.kind == "error" and "could not start the command" in r.value


def test_signal_death_and_terminal_noise(tmp_path: Path) -> None:
    ex = executor(tmp_path)
    assert "Killed by signal SIGSEGV" in run(ex, "kill -SEGV $$").value
    r = run(ex, r"printf '\033[31mred\033[0m\n'; printf 'step 1\rstep 2\rfinished\n'")
    assert "red" in r.value and "\x1b" not in r.value
    assert "finished" in r.value and "step 1" not in r.value


def test_many_short_commands_leak_no_descriptors_or_zombies(tmp_path: Path) -> None:
    ex = executor(tmp_path)
    run(ex, "true")
    before = set(zombie_children())
    fds = len(os.listdir("/proc/self/fd"))
    for i in range(100):
        assert run(ex, f"echo {i}").kind == "text"
    assert len(os.listdir("/proc/self/fd")) - fds <= 5
    assert set(zombie_children()) - before == set()


@pytest.mark.parametrize("command", ["", "   "])
def test_blank_command_runs_harmlessly(tmp_path: Path, command: str) -> None:
    assert run(executor(tmp_path), command).kind == "text"


def test_a_failing_output_callback_still_leaves_no_process(tmp_path: Path) -> None:
    t = token()

    def broken_ui(chunk: str) -> None:
        raise RuntimeError("UI bug")

    with pytest.raises(RuntimeError, match="UI bug"):
        executor(tmp_path).execute("exec", {"command": f"echo hi; sleep {t}"}, on_output=broken_ui)
    assert survivors(t) == []


def test_plural_takes_an_irregular_form() -> None:
    from vllm_bot.tools.context import plural

    assert plural(1, "background process", "background processes") == "1 background process"
    assert plural(2, "background process", "background processes") == "2 background processes"
    assert plural(1234, "line") == "1,234 lines" and plural(1, "line") == "1 line"


LEFTOVER_PROBE = """
import subprocess, sys
from vllm_bot.tools.reaper import become_subreaper, exited, kill_tree, left_nothing
assert become_subreaper()
for command in sys.argv[1:]:
    proc = subprocess.Popen(["bash", "-c", command], start_new_session=True)
    while not exited(proc):
        pass
    print(left_nothing(proc), len(kill_tree(proc, "none", 0.3) - {proc.pid}))
    proc.wait()
"""


def test_an_exited_command_is_known_to_have_left_nothing_only_when_it_did(tmp_path: Path) -> None:
    """In a process of its own (other tests leave children of pytest): a command that exited alone
    needs no /proc scan; one that left a process behind is seen, and the kill still finds it."""
    t = token()
    out = subprocess.run(
        [sys.executable, "-c", LEFTOVER_PROBE, "true", f"sleep {t} &"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out == ["True 0", "False 1"]
    assert survivors(t) == []
