"""The doctor's MCP rows (doctor/mcp_checks.py): status, detail and fix for each kind of server row."""

from vllm_bot.cliargs import program_name
from vllm_bot.doctor.mcp_checks import mcp_checks


def row(**kw):
    base = {
        "name": "srv",
        "target": "stdio: srv",
        "status": "connected",
        "error": None,
        "tools": [{"name": "mcp__srv__a"}],
        "skipped": [],
        "warnings": [],
        "tokens": 40,
        "log": None,
    }
    return {**base, **kw}


def test_a_failed_server_points_at_its_log_only_when_the_log_has_something():
    [empty] = mcp_checks([row(status="failed", error="command not found: srv")])
    assert empty.status == "warn" and "log" not in empty.fix
    assert empty.fix.startswith(f"run `{program_name()} mcp list`")
    [logged] = mcp_checks([row(status="failed", error="exited", log="/w/.vllm-bot/mcp/srv.log")])
    assert logged.fix.startswith(
        f"see its log (/w/.vllm-bot/mcp/srv.log), or run `{program_name()} mcp list`"
    )


def test_a_connected_server_with_a_warning_is_a_warning_with_its_first_line():
    [check] = mcp_checks(
        [row(warnings=["it wrote a line on stdout that is not an MCP message (ignored)"], log="/l")]
    )
    assert check.status == "warn"
    assert check.detail == (
        "connected, 1 tool, ~40 prompt tokens; it wrote a line on stdout that is not an MCP message (ignored)"
    )
    assert check.fix.startswith("see its log (/l)")


def test_a_healthy_server_passes_without_a_fix():
    [check] = mcp_checks([row()])
    assert (check.status, check.fix) == ("pass", "")
