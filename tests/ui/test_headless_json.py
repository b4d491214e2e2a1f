"""Headless `-p` with --output-format json / stream-json through `python cli.py` and the fake server:
stdout is valid against the documented schema (resources/output-schema.json) in every outcome."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from vllm_bot.calls import Usage
from vllm_bot.events import IterationStarted, UsageReported
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.testing.wire import error_body
from vllm_bot.ui.json_out import STREAM_OUTPUT_LIMIT, ResultCollector

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "src/vllm_bot/resources/output-schema.json").read_text())
RESULT = jsonschema.Draft202012Validator(SCHEMA)
LINE = jsonschema.Draft202012Validator({**SCHEMA, "$ref": "#/$defs/stream_line"})
ANSWER = "Fixed add(): it subtracted; now add(2, 3) == 5."


def cli(workspace, base_url, *args):
    cmd = [sys.executable, str(ROOT / "cli.py"), "--workspace", str(workspace), "--base-url", base_url, *args]
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
    return cmd, env


def run(workspace, base_url, *args):
    cmd, env = cli(workspace, base_url, *args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return ws


def task_script():
    return [
        Reply(content="Reading.", reasoning="Look first.", calls=[Call("read", {"path": "app.py"})]),
        Reply(calls=[Call("edit", {"path": "app.py", "oldText": "a - b", "newText": "a + b"})]),
        Reply(calls=[Call("exec", {"command": "python3 -c 'import app; print(app.add(2, 3))'"})]),
        Reply(content=ANSWER),
    ]


def test_json_is_one_valid_object_with_calls_usage_and_exit(workspace):
    with FakeVLLM(task_script()) as server:
        proc = run(workspace, server.base_url, "-p", "fix add", "--yes", "--output-format", "json")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    result = json.loads(proc.stdout)
    RESULT.validate(result)
    assert (result["answer"], result["exit_reason"], result["exit_code"]) == (ANSWER, "done", 0)
    assert result["iterations"] == 4 and result["model"] == server.model and result["function_calling"]
    calls = result["tool_calls"]
    assert [c["name"] for c in calls] == ["read", "edit", "exec"] and all(c["ok"] for c in calls)
    assert calls[1]["summary"].startswith("Edited app.py") and calls[2]["summary"].startswith("Exit code 0")
    assert calls[2]["arguments"] == {"command": "python3 -c 'import app; print(app.add(2, 3))'"}
    assert result["usage"]["prompt_tokens"] > 0 and result["usage"]["completion_tokens"] > 0
    assert result["error"] is None


def test_stream_json_is_one_valid_event_per_line_ending_with_the_result(workspace):
    with FakeVLLM(task_script()) as server:
        proc = run(workspace, server.base_url, "-p", "fix add", "--yes", "--output-format", "stream-json")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    for line in lines:
        LINE.validate(line)
    types = [line["type"] for line in lines]
    assert types[0] == "session_started" and types[-2:] == ["task_finished", "result"]
    assert types.count("tool_call_started") == 3 and types.count("tool_call_finished") == 3
    assert types.count("iteration_started") == 4 and "reasoning_delta" in types
    assert types.count("telemetry_reported") == 4  # documented and in the schema, checked strictly
    telemetry = SCHEMA["$defs"]["event_telemetry_reported"]["properties"]
    assert all(set(line) == set(telemetry) for line in lines if line["type"] == "telemetry_reported")
    deltas = [line["text"] for line in lines if line["type"] == "text_delta"]
    assert "".join(deltas).endswith(ANSWER)
    assert "".join(line["text"] for line in lines if line["type"] == "tool_output") == "5\n"
    assert lines[-1]["answer"] == ANSWER and lines[-1]["exit_code"] == 0


def test_a_refused_call_is_reported_and_the_task_goes_on(workspace):
    script = [Reply(calls=[Call("exec", {"command": "touch made"})]), Reply(content="Could not run it.")]
    with FakeVLLM(script) as server:
        proc = run(workspace, server.base_url, "-p", "run it", "--output-format", "json")
        server.assert_done()
    result = json.loads(proc.stdout)
    RESULT.validate(result)
    assert proc.returncode == 0 and result["answer"] == "Could not run it."
    (call,) = result["tool_calls"]
    assert not call["ok"] and call["kind"] == "error" and "nobody can approve it" in call["summary"]
    assert not (workspace / "made").exists()


def test_a_limit_stops_with_exit_3_and_a_valid_result(workspace):
    script = [Reply(calls=[Call("read", {"path": "app.py"})])]
    with FakeVLLM(script) as server:
        proc = run(
            workspace, server.base_url, "-p", "loop", "--max-iterations", "1", "--output-format", "json"
        )
    result = json.loads(proc.stdout)
    RESULT.validate(result)
    assert proc.returncode == 3 and result["exit_code"] == 3 and result["exit_reason"] == "max_iterations"
    assert "Stopped after 1 iteration without" in result["answer"]
    assert any(n["level"] == "error" for n in result["notices"])


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_an_unreachable_server_still_prints_a_valid_result_with_exit_1(workspace, fmt):
    proc = run(workspace, "http://127.0.0.1:9/v1", "-p", "hi", "--output-format", fmt)
    assert proc.returncode == 1
    last = json.loads(proc.stdout.splitlines()[-1])
    (RESULT if fmt == "json" else LINE).validate(last)
    assert last["exit_code"] == 1 and last["exit_reason"] == "error"
    assert "Cannot reach the vLLM server at http://127.0.0.1:9/v1" in last["error"]
    assert "vllm serve" in proc.stderr and "Traceback" not in proc.stderr


def test_output_format_needs_a_headless_task(workspace):
    proc = run(workspace, "http://127.0.0.1:9/v1", "--output-format", "json")
    assert proc.returncode == 2 and "add -p TASK" in proc.stderr
    proc = run(workspace, "http://127.0.0.1:9/v1", "-p", "x", "--output-format", "yaml")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_stream_json_does_not_copy_an_output_flood(workspace):
    flood = "head -c 3000000 /dev/zero | tr '\\0' 'a' | fold -w 100"
    script = [Reply(calls=[Call("exec", {"command": flood})]), Reply(content="Lots of a.")]
    with FakeVLLM(script) as server:
        proc = run(workspace, server.base_url, "-p", "flood", "--yes", "--output-format", "stream-json")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    streamed = "".join(line["text"] for line in lines if line["type"] == "tool_output")
    assert STREAM_OUTPUT_LIMIT <= len(streamed) < STREAM_OUTPUT_LIMIT + 500
    assert streamed.endswith("output as the model sees it ...]\n")
    assert len(proc.stdout) < 400_000  # the model-facing result is capped too (tools.output_limit)


def processes_with(argument):
    """Pids of processes whose command line has `argument` (the sandbox hides pids, not /proc here)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and argument in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_sigint_stops_the_running_command_and_reports_interrupted(workspace):
    token = f"{300 + os.getpid() % 1000}.{time.time_ns() % 1000:03d}"  # a sleep only this test runs
    script = [Reply(calls=[Call("exec", {"command": f"sleep {token} & echo started; wait"})])]
    with FakeVLLM(script) as server:
        cmd, env = cli(workspace, server.base_url, "-p", "run", "--yes", "--output-format", "stream-json")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        lines = []
        for raw in proc.stdout:
            lines.append(json.loads(raw))
            if lines[-1]["type"] == "tool_output" and "started" in lines[-1]["text"]:
                # the background `sleep` may still be a forked bash for a moment: wait until it runs
                seen = time.monotonic() + 10
                while not processes_with(token.encode()) and time.monotonic() < seen:
                    time.sleep(0.02)
                assert processes_with(token.encode()), "the test cannot see the command's child"
                proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        stderr = proc.stderr.read()
    assert code == 3, stderr
    for line in lines:
        LINE.validate(line)
    finished = next(line for line in lines if line["type"] == "tool_call_finished")
    assert "Interrupted by the user after" in finished["result"]["value"]
    assert "the command was killed" in finished["result"]["value"]
    assert lines[-1]["type"] == "result" and lines[-1]["exit_reason"] == "interrupted"
    deadline = time.monotonic() + 10
    while processes_with(token.encode()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes_with(token.encode()), "the command's background child survived SIGINT"
    assert "vllm-bot: interrupted" in stderr


def test_json_after_a_server_error_reports_the_iterations_and_tokens_so_far(workspace):
    refusal = error_body("this request is not acceptable")
    script = [Reply(calls=[Call("read", {"path": "app.py"})]), Reply(status=400, error=refusal)]
    with FakeVLLM(script) as server:
        proc = run(workspace, server.base_url, "-p", "fix add", "--yes", "--output-format", "json")
        server.assert_done()
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    RESULT.validate(result)
    assert result["exit_reason"] == "error" and "not acceptable" in result["error"]
    assert result["iterations"] == 2
    assert result["usage"]["prompt_tokens"] > 0 and result["usage"]["completion_tokens"] > 0


def test_a_result_after_ctrl_c_outside_the_loop_counts_what_the_task_did():
    """run_headless' KeyboardInterrupt path: no task_finished event, the result still counts."""
    collector = ResultCollector()
    used = Usage(prompt_tokens=900, completion_tokens=40)
    for event in (IterationStarted(1, 50), UsageReported(used, used, 0.5), IterationStarted(2, 50)):
        collector(event)
    result = collector.result(error="interrupted by the user", exit_code=3, reason="interrupted")
    RESULT.validate(result)
    assert result["iterations"] == 2 and result["usage"]["prompt_tokens"] == 900


@pytest.mark.parametrize("debug", [False, True])
def test_stream_json_has_debug_events_only_with_debug(workspace, debug):
    with FakeVLLM(task_script()) as server:
        args = ["-p", "fix add", "--yes", "--output-format", "stream-json", *(["--debug"] if debug else [])]
        proc = run(workspace, server.base_url, *args)
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    types = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert ("debug" in types) is debug
