"""End to end through `python cli.py -p` and the real openai SDK against the fake vLLM server, in
every server mode: the same task changes the same files (issue 2)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

ROOT = Path(__file__).resolve().parents[2]
APP = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def sent_text(body):
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def expect_in_last(*needles):
    def check(body):
        text = sent_text(body)
        for needle in needles:
            assert needle in text, f"{needle!r} not in the request"

    return check


def task_script():
    return [
        Reply(content="Let me look at the code.", calls=[Call("read", {"path": "app.py"})]),
        Reply(
            calls=[Call("edit", {"path": "app.py", "oldText": "return a - b", "newText": "return a + b"})],
            expect=expect_in_last("return a - b", "1→def add"),
        ),
        Reply(
            calls=[Call("exec", {"command": "python3 -c 'import app; print(app.add(2, 3))'"})],
            expect=expect_in_last("+    return a + b"),
        ),
        Reply(content="Fixed add(): it returned a - b; now add(2, 3) == 5.", expect=expect_in_last("5")),
    ]


def run_cli(workspace, server, *args, env=None, stdin=None):
    cmd = [
        sys.executable,
        str(ROOT / "cli.py"),
        "--workspace",
        str(workspace),
        "--base-url",
        server.base_url,
        *args,
    ]
    full_env = {**os.environ, "XDG_STATE_HOME": str(workspace.parent / "state"), **(env or {})}
    full_env.pop("DEBUG", None)
    full_env.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=full_env, input=stdin)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.py").write_text(APP)
    return ws


MODES = {
    "native": dict(mode="parser"),
    "no-parser-fallback": dict(mode="noparser"),
    "parser-but-leaked-hermes": dict(mode="leak", leak_format="hermes"),
    "parser-but-leaked-qwen3-xml": dict(mode="leak", leak_format="qwen3_xml"),
    "no-parser-model-writes-hermes": dict(mode="noparser", text_format="hermes"),
    "no-parser-model-writes-qwen3-xml": dict(mode="noparser", text_format="qwen3_xml"),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_task_completes_in_every_server_mode(workspace, mode):
    with FakeVLLM(task_script(), **MODES[mode]) as server:
        proc = run_cli(workspace, server, "-p", "Fix add() in app.py and check it", "--yes")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Fixed add(): it returned a - b; now add(2, 3) == 5."
    assert (workspace / "app.py").read_text() == FIXED
    if mode.startswith("no-parser"):
        assert len(server.rejected) == 1 and "--enable-auto-tool-choice" in proc.stderr
        assert all("tools" not in body for body in server.requests)
    else:
        assert all(body.get("tools") for body in server.requests)


def test_function_calling_disabled_by_flag_uses_text_protocol(workspace):
    with FakeVLLM(task_script()) as server:
        proc = run_cli(workspace, server, "-p", "Fix add()", "--yes", "--no-function-calling")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "app.py").read_text() == FIXED
    first = server.requests[0]
    assert "tools" not in first and "## Available Tools" in first["messages"][0]["content"]
    assert "[Tool result] read succeeded" in sent_text(server.requests[1])


@pytest.mark.parametrize(
    "mode, detected",
    [
        ("native", "Function calling format detected: 1 calls"),
        ("no-parser-fallback", "Tool calls found: 1 (text-based parsing"),
    ],
)
def test_debug_shows_iterations_detection_path_and_keeps_a_redacted_trace(workspace, mode, detected):
    with FakeVLLM(task_script(), api_key="sk-very-secret-key", **MODES[mode]) as server:
        proc = run_cli(
            workspace,
            server,
            "-p",
            "Fix add()",
            "--yes",
            "--api-key",
            "sk-very-secret-key",
            env={"DEBUG": "1"},
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    for line in (
        "[DEBUG] Iteration 1",
        "[DEBUG] Iteration 4",
        f"[DEBUG] {detected}",
        "[DEBUG] Tokens: prompt",
    ):
        assert line in proc.stderr
    if mode == "no-parser-fallback":
        assert "[DEBUG] Function calling off (text fallback)" in proc.stderr
    traces = list((workspace / ".vllm-bot" / "traces").glob("trace-*.jsonl"))
    assert len(traces) == 1 and str(traces[0]) in proc.stderr
    raw = traces[0].read_text()
    assert "sk-very-secret-key" not in raw and "sk-very-secret-key" not in proc.stderr
    kinds = {json.loads(line)["kind"] for line in raw.splitlines()}
    assert {"request", "chunk"} <= kinds
    # the state dir keeps itself out of git status
    assert (workspace / ".vllm-bot" / ".gitignore").read_text().strip().endswith("*")


def test_unreachable_server_fails_fast_with_exit_1(workspace):
    class Gone:
        base_url = "http://127.0.0.1:9/v1"

    proc = run_cli(workspace, Gone, "-p", "anything")
    assert proc.returncode == 1
    assert "http://127.0.0.1:9/v1" in proc.stderr and "vllm serve" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_max_iterations_exits_3_with_progress(workspace):
    script = [Reply(calls=[Call("read", {"path": "app.py", "offset": i + 1})]) for i in range(2)]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "loop", "--max-iterations", "2")
        server.assert_done()
    assert proc.returncode == 3
    assert "Stopped after 2 iterations" in proc.stderr and "2 read calls" in proc.stderr


def test_three_malformed_replies_stop_the_task(workspace):
    bad = Reply(calls=[Call("frobnicate", {"x": 1})])
    with FakeVLLM([bad, bad, bad]) as server:
        proc = run_cli(workspace, server, "-p", "do it")
        server.assert_done()
    assert proc.returncode == 3
    assert "malformed" in proc.stderr and "unknown tool 'frobnicate'" in proc.stderr
    assert "Available tools: read, write, edit, exec" in sent_text(server.requests[1])


def test_task_from_stdin(workspace):
    with FakeVLLM([Reply(content="Hello!", expect=expect_in_last("task text from stdin"))]) as server:
        proc = run_cli(workspace, server, "-p", "-", stdin="task text from stdin\n")
        server.assert_done()
    assert proc.returncode == 0 and proc.stdout.strip() == "Hello!"


def test_headless_without_yes_refuses_commands_but_continues(workspace):
    script = [
        Reply(calls=[Call("exec", {"command": "touch made-by-exec"})]),
        Reply(content="I could not run it.", expect=expect_in_last("nobody can approve it")),
    ]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "run it")
        server.assert_done()
    assert proc.returncode == 0 and not (workspace / "made-by-exec").exists()
