"""Messages name the command the user ran: `vllm-bot` through the installed entry point, `python cli.py`
from a checkout. Both are run for real: cli.py as a user types it, and a console script written the way
pip writes the `vllm-bot` entry point."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bot.cliargs import program_name

ROOT = Path(__file__).resolve().parents[1]

# What pip (and pipx, uv tool) write for `[project.scripts] vllm-bot = "vllm_bot.app:main"`.
ENTRY_POINT = """#!{python}
import re
import sys
from vllm_bot.app import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        ("/home/me/.local/bin/vllm-bot", "vllm-bot"),
        ("vllm-bot", "vllm-bot"),
        ("cli.py", "python cli.py"),
        ("/opt/vllm bot/cli.py", "python '/opt/vllm bot/cli.py'"),
        ("/srv/site-packages/vllm_bot/app.py", "python -m vllm_bot.app"),
        ("", "vllm-bot"),
    ],
)
def test_program_name_follows_argv0(monkeypatch, argv0, expected):
    monkeypatch.setattr(sys, "argv", [argv0, "--help"])
    assert program_name() == expected


@pytest.fixture
def entry_point(tmp_path) -> Path:
    script = tmp_path / "bin" / "vllm-bot"
    script.parent.mkdir()
    script.write_text(ENTRY_POINT.format(python=sys.executable))
    script.chmod(0o755)
    return script


def run(command: list[str], cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("DEBUG", None)
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


def test_from_the_checkout_help_and_messages_say_python_cli_py(tmp_path):
    shown = run([sys.executable, "cli.py", "--help"], ROOT, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: python cli.py [-h]")
    assert '\n  python cli.py -p "fix the failing test"    ' in shown.stdout
    assert "vllm-bot -p" not in shown.stdout
    undo = run([sys.executable, "cli.py", "undo", "--help"], ROOT, tmp_path)
    assert undo.stdout.startswith("usage: python cli.py undo")
    missing = run(
        [sys.executable, "cli.py", "--continue", "-p", "x", "--workspace", str(tmp_path)], ROOT, tmp_path
    )
    assert missing.returncode == 2
    assert (
        f"no saved session in {tmp_path}; start one with `python cli.py` in that directory" in missing.stderr
    )


def test_as_the_installed_command_help_and_messages_say_vllm_bot(tmp_path, entry_point):
    shown = run([str(entry_point), "--help"], tmp_path, tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: vllm-bot [-h]")
    assert '\n  vllm-bot -p "fix the failing test"    ' in shown.stdout
    assert "python cli.py" not in shown.stdout
    sessions = run([str(entry_point), "sessions", "--help"], tmp_path, tmp_path)
    assert sessions.stdout.startswith("usage: vllm-bot sessions")
    missing = run(
        [str(entry_point), "--resume", "nope", "-p", "x", "--workspace", str(tmp_path)], tmp_path, tmp_path
    )
    assert missing.returncode == 2
    assert (
        "no saved session in" in missing.stderr
        and "start one with `vllm-bot` in that directory" in missing.stderr
    )


def test_batch_and_eval_hints_name_the_command_run(tmp_path):
    batch = run([sys.executable, "cli.py", "batch", "--help"], ROOT, tmp_path)
    assert batch.returncode == 0, batch.stderr
    assert "`python cli.py batch merge --help`" in " ".join(batch.stdout.split())
    unknown = run([sys.executable, "cli.py", "eval", "--tasks", "nope"], ROOT, tmp_path)
    assert unknown.returncode == 2, unknown.stderr
    assert "`python cli.py eval --list` lists them" in unknown.stderr
    assert "vllm-bot eval" not in unknown.stderr


def test_an_agent_started_by_batch_names_what_its_user_ran(tmp_path, monkeypatch):
    from vllm_bot.batch.settings import child_env
    from vllm_bot.cliargs import PROGRAM_ENV
    from vllm_bot.config import Config

    monkeypatch.setattr(sys, "argv", ["/opt/bot/cli.py", "batch", "tasks.jsonl"])
    monkeypatch.delenv(PROGRAM_ENV, raising=False)
    env = child_env(Config())
    assert env[PROGRAM_ENV] == "python /opt/bot/cli.py"
    # the agent itself runs as `python -m vllm_bot.app` and says what the user typed instead
    monkeypatch.setattr(sys, "argv", [str(ROOT / "src" / "vllm_bot" / "app.py"), "-p", "-"])
    monkeypatch.setenv(PROGRAM_ENV, env[PROGRAM_ENV])
    assert program_name() == "python /opt/bot/cli.py"
    monkeypatch.delenv(PROGRAM_ENV)
    assert program_name() == "python -m vllm_bot.app"
