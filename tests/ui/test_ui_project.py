"""/init, /config, the banner and /tokens on project settings, against a real session and the fake
server: /init's write goes through the gate like any write, and the next task's system prompt
carries the new AGENTS.md."""

import io
import json
import re
import subprocess

import pytest

from vllm_bot.config import load_config
from vllm_bot.config.trust import TrustPolicy
from vllm_bot.session import Session
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.ui.plain import PlainUI
from vllm_bot.ui.repl import Repl
from vllm_bot.ui.slash.registry import StartTask, dispatch

STARTER = "# AGENTS.md\n\nRun the tests with `python -m pytest -q`.\n"


class Lines:
    """A reader that types the given lines, then Ctrl-D."""

    def __init__(self, *lines):
        self.lines = list(lines)

    def read(self):
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hi')\n")
    return ws


def start(ws, server, approval="auto-edit"):
    (ws / ".vllm-bot").mkdir(exist_ok=True)
    (ws / ".vllm-bot" / "config.json").write_text(
        json.dumps({"agent": {"max_iterations": 12, "approval": approval}})
    )
    config = load_config(
        env={}, overrides={"vllm.base_url": server.base_url}, workspace=ws, trust=TrustPolicy()
    )
    err = io.StringIO()
    s = Session(config, ws, headless=False, front=PlainUI(stream_text=True, out=io.StringIO(), err=err))
    s.output = err
    return s


def test_init_writes_agents_md_through_the_gate_and_the_next_task_reads_it(workspace):
    script = [
        Reply(calls=[Call("read", {"path": "app.py"})]),
        Reply(calls=[Call("write", {"path": "AGENTS.md", "content": STARTER})]),
        Reply(content="Wrote AGENTS.md."),
        Reply(content="Noted."),
    ]
    with FakeVLLM(script) as server:
        s = start(workspace, server)
        try:
            Repl(s, Lines("/init", "what are the rules?")).run()
        finally:
            s.close()
        server.assert_done()
    assert (workspace / "AGENTS.md").read_text() == STARTER
    first, last = server.requests[0], server.requests[-1]
    assert "Survey this repository and write a starter AGENTS.md" in first["messages"][-1]["content"]
    assert "There is no AGENTS.md yet" in first["messages"][-1]["content"]
    assert "Run the tests with" not in first["messages"][0]["content"]
    assert "### AGENTS.md\n# AGENTS.md\n\nRun the tests with" in last["messages"][0]["content"]
    out = s.output.getvalue()
    assert "Project instructions read again: AGENTS.md (~" in out


def test_init_asks_before_writing_in_ask_mode(workspace):
    with FakeVLLM([]) as server:
        s = start(workspace, server, approval="ask")
        (workspace / "AGENTS.md").write_text("old rules\n")
        with pytest.raises(StartTask) as task:
            dispatch(s, "/init")
        s.close()
    assert "There is already an AGENTS.md: read it first" in task.value.text
    # untrusted, the project's approval key was ignored: the session asks as the defaults say
    assert s.gate.mode == "auto-edit"
    assert "agent.approval (.vllm-bot/config.json)" in s.config.provenance.ignored[0]


def test_config_shows_each_value_and_where_it_came_from(workspace):
    with FakeVLLM([]) as server:
        base_url = server.base_url
        s = start(workspace, server)
        dispatch(s, "/config agent")
        out = s.output.getvalue()
        s.output.truncate(0)
        dispatch(s, "/config vllm.base_url")
        url = s.output.getvalue()
        s.output.truncate(0)
        dispatch(s, "/config nothing")
        none = s.output.getvalue()
        s.close()
    assert f"project .vllm-bot/config.json: {workspace / '.vllm-bot' / 'config.json'} (not trusted)" in out
    assert re.search(r"\nagent\.max_iterations +12  \[project \.vllm-bot/config\.json\]\n", out)
    assert re.search(r'\nagent\.approval +"auto-edit"  \[defaults file\]\n', out)  # not full-auto
    assert "Ignored (the workspace is not trusted): agent.approval (.vllm-bot/config.json)" in out
    assert f'vllm.base_url  "{base_url}"  [command line (--base-url)]' in url
    assert "No setting starts with 'nothing'" in none


def test_banner_and_tokens_name_the_instruction_files(workspace):
    (workspace / "AGENTS.md").write_text("Rule one.\n")
    with FakeVLLM([Reply(content="Hi.")]) as server:
        s = start(workspace, server)
        s.start()
        rows = dict(s.banner_info().rows())
        s.agent.run("hi")
        dispatch(s, "/tokens")
        s.close()
    assert rows["instructions"] == "AGENTS.md (~3 tokens)"
    assert rows["project config"] == ".vllm-bot/config.json (not trusted)"
    assert "counted in the system prompt above:\n  AGENTS.md (~3 tokens)\n" in s.output.getvalue()
