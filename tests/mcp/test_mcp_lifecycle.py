"""A server's life in a session: timeouts, progress that keeps a call alive, Ctrl-C, a crash in the
middle of a call or while idle, the automatic restart and when it gives up, /mcp restart."""

import os
import signal
import threading

import pytest
from mcp_support import managers, stdio, wait_until


@pytest.fixture
def flaky(tmp_path):
    """A manager with the flaky server; the server's log is tmp_path/logs/flaky.log."""
    with managers(tmp_path) as make:
        yield lambda server=None, **config: make({"flaky": stdio("flaky", **(server or {}))}, **config)


def log_of(tmp_path):
    return (tmp_path / "logs" / "flaky.log").read_text()


def test_timeout_cancels_the_call_and_the_server_stays_usable(flaky, tmp_path):
    m = flaky(server={"timeout": 1})
    slow = m.call("mcp__flaky__wait", {"seconds": 30}, "c1")
    assert slow.kind == "error" and slow.tool_call_id == "c1"
    assert slow.value == (
        "wait on MCP server flaky did not answer within 1 s (mcp.servers.flaky.timeout) and was "
        "cancelled. Try a smaller request, or continue without this tool."
    )
    assert m.take_notices() == [
        (
            "warning",
            "MCP server flaky: wait did not answer within 1 s (mcp.servers.flaky.timeout) and was cancelled",
        )
    ]
    wait_until(lambda: "cancelled after a request to wait 30 s" in log_of(tmp_path))
    assert m.call("mcp__flaky__sleep", {"seconds": 0}).value == "slept 0.0"


def test_progress_keeps_a_call_alive_past_the_timeout_and_is_shown(flaky):
    m = flaky(server={"timeout": 1})
    shown = []
    # Six reports 0.4 s apart: 2.4 s in all, more than twice the timeout, never 1 s without news.
    result = m.call("mcp__flaky__work", {"steps": 6, "interval": 0.4}, on_output=shown.append)
    assert result.value == "worked 6 steps"
    assert shown == [f"progress {i}/6 ({i / 6:.0%}): step {i}\n" for i in range(1, 7)]


def test_progress_does_not_outlive_max_call_time_and_both_are_told_the_same(flaky):
    m = flaky(server={"timeout": 1}, max_call_time=2)
    result = m.call("mcp__flaky__work", {"steps": 50, "interval": 0.2})
    assert result.kind == "error"
    why = "kept reporting progress past mcp.max_call_time (2 s) and was cancelled"
    assert result.value.startswith(f"work on MCP server flaky {why}.")
    # The user reads the same story as the model (not "timed out after 1 s").
    assert m.take_notices() == [("warning", f"MCP server flaky: work {why}")]


def test_a_timeout_above_max_call_time_without_progress_is_a_plain_timeout(flaky):
    m = flaky(server={"timeout": 2}, max_call_time=1)
    result = m.call("mcp__flaky__wait", {"seconds": 30})
    why = "did not answer within 2 s (mcp.servers.flaky.timeout) and was cancelled"
    assert result.value.startswith(f"wait on MCP server flaky {why}.")
    assert m.take_notices() == [("warning", f"MCP server flaky: wait {why}")]


def test_progress_then_silence_is_told_as_such(flaky):
    m = flaky(server={"timeout": 1})
    result = m.call("mcp__flaky__work", {"steps": 1, "interval": 0.2, "then_wait": 30})
    why = "reported progress, then nothing for 1 s (mcp.servers.flaky.timeout) and was cancelled"
    assert result.value.startswith(f"work on MCP server flaky {why}.")
    assert m.take_notices() == [("warning", f"MCP server flaky: work {why}")]


def test_the_cancel_event_stops_a_call_and_tells_the_server(flaky, tmp_path):
    m = flaky()  # mcp.timeout is 60 s: only the cancel can end this call early
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    result = m.call("mcp__flaky__wait", {"seconds": 120}, "c9", cancel=cancel)
    assert result.kind == "error" and result.tool_call_id == "c9"
    assert result.value == (
        "Interrupted by the user before it finished: wait on MCP server flaky was cancelled "
        "(the server was told to stop)."
    )
    # The server got notifications/cancelled: its handler was interrupted, not left running.
    wait_until(lambda: "cancelled after a request to wait 120 s" in log_of(tmp_path))
    assert m.call("mcp__flaky__sleep", {"seconds": 0}).value == "slept 0.0"


def test_a_crash_mid_call_restarts_the_server_once(flaky, tmp_path):
    m = flaky()
    crash = m.call("mcp__flaky__crash", {}, "c2")
    assert crash.kind == "error" and crash.tool_call_id == "c2"
    assert crash.value.startswith(
        "MCP server flaky stopped while running crash (the server process exited). vllm-bot is "
        "restarting it: its tools should work again in a few seconds."
    )
    assert "rest of this session" not in crash.value
    # The next call waits for the restart instead of failing.
    assert m.call("mcp__flaky__sleep", {"seconds": 0}).value == "slept 0.0"
    notices = [message for _, message in m.take_notices()]
    assert notices[0].startswith("MCP server flaky stopped (the server process exited; its stderr ends: ")
    assert "flaky: exiting in the middle of a call" in notices[0] and notices[0].endswith("; restarting it")
    assert "flaky: exiting in the middle of a call" in log_of(tmp_path)  # the log survives the restart

    again = m.call("mcp__flaky__crash", {})  # a second stop soon after: no second automatic restart
    assert "stays stopped unless the user restarts it (/mcp restart flaky)" in again.value
    wait_until(lambda: m.snapshot()[0].status == "crashed")
    after = m.call("mcp__flaky__sleep", {"seconds": 0})
    assert after.value.startswith("MCP server flaky has stopped (the server process exited")
    assert "(/mcp restart flaky)" in after.value
    said = []
    wait_until(lambda: said.extend(m.take_notices()) or any("stopped again" in text for _, text in said))
    assert any(text.endswith("; not restarting it (/mcp restart flaky tries again)") for _, text in said)

    assert m.restart("flaky") and m.wait(60)
    assert m.call("mcp__flaky__sleep", {"seconds": 0}).value == "slept 0.0"


def test_a_server_killed_while_idle_is_noticed_and_restarted(flaky):
    m = flaky()
    first = m.call("mcp__flaky__pid", {}).value
    os.kill(int(first), signal.SIGKILL)
    # Nobody calls anything: the manager notices the exit on its own and restarts the server.
    wait_until(lambda: any("restarting it" in message for _, message in m.take_notices()))
    assert m.wait(60) and m.snapshot()[0].status == "connected"
    second = m.call("mcp__flaky__pid", {}).value
    assert second != first

    os.kill(int(second), signal.SIGKILL)  # again within a minute: it stays stopped
    wait_until(lambda: m.snapshot()[0].status == "crashed")
    assert m.snapshot()[0].error.startswith("the server process exited")


def test_restart_works_on_a_connected_server_and_on_a_crashed_one(flaky):
    m = flaky()
    first = m.call("mcp__flaky__pid", {}).value
    assert m.restart("flaky")  # no failed call needed
    assert not m.restart("flaky")  # it is starting: one restart at a time
    assert m.wait(60) and m.snapshot()[0].status == "connected"
    assert m.call("mcp__flaky__pid", {}).value != first
    assert not m.restart("nope")
