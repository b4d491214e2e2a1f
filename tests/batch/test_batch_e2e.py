"""`vllm-bot batch` end to end: real agent processes, real git worktrees and a real check, against the
fake server answering every task's conversation at once."""

import json
import signal
import time

from batch_support import (
    cli,
    fix_task,
    fixing,
    giving_up,
    key,
    make_repo,
    rows,
    stalling,
    start,
    worktrees,
    write_config,
    write_tasks,
)

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


def test_several_workers_a_crash_a_timeout_and_a_failure_do_not_stop_the_others(tmp_path):
    repo = make_repo(tmp_path / "repo")
    plain = tmp_path / "plain"  # a workspace without git: copied
    plain.mkdir()
    (plain / "app.py").write_text((repo / "app.py").read_text())
    tasks = [
        fix_task("ok-1"),
        fix_task("ok-2", workspace="plain"),
        fix_task("gives-up"),
        fix_task("crashes"),
        fix_task("slow"),
        fix_task("bad-setup", setup="exit 7"),
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    # commands unsandboxed, so the crashing task's command can kill its own agent (like an OOM kill)
    config = write_config(tmp_path / "config.json", {"sandbox": {"mode": "off"}})
    conversations = {
        key("ok-1"): fixing(),
        key("ok-2"): fixing(),
        key("gives-up"): giving_up(),
        key("crashes"): [Reply(calls=[Call("exec", {"command": "kill -9 $PPID"})])],
        key("slow"): stalling(),
    }
    with FakeVLLM(conversations=conversations, prompt_tokens_details=True, metrics={}) as server:
        proc = cli(
            "batch",
            str(tmp_path / "tasks.jsonl"),
            "--base-url",
            server.base_url,
            "--config",
            str(config),
            "--workers",
            "4",
            "--time-budget",
            "30",  # the stalled task's whole run; the others take a few seconds, more on a loaded machine
            "--output-format",
            "json",
        )
        server.assert_done()
    assert proc.returncode == 1, proc.stderr  # some tasks failed
    summary = json.loads(proc.stdout)
    results = {r["id"]: r for r in rows(tmp_path / "tasks-batch" / "results.jsonl")}
    assert set(results) == {t["id"] for t in tasks} and summary["summary"]["tasks"] == 6
    status = {task_id: r["status"] for task_id, r in results.items()}
    assert status == {
        "ok-1": "passed",
        "ok-2": "passed",
        "gives-up": "failed",
        "crashes": "crashed",
        "slow": "timeout",
        "bad-setup": "setup_failed",
    }
    ok = results["ok-1"]
    assert (ok["iterations"], ok["tool_calls"], ok["malformed_calls"], ok["mode"], ok["check_passed"]) == (
        3,
        2,
        0,
        "native",
        True,
    )
    assert ok["prompt_tokens"] > 0 and ok["completion_tokens"] > 0 and ok["cached_tokens"] > 0
    assert results["slow"]["exit_reason"] == "time_budget" and results["gives-up"]["check_passed"] is False
    assert (repo / "app.py").read_text().endswith("a - b\n")  # the source workspace is never touched
    task_dir = tmp_path / "tasks-batch" / "tasks" / "ok-1"
    assert "+    return a + b" in (task_dir / "changes.diff").read_text()
    assert list((task_dir / "sessions").glob("*.jsonl")) and list((task_dir / "traces").glob("*.jsonl"))
    assert not (task_dir / "workspace").exists() and worktrees(repo) == [f"worktree {repo}"]
    assert summary["server"]["cache_hit_rate"] > 0 and summary["not_run"] == []


def test_the_system_prompt_is_the_same_bytes_for_every_task(tmp_path):
    """vLLM's prefix cache needs it: no task text and no per-copy workspace path in it."""
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("a"), fix_task("b"), fix_task("c")])
    conversations = {key(t): fixing() for t in "abc"}
    with FakeVLLM(conversations=conversations) as server:
        proc = cli(
            "batch",
            str(tmp_path / "tasks.jsonl"),
            "--base-url",
            server.base_url,
            "--workers",
            "3",
            "--no-trace",
        )
        server.assert_done()
        prompts = {json.dumps([r["messages"][0], r.get("tools")]) for r in server.requests}
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 9 and len(prompts) == 1
    system = server.requests[0]["messages"][0]["content"]
    assert (
        "Workspace: the current directory." in system and str(tmp_path) not in system and "[a]" not in system
    )
    assert "3/3 passed" in proc.stdout and "batch results" in proc.stdout


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes_without_redoing_or_losing_a_task(tmp_path):
    repo = make_repo(tmp_path / "repo")
    quick, stuck = ["q1", "q2", "q3"], ["s1", "s2"]
    tasks_file = write_tasks(tmp_path / "tasks.jsonl", [fix_task(t) for t in stuck + quick])
    results = tmp_path / "tasks-batch" / "results.jsonl"
    args = ["batch", str(tasks_file), "--workers", "3", "--output-format", "json"]
    first = {**{key(t): fixing() for t in quick}, **{key(t): stalling() for t in stuck}}
    with FakeVLLM(conversations=first) as server:
        batch = start(*args, "--base-url", server.base_url)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (results.exists() and len(rows(results)) == len(quick)):
            time.sleep(0.5)
        assert results.exists() and len(rows(results)) == len(quick), (
            batch.stderr.read() if batch.poll() is not None else ""
        )
        batch.send_signal(signal.SIGINT)
        out, err = batch.communicate(timeout=120)
        served_first = {k: list(v) for k, v in server.conversations.served.items()}
    assert batch.returncode == 3, err
    assert "interrupted" in err and json.loads(out)["not_run"] == stuck
    before = results.read_bytes()
    assert before.endswith(b"\n") and {r["id"] for r in rows(results)} == set(quick)
    assert worktrees(repo) == [f"worktree {repo}"]  # the stopped tasks' copies and registrations are gone
    assert all(served_first[key(t)] == [0] for t in stuck)

    with FakeVLLM(
        conversations={key(t): fixing() for t in stuck}
    ) as server:  # the quick ones are not scripted
        again = start(*args, "--base-url", server.base_url)
        out, err = again.communicate(timeout=600)
        server.assert_done()  # each stuck task ran once from the start; no quick task asked again
    assert again.returncode == 0, err
    after = results.read_bytes()
    assert after.startswith(before)
    final = rows(results)
    assert sorted(r["id"] for r in final) == sorted(quick + stuck) and all(r["passed"] for r in final)
    assert json.loads(out)["summary"]["tasks"] == 5
