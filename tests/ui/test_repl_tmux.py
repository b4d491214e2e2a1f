"""The interactive session in a real terminal: tmux runs `python cli.py` against the fake server, the
test types with send-keys (and pastes with bracketed paste) and reads the screen with capture-pane."""

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")
LONG_TEXT = " ".join(f"word{i}" for i in range(600))


class Terminal:
    """One private tmux server running one command; closed with kill-server on its own socket."""

    def __init__(self, tmp_path: Path, args: list[str], width: int = 110, height: int = 45) -> None:
        self.socket = f"vllm-bot-test-{uuid.uuid4().hex[:12]}"
        self.zombies_before = zombie_children()
        self.exit_file = tmp_path / "exit-code"
        env = {"XDG_STATE_HOME": str(tmp_path / "state"), "PYTHONDONTWRITEBYTECODE": "1"}
        command = " ".join(shlex.quote(a) for a in [sys.executable, str(ROOT / "cli.py"), *args])
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        script = tmp_path / "run.sh"
        # Ctrl-C reaches the whole foreground group: the wrapper shell must survive it to record the
        # exit code (a trap with a command, unlike an ignored signal, is not inherited by the child).
        lines = [
            "trap : INT",
            "unset DEBUG",
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

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", "main")

    def wait_for(self, needle: str, timeout: float = 30.0, after: str = "") -> str:
        """Poll the screen until `needle` shows (after the last `after`, when given)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
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


@pytest.fixture
def terminal(tmp_path):
    terminals = []

    def start(server, *args):
        ws = tmp_path / "project"
        ws.mkdir(exist_ok=True)
        term = Terminal(tmp_path, ["--workspace", str(ws), "--base-url", server.base_url, *args])
        terminals.append(term)
        term.wait_for("\n>", after="Ctrl-C stops")  # the banner's last line, then the prompt
        return term, ws

    yield start
    for term in terminals:
        term.close()


def last_user(expected):
    def check(body):
        users = [m for m in body["messages"] if m["role"] == "user"]
        assert users[-1]["content"] == expected, f"last user message {users[-1]['content']!r}"

    return check


def sent(needle, role=None):
    def check(body):
        text = "\n".join(str(m.get("content")) for m in body["messages"] if role in (None, m["role"]))
        assert needle in text, f"{needle!r} not in the request"

    return check


def test_task_slash_command_multiline_paste_and_history(terminal):
    script = [
        Reply(content="Hello! **Ready** to help.", expect=last_user("say hello")),
        Reply(content="Got two lines.", expect=last_user("first line\nsecond line")),
        Reply(content="Got the paste.", expect=last_user("pasted one\npasted two\npasted three")),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        screen = term.screen()
        assert server.model in screen and "32,768 tokens" in screen and "auto-edit" in screen
        term.type("say hello")
        term.keys("Enter")
        screen = term.wait_for("context ", after="Hello! Ready to help.")
        assert "> say hello" in screen, screen
        assert "**" not in screen.split("> say hello")[1]  # Markdown was rendered
        term.type("/tok")
        term.wait_for("Show how the context window is used")  # the completion menu
        term.keys("Tab")
        term.wait_for("> /tokens")
        term.keys("Enter")
        term.wait_for("compaction starts at")
        term.type("first line")
        term.keys("Escape", "Enter")  # Esc Enter: a new line, not send
        term.type("second line")
        term.keys("Enter")
        term.wait_for("Got two lines.")
        term.prompt(after="Got two lines.")  # bracketed paste needs the next prompt to be running
        term.paste("pasted one\npasted two\npasted three")
        term.wait_for("pasted three")
        assert "Got the paste." not in term.screen()  # the paste's newlines did not send it
        term.keys("Enter")
        term.wait_for("Got the paste.")
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
        server.assert_done()
    history = (ws / ".vllm-bot" / "history").read_text()
    assert "+say hello" in history and "+first line\n+second line" in history
    assert oct((ws / ".vllm-bot" / "history").stat().st_mode & 0o777) == "0o600"


def test_ctrl_c_stops_a_command_and_a_reply_and_the_session_goes_on(terminal, tmp_path):
    token = f"{400 + os.getpid() % 1000}.{time.time_ns() % 1000:03d}"
    script = [
        Reply(
            content="Running it.", calls=[Call("exec", {"command": f"sleep {token} & echo started; wait"})]
        ),
        Reply(content="OK, I stopped.", expect=sent("Interrupted by the user after", role="tool")),
        Reply(content=LONG_TEXT, chunk_size=6, latency=0.03),
        Reply(content="Continuing.", expect=sent("word0 word1 word2", role="assistant")),
    ]
    with FakeVLLM(script) as server:
        term, _ = terminal(server, "--yes")
        term.type("run the command")
        term.keys("Enter")
        term.wait_for("Ctrl-C stops it", after="started")
        assert _running(token)
        term.keys("C-c")
        term.wait_for("the command was killed")
        term.wait_for("Interrupted. The session goes on")
        assert _gone(token), "the command's process tree survived Ctrl-C"
        term.type("what happened?")
        term.keys("Enter")
        term.wait_for("OK, I stopped.")
        term.type("tell me a long story")
        term.keys("Enter")
        term.wait_for("word40")
        term.keys("C-c")
        term.wait_for("Interrupted. The session goes on", after="tell me a long story")
        assert "word599" not in term.screen()
        term.type("go on")
        term.keys("Enter")
        term.prompt(after="Continuing.")
        term.keys("C-c")  # at an empty prompt: asks to confirm
        term.prompt(after="press Ctrl-C again to exit")
        assert not term.exit_file.exists()
        term.keys("C-c")
        assert term.exit_code() == 0
        server.assert_done()


def test_approval_prompt_shows_what_runs_and_no_carries_a_reason(terminal):
    old = "def total(xs):\n    return sum(xs)\n"
    script = [
        Reply(
            calls=[Call("edit", {"path": "calc.py", "oldText": "sum(xs)", "newText": "sum(x for x in xs)"})]
        ),
        Reply(
            calls=[Call("exec", {"command": "touch approved.txt"})],
            expect=sent("The user said: keep sum as it is", role="tool"),
        ),
        Reply(content="Done.", expect=sent("Exit code 0", role="tool")),
    ]
    with FakeVLLM(script) as server:
        term, ws = terminal(server)
        (ws / "calc.py").write_text(old)
        term.type("/approval ask")
        term.keys("Enter")
        term.wait_for("Approval mode: ask.")
        term.type("tidy calc.py")
        term.keys("Enter")
        screen = term.wait_for("Allow? [y]es / [n]o / [a]lways")
        assert "Edit calc.py?" in screen and "-    return sum(xs)" in screen
        assert "+    return sum(x for x in xs)" in screen
        term.type("n keep sum as it is")
        term.keys("Enter")
        screen = term.wait_for("Allow? [y]es", after="n keep sum as it is")
        assert "$ touch approved.txt" in screen.rsplit("n keep sum as it is", 1)[1]
        term.type("y")
        term.keys("Enter")
        term.prompt(after="Done.")
        assert (ws / "calc.py").read_text() == old and (ws / "approved.txt").exists()
        term.keys("C-d")
        assert term.exit_code() == 0
        server.assert_done()


def _processes(argument: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _running(token: str) -> bool:
    return bool(_processes(token))


def _gone(token: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _processes(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
