"""`batch --ray` on a real two-node Ray cluster on loopback: tasks spread over the nodes with their
workspaces packed and sent, results and task folders streamed back into the results file; a node
lost mid-task gives its task back; Ctrl-C cancels the Ray tasks and their agents; a rerun resumes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from batch_support import CLI, env, fix_task, fixing, key, make_repo, rows, stalling, write_tasks

from vllm_bot.testing.fake_vllm import FakeVLLM


def start_batch(tmp_path: Path, cluster, base_url: str, *extra: str) -> subprocess.Popen[str]:
    log = (tmp_path / "stderr.log").open("a")
    args = [sys.executable, str(CLI), "batch", str(tmp_path / "tasks.jsonl"), "--base-url", base_url]
    args += ["--ray", cluster.address, "--no-trace", "--output-format", "json", *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env={**env(), **cluster.env})


def wait_for(condition, what: str, proc: subprocess.Popen[str], seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, f"the batch ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.3)


def agents() -> list[int]:
    """Agents of a task on a node (they run in the node's scratch folder `vllm-bot-task-*`)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"vllm_bot.app" in cmdline and b"vllm-bot-task-" in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def test_tasks_spread_over_the_nodes_and_their_results_and_folders_come_back(tmp_path, two_nodes):
    make_repo(tmp_path / "repo")
    plain = tmp_path / "plain"  # no git: the folder travels as it is
    plain.mkdir()
    (plain / "app.py").write_text((tmp_path / "repo" / "app.py").read_text())
    hidden = tmp_path / "hidden"  # check_files travel too
    hidden.mkdir()
    (hidden / "test_add.py").write_text("import app\nassert app.add(2, 3) == 5\n")
    tasks = [
        fix_task("git-1"),
        fix_task("git-2"),
        fix_task("plain", workspace="plain"),
        fix_task("hidden", check="python3 test_add.py", check_files="hidden"),
        fix_task("shared", shared=True),  # the same path on every node: used in place
    ]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    with FakeVLLM(conversations={key(t["id"]): fixing() for t in tasks}) as server:
        batch = start_batch(tmp_path, two_nodes, server.base_url)
        out, _ = batch.communicate(timeout=600)
        server.assert_done()
    err = (tmp_path / "stderr.log").read_text()
    assert batch.returncode == 0, err
    results = {r["id"]: r for r in rows(tmp_path / "tasks-batch" / "results.jsonl")}
    assert set(results) == {t["id"] for t in tasks} and all(r["passed"] for r in results.values())
    assert len({r["node_id"] for r in results.values()}) == 2, "both nodes ran tasks"
    for task_id in results:
        folder = tmp_path / "tasks-batch" / "tasks" / task_id
        assert (folder / "events.jsonl").read_text().strip(), task_id
        assert "+    return a + b" in (folder / "changes.diff").read_text() or task_id == "plain"
    assert (tmp_path / "repo" / "app.py").read_text().endswith("a - b\n")  # the source is never touched
    summary = json.loads(out)
    assert summary["summary"]["passed"] == 5 and "Ray: 2 tasks in flight" in err


def test_a_node_lost_mid_task_gives_the_task_back_and_the_batch_finishes(tmp_path, two_nodes):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("a"), fix_task("b")])
    # each model turn takes 3 s: both tasks are mid-way when the worker node is killed
    with FakeVLLM(conversations={key("a"): fixing(), key("b"): fixing()}, turn_latency=3) as server:
        batch = start_batch(tmp_path, two_nodes, server.base_url)
        asked = server.conversations.served
        wait_for(lambda: asked[key("a")] and asked[key("b")] and agents(), "both tasks at work", batch)
        two_nodes.kill_worker()
        batch.communicate(timeout=600)
        server.assert_done()
    err = (tmp_path / "stderr.log").read_text()
    assert batch.returncode == 0, err
    assert "its Ray node was lost (" in err and "it goes back to the queue" in err
    final = rows(tmp_path / "tasks-batch" / "results.jsonl")
    assert sorted(r["id"] for r in final) == ["a", "b"] and all(r["passed"] for r in final)
    assert len({r["node_id"] for r in final}) == 1  # the lost node's task ran again on the head


