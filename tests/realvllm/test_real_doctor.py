"""`cli.py doctor` against the three real servers: every verdict must be true of the server it checked.
The model profile forces the replies (the doctor sends its probes with the profile's settings)."""

from __future__ import annotations

from pathlib import Path

from agent_runs import check, forced, hermes, reasoning_then, run_doctor, text_call

README_CALL = {"path": "README.md"}
NATIVE_FLAGS = "--enable-auto-tool-choice"


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def statuses(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


def test_doctor_on_the_hermes_server_finds_native_calls(server_a, tmp_path):
    code, report, stderr = run_doctor(workspace(tmp_path), server_a, forced(hermes("read", README_CALL)))

    assert code == 0 and report["exit_code"] == 0 and report["mode"] == "native", stderr
    assert report["server"]["version"] == "0.32.0" and report["server"]["max_model_len"] == 8192
    seen = statuses(report)
    assert seen["health"] == seen["models"] == seen["tokenize"] == seen["usage"] == "pass", report
    assert seen["tool_call"] == seen["tool_call_stream"] == "pass"
    assert check(report, "tool_call_stream")["data"]["kind"] == "native"
    # The forced reply holds one call: that the model did not make two is the truth.
    assert seen["parallel_calls"] == "warn" and check(report, "parallel_calls")["data"]["calls"] == 1
    assert seen["text_protocol"] == "skip"
    assert (
        NATIVE_FLAGS not in report["suggested_flags"]
        and "--reasoning-parser" not in report["suggested_flags"]
    )


def test_doctor_on_the_server_without_flags_finds_the_400_and_the_text_protocol(server_b, tmp_path):
    code, report, stderr = run_doctor(workspace(tmp_path), server_b, forced(text_call("read", README_CALL)))

    assert code == 0 and report["mode"] == "text", stderr
    row = check(report, "tool_call_stream")
    assert row["status"] == "fail" and row["data"]["kind"] == "refused"
    assert '"auto" tool choice requires --enable-auto-tool-choice' in row["detail"]
    # The tiny model's family is not in the table: no flags to copy with a placeholder parser, but the
    # fix names the flags and a note lists the parsers to choose from (issue 35, item 7).
    assert report["family"] is None and report["suggested_flags"] == []
    assert NATIVE_FLAGS in row["fix"] and "--tool-call-parser" in row["fix"]
    assert any("hermes" in note for note in report["notes"]), report["notes"]
    assert check(report, "text_protocol")["status"] == "pass"
    assert statuses(report)["parallel_calls"] == "skip"


def test_doctor_on_the_reasoning_server_finds_reasoning_apart_and_native_calls(server_c, tmp_path):
    profile = reasoning_then(server_c, hermes("read", README_CALL))
    code, report, stderr = run_doctor(workspace(tmp_path), server_c, profile)

    assert code == 0 and report["mode"] == "native", stderr
    assert check(report, "tool_call_stream")["data"]["kind"] == "native"
    row = check(report, "reasoning")
    assert row["status"] == "pass" and row["data"]["fields"] == ["reasoning"] and not row["data"]["leak"], row
    assert (
        "--reasoning-parser" not in report["suggested_flags"]
        and NATIVE_FLAGS not in report["suggested_flags"]
    )
