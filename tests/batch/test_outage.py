"""A server outage is not a task's result, and a batch killed hard leaves no agent behind: the fake server stopped mid-batch (its connections cut, as
when vLLM dies) pauses the queue, and the batch resumes when a server answers on the same port; one
that stays away stops the batch with exit 1 and the tasks left for a rerun. An agent that never got
a reply is an error even when its check passes on the untouched workspace."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from batch_support import (
    CLI,
    env,
    fix_task,
    fixing,
    key,
    make_repo,
    rows,
    stalling,
    write_config,
    write_tasks,
)

from vllm_bot.testing.fake_vllm import FakeVLLM

IDS = [f"t{i}" for i in range(6)]
# agents give up on a lost server quickly, so the test does not wait out the default retries
FAST_FAILING = {"vllm": {"retry_attempts": 2, "retry_base": 0.1}}


def start_batch(tmp_path, base_url, *extra):
    log = (tmp_path / "stderr.log").open("w")
    args = [sys.executable, str(CLI), "batch", str(tmp_path / "tasks.jsonl"), "--base-url", base_url]
    args += ["--config", str(tmp_path / "config.json"), "--workers", "2", "--no-trace"]
    args += ["--output-format", "json", *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env=env())


def wait_for(condition, what, proc, seconds=300):
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, f"the batch ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.2)


def six_tasks(tmp_path):
    """Six fixing tasks, agents that give up on a lost server fast, and a running server: (results
    file, conversations, the server, its port)."""
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task(t) for t in IDS])
    write_config(tmp_path / "config.json", FAST_FAILING)
    conversations = {key(t): fixing() for t in IDS}
    server = FakeVLLM(conversations=conversations).start()
    return (
        tmp_path / "tasks-batch" / "results.jsonl",
        conversations,
        server,
        int(server.url.rsplit(":", 1)[1]),
    )


def test_an_outage_pauses_the_queue_and_the_batch_resumes_when_the_server_is_back(tmp_path):
    results, conversations, first, port = six_tasks(tmp_path)
    log = tmp_path / "stderr.log"
    batch = start_batch(tmp_path, first.base_url, "--outage-wait", "600")
    try:
        wait_for(lambda: results.exists() and len(rows(results)) >= 2, "two results", batch)
        first.stop()  # mid-batch: agents at work lose their connections, new ones find nothing
        wait_for(lambda: "the queue is paused" in log.read_text(), "pause", batch)
        assert len(rows(results)) < len(IDS)
        with FakeVLLM(conversations=conversations, port=port) as second:
            out, _ = batch.communicate(timeout=600)
    finally:
        batch.kill()
        first.stop()
    err = log.read_text()
    assert batch.returncode == 0, err
    final = rows(results)
    assert sorted(r["id"] for r in final) == IDS  # each once: none recorded as an error, none twice
    assert all(r["status"] == "passed" for r in final), [(r["id"], r["status"], r["error"]) for r in final]
    assert "the server answers again" in err and "resuming" in err
    assert second.requests, "the tasks left ran against the server that came back"
    assert json.loads(out)["not_run"] == []


def test_a_server_that_stays_away_stops_the_batch_and_a_rerun_runs_what_is_left(tmp_path):
    results, _, server, port = six_tasks(tmp_path)
    batch = start_batch(tmp_path, server.base_url, "--outage-wait", "5")
    try:
        wait_for(lambda: results.exists() and len(rows(results)) >= 1, "a result", batch)
        server.stop()
        out, _ = batch.communicate(timeout=300)
    finally:
        batch.kill()
    err = (tmp_path / "stderr.log").read_text()
    assert batch.returncode == 1, err
    summary = json.loads(out)
    done = [r["id"] for r in rows(results)]
    assert summary["not_run"] and sorted(done + summary["not_run"]) == IDS
    assert all(r["status"] == "passed" for r in rows(results))  # the outage is nobody's result
    assert "has not answered for 5 s (--outage-wait)" in summary["stopped"]
    assert "tasks left" in err

    with FakeVLLM(conversations={key(t): fixing() for t in summary["not_run"]}, port=port) as back:
        again = start_batch(tmp_path, back.base_url)
        out, _ = again.communicate(timeout=600)
        back.assert_done()
    assert again.returncode == 0, (tmp_path / "stderr.log").read_text()
    assert sorted(r["id"] for r in rows(results)) == IDS


def test_an_agent_that_never_reached_the_server_is_an_error_not_a_pass(tmp_path):
    """The server answers the batch's look (GET /models) but fails every chat request: the agent
    stops on an error before any reply, and the check, which passes on the untouched workspace, is
    not run (the server answering, it is the task's error, not an outage)."""
    make_repo(tmp_path / "repo", {"app.py": "def add(a, b):\n    return a + b\n"})
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("never")])
    write_config(tmp_path / "config.json", FAST_FAILING)
    from vllm_bot.testing.script import Reply

    refusing = [Reply(status=401, error={"error": "nope"})]
    with FakeVLLM(conversations={key("never"): refusing}) as server:
        batch = start_batch(tmp_path, server.base_url)
        out, _ = batch.communicate(timeout=300)
    row = rows(tmp_path / "tasks-batch" / "results.jsonl")[0]
    assert batch.returncode == 1, (tmp_path / "stderr.log").read_text()
    assert (row["status"], row["passed"], row["exit_reason"], row["check_passed"]) == (
        "error",
        False,
        "error",
        None,
    )
    assert json.loads(out)["summary"]["outcomes"] == {"error": 1}


def agents_of(pid):
    """The pids of the agent processes (`vllm_bot.app -p`) whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == pid and b"vllm_bot.app" in cmdline:
            found.append(int(entry))
    return found


def alive(pid):
    """Running (a zombie waiting for its reaper has died)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_the_batch_takes_its_agents_with_it_and_a_rerun_runs_their_tasks(tmp_path):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("a"), fix_task("b")])
    write_config(tmp_path / "config.json", {})
    with FakeVLLM(conversations={key("a"): stalling(), key("b"): stalling()}) as server:
        batch = start_batch(tmp_path, server.base_url)
        try:
            wait_for(lambda: len(server.requests) == 2, "both agents asking the model", batch)
            agents = agents_of(batch.pid)
            assert len(agents) == 2
            batch.send_signal(signal.SIGKILL)
            batch.wait(timeout=60)
            deadline = time.monotonic() + 60
            while any(map(alive, agents)) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not any(map(alive, agents)), "agents outlived their batch"
        finally:
            batch.kill()
    with FakeVLLM(conversations={key("a"): fixing(), key("b"): fixing()}) as server:
        again = start_batch(tmp_path, server.base_url)
        again.communicate(timeout=600)
        server.assert_done()
    assert again.returncode == 0, (tmp_path / "stderr.log").read_text()
    assert sorted(r["id"] for r in rows(tmp_path / "tasks-batch" / "results.jsonl")) == ["a", "b"]
