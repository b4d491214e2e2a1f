"""Front ends are consumers: only ui/rich_ui.py, ui/live_view.py and ui/batch_live.py (a batch's live
progress) import rich, and neither rich nor prompt_toolkit is loaded for `--help` or a headless run."""

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
IMPORT = re.compile(r"^\s*(from|import)\s+(rich|prompt_toolkit)\b", re.MULTILINE)


def importers(library):
    """Modules under src/ that import `library`."""
    return {
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        for match in IMPORT.finditer(path.read_text())
        if match.group(2) == library
    }


def test_only_the_rich_ui_modules_import_rich():
    assert importers("rich") == {
        "vllm_bot/ui/rich_ui.py",
        "vllm_bot/ui/rich_blocks.py",
        "vllm_bot/ui/live_view.py",
        "vllm_bot/ui/batch_live.py",
    }


def test_prompt_toolkit_is_only_used_by_the_terminal_input_and_prompt():
    assert importers("prompt_toolkit") <= {"vllm_bot/ui/repl.py", "vllm_bot/ui/rich_ui.py"}


def test_help_and_headless_modules_do_not_load_the_terminal_libraries():
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r})\n"
        "import vllm_bot.app, vllm_bot.session, vllm_bot.ui.headless, vllm_bot.ui.json_out\n"
        "vllm_bot.app.build_parser().format_help()\n"
        "print(sorted(m for m in ('rich', 'prompt_toolkit', 'openai') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
