"""A workspace's own settings as a person meets them in a real terminal: asked once whether to trust
the workspace, the banner naming the project config and AGENTS.md, /config saying where a value
came from; the next session does not ask again."""

import json
import re

from tmux_terminal import needs_tmux

from vllm_bot.testing.fake_vllm import FakeVLLM

pytestmark = needs_tmux


def test_trust_is_asked_once_and_the_banner_names_the_project_files(terminal, tmp_path):
    ws = tmp_path / "project"
    (ws / ".vllm-bot").mkdir(parents=True)
    (ws / ".vllm-bot" / "config.json").write_text(json.dumps({"sandbox": {"network": True}}))
    (ws / "AGENTS.md").write_text("Run the tests with make check.\n")
    with FakeVLLM([]) as server:
        term, _ = terminal(server, ready=None)
        screen = term.wait_for("Trust this workspace? [y/N]")
        assert "  .vllm-bot/config.json: sandbox.network = true" in screen
        term.type("y")  # one key, no Enter
        screen = term.wait_for("\n>", after="Ctrl-C stops")
        assert "Trust this workspace? [y/N] yes" in screen
        words = " ".join(screen.split())
        assert "project config .vllm-bot/config.json (trusted)" in words
        assert re.search(r"instructions AGENTS\.md \(~\d+ tokens\)", words), screen
        term.type("/config sandbox.network")
        term.keys("Enter")
        screen = term.wait_for("[project .vllm-bot/config.json]", after="> /config")
        assert re.search(r"sandbox\.network +true  \[project \.vllm-bot/config\.json\]", screen)
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
        again, _ = terminal(server)  # the answer was remembered: straight to the banner
        screen = again.screen()
        assert "Trust this workspace" not in screen
        assert "project config .vllm-bot/config.json (trusted)" in " ".join(screen.split())


def test_escape_declines_with_one_key_and_the_settings_are_ignored(terminal, tmp_path):
    ws = tmp_path / "project"
    (ws / ".vllm-bot").mkdir(parents=True)
    (ws / ".vllm-bot" / "config.json").write_text(json.dumps({"sandbox": {"network": True}}))
    with FakeVLLM([]) as server:
        term, _ = terminal(server, ready=None)
        term.wait_for("Trust this workspace? [y/N]")
        term.keys("Escape")
        screen = term.wait_for("\n>", after="Ctrl-C stops")
        words = " ".join(screen.split())
        assert "Trust this workspace? [y/N] no" in words
        assert "not trusted, so ignored: sandbox.network" in words
        term.type("/exit")
        term.keys("Enter")
        assert term.exit_code() == 0
