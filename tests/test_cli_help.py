"""`--help` lists every sub-command, one line each with an example, without loading what they need."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bot.app import SUBCOMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("prog", ["python cli.py", "vllm-bot"])
def test_help_lists_each_sub_command_on_one_aligned_line_with_an_example(prog):
    text = build_parser(prog).format_help()
    block = text.split("commands (each has --help):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    names = {"mcp": "mcp list"}
    assert len(block) == len(SUBCOMMANDS)
    for name in SUBCOMMANDS:
        shown = names.get(name, name)
        line = next(ln for ln in block if ln.startswith(f"  {shown} "))
        assert re.search(rf"  {re.escape(prog)} {shown}( |$)", line), line  # the example runs it
    assert len({ln.index(prog) for ln in block}) == 1  # the examples line up
    assert len({len(ln) - len(ln[2:].split("  ", 1)[1].lstrip()) for ln in block}) == 1


def test_help_stays_light():
    code = "import sys, vllm_bot.app as a; a.main(['--help'])"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert "commands (each has --help)" in proc.stdout
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    heavy = {"openai", "rich", "prompt_toolkit", "git", "mcp", "vllm_bot.history.cli", "vllm_bot.doctor"}
    assert not loaded & heavy
