"""What the session prints, as a person sees it in a real terminal: aligned columns, wrapped doctor
rows, the sandbox warning once and true in full-auto."""

import json
import re

from tmux_terminal import Terminal, needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM

pytestmark = needs_tmux


def column_of(line: str, text: str) -> int:
    return line.index(text)


def test_help_and_model_columns_are_aligned(terminal):
    with FakeVLLM([], served_models=["tiny", "a-much-longer-model-name-x"]) as server:
        term, _ = terminal(server)
        term.type("/help")
        term.keys("Enter")
        screen = term.wait_for("/undo", after="> /help")
        rows = [ln for ln in screen.rsplit("> /help", 1)[1].splitlines() if ln.startswith("/")]
        helps = {"/help": "List the commands", "/exit": "Leave the session", "/undo": "Put back the files"}
        starts = {column_of(ln, text) for ln in rows for name, text in helps.items() if ln.startswith(name)}
        assert len(rows) >= 15 and len(starts) == 1, rows
        start = starts.pop()
        assert all(ln[start - 2 : start] == "  " and ln[start] != " " for ln in rows), rows
        term.type("/model")
        term.keys("Enter")
        screen = term.wait_for("a-much-longer-model-name-x", after="> /model")
        rows = [ln for ln in screen.rsplit("> /model", 1)[1].splitlines() if "max_model_len" in ln]
        assert len(rows) == 3 and len({ln.index("max_model_len") for ln in rows}) == 1, rows
        assert rows[0].startswith(f"* {server.model}")
        server.assert_done()


def test_doctor_rows_wrap_under_their_detail_at_120_columns(terminal):
    with FakeVLLM([], mode="text-only") as server:
        term, _ = terminal(server, width=120)
        term.type("/doctor")
        term.keys("Enter")
        screen = term.wait_for("Verdict:", after="> /doctor", timeout=60)
        report = screen.rsplit("> /doctor", 1)[1].split("Verdict:")[0]
        lines = [ln for ln in report.splitlines() if ln.strip()]
        rows = [ln for ln in lines if re.match(r"  (PASS|WARN|FAIL|SKIP)  ", ln)]
        continued = [ln for ln in lines if ln not in rows and not ln.startswith("vLLM Bot doctor")]
        wrapped = [ln for ln in continued if not ln.strip().startswith("fix:")]
        assert rows and wrapped, report  # some rows are longer than 120 columns
        assert all(len(ln) <= 120 for ln in lines)
        assert all(ln.startswith(" " * 30) for ln in continued), continued  # never column 0


def test_without_bubblewrap_the_full_auto_demo_warns_once_and_truly(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"sandbox": {"bwrap": str(tmp_path / "no-bwrap-here")}}))
    term = Terminal(tmp_path, ["--demo", "--config", str(config)], env={"VLLM_BOT_DEMO_PACE": "0"})
    try:
        assert term.exit_code(timeout=120) == 0, term.screen()
        screen = term.screen(history=2000)
        words = " ".join(screen.split())  # the banner's table wraps the row
        assert words.count("UNSANDBOXED") == 1, screen
        assert "commands run UNSANDBOXED and nothing asks (full-auto)" in words
        assert "needs approval" not in words
    finally:
        term.close()


def test_at_80x24_the_banner_keeps_its_title_on_the_screen(terminal):
    with FakeVLLM([]) as server:
        term, _ = terminal(server, width=80, height=24)
        visible = term.screen(history=0, join=False).splitlines()
        assert visible[0].startswith("vLLM Bot"), "\n".join(visible)
        assert any(ln.startswith("model ") and server.model in ln for ln in visible)
        assert any(ln.startswith("> ") or ln == ">" for ln in visible)  # the prompt below it
