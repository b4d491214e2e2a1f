"""The session's slash commands against a real session (client, tools, gate) and the fake server."""

import io

import pytest

from vllm_bot.config import Config
from vllm_bot.session import Session
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply
from vllm_bot.ui.debuglog import DebugLog
from vllm_bot.ui.plain import PlainUI
from vllm_bot.ui.repl import command_completions, expand_command, is_command, path_completions
from vllm_bot.ui.slash.registry import UnknownCommand, dispatch, load_all


def summary_reply(body):
    if "compress" in body["messages"][0]["content"].lower():
        return Reply(content="Summary: the user said hello twice.")
    return None


@pytest.fixture
def session(tmp_path):
    script = [Reply(content="Hello."), Reply(content="Hello again."), Reply(content="Hi.")]
    with FakeVLLM(script, auto_reply=summary_reply) as server:
        config = Config()
        config.vllm.base_url = server.base_url
        err = io.StringIO()
        front = PlainUI(stream_text=True, out=io.StringIO(), err=err)
        s = Session(config, tmp_path, headless=False, front=front)
        s.start()
        s.output = err
        s.server = server
        yield s
        s.close()


def said(session):
    text = session.output.getvalue()
    session.output.seek(0)
    session.output.truncate()
    return text


def test_model_lists_served_models_and_switches_only_to_served_ones(session):
    dispatch(session, "/model")
    assert f"* {session.server.model}  max_model_len 32,768" in said(session)
    dispatch(session, "/model other/model")
    assert "does not serve 'other/model'" in said(session) and session.client.model == session.server.model
    dispatch(session, f"/model {session.server.model}")
    assert "context window 32,768 tokens" in said(session)


def test_switching_model_takes_the_new_models_profile(tmp_path):
    llama = "meta-llama/Llama-3.1-8B-Instruct"
    with FakeVLLM([Reply(content="Hi from Llama.")], served_models=[llama]) as server:
        config = Config()
        config.vllm.base_url = server.base_url
        front = PlainUI(stream_text=True, out=io.StringIO(), err=io.StringIO())
        s = Session(config, tmp_path, headless=False, front=front)
        try:
            s.start()
            assert s.client.model == server.model and "shipped:qwen3-coder" in s.client.profile.names
            dispatch(s, f"/model {llama}")
            assert s.client.model == llama and s.client.profile.names == ["shipped:llama-3"]
            s.agent.run("hello")
            server.assert_done()
            body = server.requests[-1]
            assert body["model"] == llama and body["temperature"] == 0.6 and "top_k" not in body
        finally:
            s.close()


def test_tokens_shows_where_the_context_goes(session):
    session.agent.run("hi")
    said(session)
    dispatch(session, "/tokens")
    out = said(session)
    assert "of 32,768 tokens" in out and "system prompt" in out and "tool definitions" in out
    assert "user messages" in out and "compaction starts at ~26,214 tokens" in out