def test_ctrl_c_cancels_the_ray_tasks_and_their_agents_and_a_rerun_resumes(tmp_path, two_nodes):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("a"), fix_task("b")])
    with FakeVLLM(conversations={key("a"): stalling(), key("b"): stalling()}) as server:
        batch = start_batch(tmp_path, two_nodes, server.base_url)
        wait_for(lambda: len(server.requests) == 2 and len(agents()) == 2, "both agents asking", batch)
        batch.send_signal(signal.SIGINT)
        out, _ = batch.communicate(timeout=300)
    assert batch.returncode == 3, (tmp_path / "stderr.log").read_text()
    assert json.loads(out)["not_run"] == ["a", "b"]
    deadline = time.monotonic() + 60
    while agents() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not agents(), "an agent outlived its cancelled Ray task"
    with FakeVLLM(conversations={key("a"): fixing(), key("b"): fixing()}) as server:
        again = start_batch(tmp_path, two_nodes, server.base_url)
        again.communicate(timeout=600)
        server.assert_done()
    assert again.returncode == 0, (tmp_path / "stderr.log").read_text()
    assert sorted(r["id"] for r in rows(tmp_path / "tasks-batch" / "results.jsonl")) == ["a", "b"]


def test_an_outage_seen_from_a_node_pauses_the_queue_until_the_server_is_back(tmp_path, two_nodes):
    make_repo(tmp_path / "repo")
    ids = [f"t{i}" for i in range(4)]
    write_tasks(tmp_path / "tasks.jsonl", [fix_task(t) for t in ids])
    (tmp_path / "config.json").write_text(json.dumps({"vllm": {"retry_attempts": 2, "retry_base": 0.1}}))
    results, log = tmp_path / "tasks-batch" / "results.jsonl", tmp_path / "stderr.log"
    conversations = {key(t): fixing() for t in ids}
    first = FakeVLLM(conversations=conversations).start()
    port = int(first.url.rsplit(":", 1)[1])
    batch = start_batch(tmp_path, two_nodes, first.base_url, "--config", str(tmp_path / "config.json"))
    try:
        wait_for(lambda: results.exists() and len(rows(results)) >= 1, "a result", batch)
        first.stop()
        wait_for(lambda: "the queue is paused" in log.read_text(), "pause", batch)
        with FakeVLLM(conversations=conversations, port=port):
            batch.communicate(timeout=600)
    finally:
        batch.kill()
        first.stop()
    assert batch.returncode == 0, log.read_text()
    final = rows(results)
    assert sorted(r["id"] for r in final) == ids and all(r["passed"] for r in final)
    assert "resuming" in log.read_text()


def test_no_cluster_or_no_server_is_one_clean_error_before_anything_runs(tmp_path, two_nodes):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [fix_task("a")])
    base = [
        sys.executable,
        str(CLI),
        "batch",
        str(tmp_path / "tasks.jsonl"),
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]
    run = {"capture_output": True, "text": True, "timeout": 300, "env": {**env(), **two_nodes.env}}
    nobody = subprocess.run([*base, "--ray", "127.0.0.1:1"], **run)
    assert nobody.returncode == 1 and "Traceback" not in nobody.stderr
    assert "Cannot connect to the Ray cluster at 127.0.0.1:1" in nobody.stderr
    no_server = subprocess.run([*base, "--ray", two_nodes.address], **run)
    assert no_server.returncode == 1 and "Traceback" not in no_server.stderr
    assert "Cannot reach the vLLM server at http://127.0.0.1:9/v1 (from Ray node " in no_server.stderr
    assert not (tmp_path / "tasks-batch" / "results.jsonl").exists()
