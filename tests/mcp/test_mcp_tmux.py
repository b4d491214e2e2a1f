"""MCP in a real terminal (tmux, as tests/ui/test_repl_tmux.py drives it): progress shows live while a
call runs, and one Ctrl-C stops a long MCP call, tells the server, and gives the prompt back."""

import json

import pytest
from mcp_support import stdio_json, wait_until
from ui.tmux_terminal import TMUX, Terminal

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")


def test_progress_shows_live_and_one_ctrl_c_stops_an_mcp_call(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    config = tmp_path / "config.json"
    # mcp.timeout is longer than the test may take: only the Ctrl-C can end the second call early.
    flaky = stdio_json("flaky", allow=True)
    config.write_text(json.dumps({"mcp": {"timeout": 600, "servers": {"flaky": flaky}}}))
    script = [
        Reply(calls=[Call("mcp__flaky__work", {"steps": 4, "interval": 1.5})]),
        Reply(content="Worked through it."),
        Reply(calls=[Call("mcp__flaky__wait", {"seconds": 300})]),
    ]
    with FakeVLLM(script) as server:
        term = Terminal(
            tmp_path, ["--workspace", str(ws), "--base-url", server.base_url, "--config", str(config)]
        )
        try:
            term.wait_for("\n>", after="Ctrl-C stops")
            term.type("work")
            term.keys("Enter")
            term.wait_for("progress 2/4 (50%): step 2")  # drawn live, before the call ends
            term.prompt(after="Worked through it.")
            term.type("wait")
            term.keys("Enter")
            term.wait_for("Ctrl-C stops it)", after="> wait")
            term.keys("C-c")
            screen = term.wait_for("Interrupted", after="> wait", timeout=60)
            term.prompt(after="Interrupted")
            log = ws / ".vllm-bot" / "mcp" / "flaky.log"
            wait_until(lambda: "cancelled after a request to wait 300 s" in log.read_text())
            term.type("/exit")
            term.keys("Enter")
            assert term.exit_code() == 0
        finally:
            term.close()
        server.assert_done()
    assert "Traceback" not in screen
    assert len(server.requests) == 3  # nothing was asked after the interrupt
