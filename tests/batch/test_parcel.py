"""What travels to a Ray node and back (parcel.py), and a task run the way a node runs it (node.py),
here without Ray: the workspace as a task's copy of it, made whole again, within a size limit."""

import subprocess

import pytest
from batch_support import fix_task, fixing, key, make_repo, write_tasks

from vllm_bot.batch.node import NodeJob, run_task
from vllm_bot.batch.parcel import ParcelError, pack_dir, pack_workspace, unpack, unpack_workspace
from vllm_bot.batch.settings import BatchSettings
from vllm_bot.batch.tasks import load_tasks
from vllm_bot.config import load_config
from vllm_bot.testing.fake_vllm import FakeVLLM


def test_a_git_workspace_travels_as_its_last_commit_and_is_a_repository_again(tmp_path):
    repo = make_repo(tmp_path / "repo", {"sub/app.py": "x = 1\n", "top.txt": "top\n"})
    (repo / "sub" / "app.py").write_text("x = 2  # uncommitted\n")
    (repo / "sub" / "notes.txt").write_text("untracked\n")
    workspace = unpack_workspace(pack_workspace(repo / "sub", [], 10**6), tmp_path / "node")
    assert workspace == tmp_path / "node" / "sub"
    assert (workspace / "app.py").read_text() == "x = 1\n" and not (workspace / "notes.txt").exists()
    assert (tmp_path / "node" / "top.txt").exists()
    log = subprocess.run(
        ["git", "log", "--oneline"], cwd=workspace, capture_output=True, text=True, check=True
    )
    assert len(log.stdout.splitlines()) == 1
    status = subprocess.run(["git", "status", "--porcelain"], cwd=workspace, capture_output=True, text=True)
    assert status.stdout == ""


def test_a_plain_folder_travels_without_the_agents_state_and_within_the_limit(tmp_path):
    folder = tmp_path / "plain"
    (folder / ".vllm-bot" / "sessions").mkdir(parents=True)
    (folder / ".vllm-bot" / "config.json").write_text("{}")
    (folder / ".vllm-bot" / "sessions" / "s.jsonl").write_text("{}")
    (folder / "data.bin").write_bytes(b"x" * 5000)
    workspace = unpack_workspace(pack_workspace(folder, [], 10**6), tmp_path / "node")
    assert (workspace / "data.bin").stat().st_size == 5000 and (
        workspace / ".vllm-bot" / "config.json"
    ).exists()
    assert not (workspace / ".vllm-bot" / "sessions").exists() and not (workspace / ".git").exists()
    with pytest.raises(
        ParcelError,
        match=r"holds 0.005 MB, over the 0.004 MB a task may carry .*--ray-max-archive.*\"shared\": true",
    ):
        pack_workspace(folder, [], 4000)
    unpack(pack_dir(folder, 10**6, skip={"data.bin"}), tmp_path / "back")
    assert not (tmp_path / "back" / "data.bin").exists() and (tmp_path / "back" / ".vllm-bot").is_dir()


def test_a_node_runs_a_sent_task_and_sends_back_its_row_and_folder(tmp_path):
    make_repo(tmp_path / "repo")
    spec = load_tasks(write_tasks(tmp_path / "tasks.jsonl", [fix_task("a")]))[0]
    with FakeVLLM(conversations={key("a"): fixing()}) as server:
        config = load_config(None, env={}, overrides={"vllm.base_url": server.base_url})
        job = NodeJob(spec, BatchSettings(tmp_path / "out", trace=False), config)
        result = run_task(job, pack_workspace(spec.workspace, [], 10**6), None)
        server.assert_done()
    assert result.row is not None and result.row["status"] == "passed" and not result.outage
    unpack(result.files, tmp_path / "back")
    assert "+    return a + b" in (tmp_path / "back" / "changes.diff").read_text()
    assert not (tmp_path / "back" / "workspace").exists() and not (tmp_path / "out").exists()
