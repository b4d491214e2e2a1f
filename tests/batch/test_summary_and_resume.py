"""The summary tells why each unsolved task stopped and gives the batch's wall time and tokens; a
rerun with nothing left to do needs no server; a corrupt results file is one clean error; `--yes`."""

import json

from batch_support import cli, fix_task, giving_up, key, make_repo, rows, write_tasks

from vllm_bot.batch.report import outcome, summarize, summary_lines
from vllm_bot.batch.tasks import load_tasks
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

UNREACHABLE = "http://127.0.0.1:9/v1"


def looping() -> list[Reply]:
    """The same call again and again: the loop guard stops it at the fifth."""
    return [Reply(calls=[Call("read", {"path": "app.py"})]) for _ in range(5)]


def test_the_summary_tells_a_loop_guard_stop_from_a_failed_check_with_wall_time_and_tokens(tmp_path):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("loops"), fix_task("gives-up")])
    conversations = {key("loops"): looping(), key("gives-up"): giving_up()}
    with FakeVLLM(conversations=conversations) as server:
        text = cli("batch", str(tmp_path / "tasks.jsonl"), "--base-url", server.base_url, "--no-trace")
        server.assert_done()
    assert text.returncode == 1, text.stderr
    results = {r["id"]: r for r in rows(tmp_path / "tasks-batch" / "results.jsonl")}
    assert results["loops"]["exit_reason"] == "loop" and results["gives-up"]["check_passed"] is False
    assert "0/2 passed (0%) · 1 check_failed, 1 loop_guard" in text.stdout
    table = {
        line.split()[0]: line.split()[1]
        for line in text.stdout.splitlines()
        if line[:5] in ("loops", "gives")
    }
    assert table == {"loops": "loop_guard", "gives-up": "check_failed"}
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in results.values())
    assert f"(this run) · {tokens:,} tokens in all" in text.stdout and "wall time " in text.stdout
    assert "loop_guard" in text.stderr and "check_failed" in text.stderr  # the live lines say it too

    summary = summarize(list(results.values()))
    assert summary["outcomes"] == {"loop_guard": 1, "check_failed": 1} and summary["total_tokens"] == tokens


def test_outcomes_name_each_limit_and_keep_other_statuses():
    cases = [
        ({"status": "passed"}, "passed"),
        ({"status": "failed", "exit_reason": "loop", "check_passed": False}, "loop_guard"),
        ({"status": "failed", "exit_reason": "max_iterations"}, "max_iterations"),
        ({"status": "failed", "exit_reason": "done", "check_passed": False}, "check_failed"),
        ({"status": "failed", "exit_reason": "done", "check_passed": None}, "failed"),
        ({"status": "timeout", "exit_reason": "time_budget"}, "timeout"),
        ({"status": "error", "exit_reason": "error"}, "error"),
    ]
    assert [outcome(row) for row, _ in cases] == [want for _, want in cases]
    lines = summary_lines(summarize([row for row, _ in cases]), {}, wall_seconds=125)
    assert "wall time 2m05s (this run) · 0 tokens in all" in lines


def finished(tmp_path, passed=True):
    """A tasks file whose one task already has its result."""
    make_repo(tmp_path / "repo")
    path = write_tasks(tmp_path / "tasks.jsonl", [fix_task("a")])
    out = tmp_path / "tasks-batch"
    out.mkdir()
    row = {"id": "a", "status": "passed" if passed else "failed", "passed": passed}
    row["task_hash"] = load_tasks(path)[0].fingerprint()
    (out / "results.jsonl").write_text(json.dumps(row) + "\n")
    return path, out / "results.jsonl"


def test_a_batch_with_nothing_left_to_do_needs_no_server(tmp_path):
    path, results = finished(tmp_path)
    proc = cli("batch", str(path), "--base-url", UNREACHABLE, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert f"nothing to do: every task has a result in {results}" in proc.stderr
    assert "1/1 passed" in proc.stdout and "Cannot reach" not in proc.stderr
    failed, _ = finished(tmp_path / "second", passed=False)
    again = cli("batch", str(failed), "--base-url", UNREACHABLE, "--output-format", "json")
    assert again.returncode == 1 and json.loads(again.stdout)["summary"]["passed"] == 0  # 1: a task failed


def test_a_corrupt_line_in_the_middle_of_the_results_is_one_clean_error(tmp_path):
    path, results = finished(tmp_path)
    results.write_text(results.read_text() + "garbage\n" + '{"id":"b"}\n')
    proc = cli("batch", str(path), "--base-url", UNREACHABLE)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"vllm-bot: {results} line 2: not a task result; fix or remove that line"
    ]


def test_yes_is_approval_full_auto(tmp_path):
    import argparse

    from vllm_bot.batch.cli import add_arguments, settings_from
    from vllm_bot.config import load_config

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = load_config(None, env={})
    for argv, approval in [
        ([], "full-auto"),
        (["--approval", "ask"], "ask"),
        (["--approval", "ask", "--yes"], "full-auto"),
    ]:
        args = parser.parse_args(["tasks.jsonl", *argv])
        assert settings_from(args, tmp_path, config).approval == approval