def test_tokens_lists_agents_md_under_its_own_heading(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Run the tests with pytest -q.\n")
    with FakeVLLM([Reply(content="Hello.")]) as server:
        config = Config()
        config.vllm.base_url = server.base_url
        err = io.StringIO()
        s = Session(
            config, tmp_path, headless=False, front=PlainUI(stream_text=True, out=io.StringIO(), err=err)
        )
        try:
            s.start()
            s.agent.run("hi")
            err.truncate(0)
            dispatch(s, "/tokens")
            lines = err.getvalue().splitlines()
        finally:
            s.close()
    heading = next(i for i, ln in enumerate(lines) if "AGENTS.md" in ln)
    assert not lines[heading].startswith(" ") and "system prompt" in lines[heading], lines  # a heading
    assert lines[heading + 1].strip().startswith("AGENTS.md (~"), lines
    parts = [ln for ln in lines[:heading] if ln.startswith("  ") and "~" in ln]
    assert "assistant messages" in "".join(parts) and not any("AGENTS.md" in ln for ln in parts)


def test_approval_debug_reasoning_change_the_session(session):
    dispatch(session, "/approval ask")
    assert session.gate.mode == "ask" and "Approval mode: ask." in said(session)
    dispatch(session, "/approval sometimes")
    assert "Use /approval ask|auto-edit|full-auto" in said(session) and session.gate.mode == "ask"
    dispatch(session, "/debug on")
    assert any(isinstance(c, DebugLog) for c in session.consumers) and session.trace is not None
    assert session.client.trace is session.trace and session.trace.path.exists()
    dispatch(session, "/debug off")
    assert not any(isinstance(c, DebugLog) for c in session.consumers)
    dispatch(session, "/reasoning on")
    assert session.front.show_reasoning and session.config.ui.show_reasoning
    dispatch(session, "/reasoning")
    assert "reasoning display is on" in said(session)


def test_compact_summarizes_now(session):
    dispatch(session, "/compact")
    assert "Nothing to compact yet." in said(session)
    for text in ("hello", "hello again", "and once more"):
        session.agent.run(text)
    dispatch(session, "/compact")
    assert "Compacted the conversation" in said(session)
    assert len(session.server.auto_replied) == 1
    kinds = [getattr(e, "kind", None) for e in session.agent.conversation.entries]
    assert "summary" in kinds


def test_sandbox_reports_status_and_layers(session):
    dispatch(session, "/sandbox")
    out = said(session)
    status = session.toolbox.status
    if status.active:
        assert "bubblewrap" in out and all(layer in out for layer in status.layers)
    else:
        assert "OFF" in out
    assert all(f"not covered: {gap}" in out for gap in session.sandbox_gaps())
    assert all(f"missing layer - {layer}" in out for layer in status.missing)


def test_unknown_commands_suggest_and_unique_prefixes_expand():
    commands = load_all()
    with pytest.raises(UnknownCommand, match="Did you mean /model"):
        dispatch(None, "/modle x")
    assert expand_command("/tok", commands) == "/tokens"
    assert expand_command("/t", commands) == "/t"  # /tokens or /tools: ambiguous
    with pytest.raises(UnknownCommand) as listed:  # an ambiguous prefix lists what it could mean
        dispatch(None, "/d")
    assert "/debug /diff /doctor" in str(listed.value) and "Unknown command" not in str(listed.value)
    assert expand_command("/help", commands) == "/help"
    for name in ("model", "tokens", "approval", "debug", "reasoning", "compact", "sandbox", "help", "fc"):
        assert name in commands


def test_completions_for_commands_their_choices_and_paths(tmp_path):
    commands = load_all()
    assert [c[0] for c in command_completions("/to", commands)] == ["/tokens", "/tools"]
    assert [c[0] for c in command_completions("/approval a", commands)] == ["ask", "auto-edit"]
    assert [c[0] for c in command_completions("/reasoning ", commands)] == ["on", "off"]
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "setup.py").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".env").write_text("")
    assert path_completions(tmp_path, "") == ["src/", "setup.py"]
    assert path_completions(tmp_path, "src/") == ["src/pkg/", "src/app.py"]
    assert path_completions(tmp_path, "s") == ["src/", "setup.py"]
    assert path_completions(tmp_path, ".e") == [".env"]
    assert path_completions(tmp_path, "../") == []  # never outside the workspace


@pytest.mark.parametrize(
    "text, command",
    [
        ("/help", True),
        ("/model qwen", True),
        ("/etc/hosts is broken", False),
        ("fix /tmp use", False),
        ("/", False),
    ],
)
def test_what_counts_as_a_command(text, command):
    assert is_command(text) == command


def test_status_line_takes_extra_fields(session):
    session.add_status_field(lambda: "cache 42%")
    session.agent.run("hi")
    assert "· cache 42%]" in said(session)


def test_a_session_without_a_terminal_reads_one_message_per_line(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = [Reply(content="First answer."), Reply(content="Second answer.")]
    with FakeVLLM(script) as server:
        proc = subprocess.run(
            [
                sys.executable,
                str(root / "cli.py"),
                "--workspace",
                str(tmp_path),
                "--base-url",
                server.base_url,
            ],
            input="first task\n/approval\n/nosuch\nsecond task\n",
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != "DEBUG"},
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "First answer.\nSecond answer.\n"  # answers on stdout, nothing else
    assert "Approval mode: auto-edit." in proc.stderr and "Unknown command /nosuch." in proc.stderr
    assert "\x1b[" not in proc.stdout + proc.stderr
