"""A real terminal for tests: tmux runs `python cli.py` against the fake server; tests type with
send-keys (and paste with bracketed paste) and read the screen with capture-pane."""

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")


class Terminal:
    """One private tmux server running one command; closed with kill-server on its own socket."""

    def __init__(
        self,
        tmp_path: Path,
        args: list[str],
        width: int = 110,
        height: int = 45,
        env: dict[str, str] | None = None,
        size_env: bool = True,
    ) -> None:
        self.socket = f"vllm-bot-test-{uuid.uuid4().hex[:12]}"
        self.zombies_before = zombie_children()
        self.exit_file = tmp_path / f"exit-code-{self.socket}"
        env = {"XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        # The pane's size, said outright: started from pytest, the program's terminal-size query
        # sometimes answers 80 columns although the pane is wider (GNU readline, once loaded in the
        # test process, exports COLUMNS=80 at the C level, and tmux hands it on). A test that resizes
        # the pane unsets both (`size_env=False`), as a user's shell does: the program follows the pane.
        if size_env:
            env.update(COLUMNS=str(width), LINES=str(height))
        self.script_path = str(ROOT / "cli.py")  # the program's sys.argv[0]
        command = " ".join(shlex.quote(a) for a in [sys.executable, self.script_path, *args])
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        script = tmp_path / f"run-{self.socket}.sh"
        # Ctrl-C reaches the whole foreground group: the wrapper shell must survive it to record the
        # exit code (a trap with a command, unlike an ignored signal, is not inherited by the child).
        lines = [
            "trap : INT",
            "unset DEBUG" + ("" if size_env else " COLUMNS LINES"),
            f"export {exports}",
            command,
            f"echo $? > {self.exit_file}",
            "sleep 60",
        ]
        script.write_text("\n".join(lines) + "\n")
        self.tmux("new-session", "-d", "-s", "main", "-x", str(width), "-y", str(height), f"sh {script}")

    def tmux(self, *args: str) -> str:
        cmd = [TMUX, "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=10).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "main", "-l", text)

    def paste(self, text: str) -> None:
        self.tmux("set-buffer", "-b", "clip", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "clip", "-t", "main")  # -p: bracketed paste

    def screen(self, history: int = 300, join: bool = True) -> str:
        """The screen and `history` lines above it; `join`: a line the terminal wrapped is one line."""
        joined = ["-J"] if join else []
        return self.tmux("capture-pane", "-p", *joined, "-S", f"-{history}", "-t", "main")

    def resize(self, width: int, height: int) -> None:
        self.tmux("resize-window", "-t", "main", "-x", str(width), "-y", str(height))

    def wait_for(self, needle: str, timeout: float = 30.0, after: str = "", history: int = 300) -> str:
        """Poll the screen until `needle` shows (after the last `after`, when given)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen(history)
            parts = screen.rsplit(after, 1) if after else ["", screen]
            if len(parts) == 2 and needle in parts[1]:  # `after` must be there when given
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} did not appear on the screen:\n{screen}")
            time.sleep(0.05)

    def prompt(self, after: str) -> None:
        """Wait for the input prompt drawn after `after` (keys such as Ctrl-D need it active)."""
        self.wait_for("\n>", after=after)

    def exit_code(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while not self.exit_file.exists() or not self.exit_file.read_text().strip():
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit:\n{self.screen()}")
            time.sleep(0.05)
        return int(self.exit_file.read_text())

    def close(self) -> None:
        try:
            server = int(self.tmux("display-message", "-p", "-t", "main", "#{pid}"))
        except (subprocess.CalledProcessError, ValueError):
            server = None
        family = _family(server) if server else set()
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        _reap(family, self.zombies_before)


def _stat(pid: int | str) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _children_by_parent() -> dict[int, list[tuple[int, str]]]:
    """parent pid -> [(pid, state)] for every process in /proc."""
    table: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                state, parent = _stat(entry.name)[:2]
                table.setdefault(int(parent), []).append((int(entry.name), state))
        except (OSError, IndexError, ValueError):
            continue
    return table


def _family(root: int) -> set[int]:
    """`root` and all its descendants."""
    table = _children_by_parent()
    family, todo = set(), [root]
    while todo:
        pid = todo.pop()
        family.add(pid)
        todo += [child for child, _ in table.get(pid, [])]
    return family


def zombie_children() -> set[int]:
    return {pid for pid, state in _children_by_parent().get(os.getpid(), []) if state == "Z"}


def _reap(family: set[int], before: set[int], seconds: float = 3.0) -> None:
    """Once the exec tool has made pytest a child subreaper, processes orphaned by this test (the
    tmux server and its panes, helpers the sandbox probe leaves) become our children when they die.
    Reap the ones that appeared during the test, so zombies do not pile up for later tests."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for pid in zombie_children() - before:
            os.waitpid(pid, os.WNOHANG)
        if not any(Path(f"/proc/{pid}").exists() for pid in family):
            return
        time.sleep(0.02)


def _processes(argument: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def running(token: str) -> bool:
    return bool(_processes(token))


def gone(token: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _processes(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
