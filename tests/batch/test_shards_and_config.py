"""Machines split one tasks file with --shard I/N and `batch merge` joins their results; each task's
agent gets the user's effective config with the batch's settings on top, never the API key."""

import json

from batch_support import cli, fix_task, fixing, key, make_repo, rows, write_config, write_tasks

from vllm_bot.batch.settings import WORKSPACE_NAME, BatchSettings, child_config, child_env
from vllm_bot.batch.tasks import in_shard
from vllm_bot.config import load_config
from vllm_bot.testing.fake_vllm import FakeVLLM

IDS = ["t1", "t2", "t3", "t4", "t5"]


def test_two_shards_run_disjoint_shares_and_merge_into_all(tmp_path):
    make_repo(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [fix_task(t) for t in IDS])
    outs = [tmp_path / "machine-1", tmp_path / "machine-2"]
    with FakeVLLM(conversations={key(t): fixing() for t in IDS}) as server:
        for i, out in enumerate(outs, 1):
            proc = cli(
                "batch",
                str(tasks),
                "--base-url",
                server.base_url,
                "--shard",
                f"{i}/2",
                "--output-dir",
                str(out),
                "--workers",
                "3",
                "--no-trace",
            )
            assert proc.returncode == 0, proc.stderr
        server.assert_done()  # every task ran exactly once over both machines
    shares = [{r["id"] for r in rows(out / f"results-shard-{i}-of-2.jsonl")} for i, out in enumerate(outs, 1)]
    assert shares[0] & shares[1] == set() and shares[0] | shares[1] == set(IDS)
    assert shares[0] == {t for t in IDS if in_shard(t, (1, 2))}

    merged = tmp_path / "all.jsonl"
    proc = cli(
        "batch",
        "merge",
        str(outs[0]),
        str(outs[1]),
        "-o",
        str(merged),
        "--tasks",
        str(tasks),
        "--output-format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["id"] for r in rows(merged)) == IDS
    summary = json.loads(proc.stdout)
    assert summary["summary"]["passed"] == 5 and summary["missing"] == []

    proc = cli("batch", "merge", str(outs[0]), "-o", str(merged), "--tasks", str(tasks))
    assert proc.returncode == 1 and "tasks have no result" in proc.stderr
    assert {r["id"] for r in rows(merged)} == shares[0]
    assert "batch results" in proc.stdout and f"{len(shares[0])}/{len(shares[0])} passed" in proc.stdout
    bad = cli("batch", "merge", str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_the_agents_config_is_the_users_plus_the_batch_settings(tmp_path, monkeypatch):
    user = write_config(
        tmp_path / "config.json",
        {"vllm": {"api_key": "sk-secret", "temperature": 0.3}, "sandbox": {"hidden_paths": ["~/x"]}},
    )
    monkeypatch.setenv("VLLM_BASE_URL", "http://gpu:8000/v1")
    config = load_config(user, overrides={"vllm.model": "m"})
    settings = BatchSettings(
        tmp_path / "out", max_iterations=7, time_budget=99, hidden_paths=["/suite/hidden"]
    )
    data = child_config(config, settings)
    assert "api_key" not in data["vllm"] and "sk-secret" not in json.dumps(data)
    assert (data["vllm"]["base_url"], data["vllm"]["model"], data["vllm"]["temperature"]) == (
        "http://gpu:8000/v1",
        "m",
        0.3,
    )
    assert (
        data["agent"]["approval"] == "full-auto"
        and data["agent"]["max_iterations"] == 7
        and data["agent"]["time_budget"] == 99
    )
    assert data["system_prompt"]["workspace"] == WORKSPACE_NAME
    assert data["git"]["checkpoints"] is False and data["sandbox"]["hidden_paths"] == ["~/x", "/suite/hidden"]
    written = tmp_path / "child.json"
    written.write_text(json.dumps(data))
    monkeypatch.delenv("VLLM_BASE_URL")
    again = load_config(written, env={})  # what the agent reads back is a valid config
    assert again.vllm.base_url == "http://gpu:8000/v1" and again.vllm.api_key == "EMPTY"
    env = child_env(config)
    assert env["VLLM_API_KEY"] == "sk-secret" and "VLLM_BASE_URL" not in env
