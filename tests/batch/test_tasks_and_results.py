"""The tasks file is checked strictly before anything starts; the results file is only ever whole
lines, survives a torn last line, and merges across shards."""

import json
import os
import re

import pytest
from batch_support import cli, make_repo, write_tasks

from vllm_bot.batch.results import ResultsError, ResultsFile, merge, parse
from vllm_bot.batch.tasks import TasksError, in_shard, load_tasks, parse_shard


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo")


def lines_of(tmp_path, *raw):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(raw) + "\n")
    return path


def test_a_good_file_loads_in_order_with_workspaces_relative_to_it(tmp_path, repo):
    path = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "b", "workspace": "repo", "task": "do b", "check": "true", "setup": None},
            {"id": "a", "workspace": str(repo), "task": "do a"},
        ],
    )
    specs = load_tasks(path)
    assert [(s.id, s.workspace, s.check, s.line) for s in specs] == [
        ("b", repo, "true", 1),
        ("a", repo, None, 2),
    ]


def test_every_bad_line_is_named_at_once(tmp_path, repo):
    path = lines_of(
        tmp_path,
        '{"id": "ok", "workspace": "repo", "task": "t"}',
        '{"id": "x", "workspace": "repo", "task": "t", "chek": "true"}',
        '{"id": "y", "workspace": "repo"}',
        "not json",
        "",
        '{"id": "ok", "workspace": "repo", "task": "again"}',
        '{"id": "z", "workspace": "nowhere", "task": "t"}',
        '{"id": 5, "workspace": "repo", "task": "t"}',
        '["a list"]',
    )
    with pytest.raises(TasksError) as failed:
        load_tasks(path)
    message = str(failed.value)
    assert f"{path} line 2: unknown key 'chek' (did you mean 'check'?)" in message
    assert f"{path} line 3: missing key 'task'" in message
    assert f"{path} line 4: not valid JSON" in message
    assert f"{path} line 6: duplicate id 'ok' (first on line 1)" in message
    assert f"{path} line 7: workspace 'nowhere' is not a directory" in message
    assert f"{path} line 8: 'id' must be a non-empty string, got 5" in message
    assert f"{path} line 9: must be a JSON object" in message
    assert "line 1:" not in message and "line 5" not in message


def test_bad_tasks_exit_2_before_anything_starts(tmp_path, repo):
    path = lines_of(tmp_path, '{"id": "a", "workspace": "repo", "task": "t", "extra": 1}')
    proc = cli("batch", str(path), "--base-url", "http://127.0.0.1:9/v1")  # no server needed to refuse
    assert proc.returncode == 2
    assert "line 1: unknown key 'extra'" in proc.stderr
    assert not (tmp_path / "tasks-batch").exists()
    empty = lines_of(tmp_path, "")
    assert "has no tasks" in cli("batch", str(empty)).stderr
    assert "--shard must be I/N" in cli("batch", str(empty), "--shard", "3/2").stderr


def test_an_unreachable_server_starts_nothing(tmp_path, repo):
    path = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "workspace": "repo", "task": "t"}])
    proc = cli("batch", str(path), "--base-url", "http://127.0.0.1:9/v1")
    assert proc.returncode == 1
    assert "Cannot reach the vLLM server at http://127.0.0.1:9/v1" in proc.stderr
    assert not (tmp_path / "tasks-batch").exists()


def test_shards_split_the_ids_deterministically_and_completely():
    ids = [f"task-{i}" for i in range(200)]
    shares = [[i for i in ids if in_shard(i, (k, 4))] for k in range(1, 5)]
    assert sorted(i for share in shares for i in share) == sorted(ids)
    assert all(30 < len(share) < 70 for share in shares)  # roughly even
    assert shares[0] == [i for i in ids if in_shard(i, (1, 4))]
    assert parse_shard(" 2/4 ") == (2, 4)
    for bad in ("0/4", "5/4", "2", "a/b"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_appends_are_whole_lines_and_a_torn_last_line_is_dropped(tmp_path):
    path = tmp_path / "results.jsonl"
    results = ResultsFile(path)
    results.append({"id": "a", "passed": True})
    results.append({"id": "b", "passed": False, "error": "é"})
    results.close()
    assert path.read_bytes().count(b"\n") == 2 and path.read_bytes().isascii()
    with path.open("ab") as f:
        f.write(b'{"id":"c","pas')  # a power cut in the middle of a write
    done, note = ResultsFile(path).load()
    assert set(done) == {"a", "b"} and "unfinished last line" in note
    assert path.read_bytes().endswith(b"\n") and path.read_bytes().count(b"\n") == 2  # cut off the file
    again = ResultsFile(path)
    again.append({"id": "c", "passed": True})
    again.close()
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["a", "b", "c"]


def test_a_garbled_last_line_with_its_newline_is_dropped_but_a_bad_middle_line_is_an_error(tmp_path):
    good = b'{"id":"a"}\n'
    assert parse(good + b"\x00\x00\x00\n", "f") == ([{"id": "a"}], len(good))
    with pytest.raises(ResultsError, match="f line 1: not a task result"):
        parse(b"garbage\n" + good, "f")


def test_merge_keeps_one_row_per_task_the_last_finished(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    (one / "results-shard-1-of-2.jsonl").write_text(
        '{"id":"a","finished_at":"2025-01-01T00:00:01"}\n{"id":"b","finished_at":"2025-01-01T00:00:05"}\n'
    )
    (two / "results.jsonl").write_text(
        '{"id":"b","finished_at":"2025-01-01T00:00:09","new":true}\n{"id":"c"}'
    )
    rows, notes = merge([one, two])
    assert {r["id"]: r.get("new") for r in rows} == {"a": None, "b": True}  # "c" is a torn line
    assert any("more than one result" in n for n in notes) and any("unfinished last line" in n for n in notes)
    with pytest.raises(ResultsError, match="does not exist"):
        merge([tmp_path / "missing"])
    with pytest.raises(ResultsError, match="holds no results"):
        merge([tmp_path])


def test_the_fd_is_append_only(tmp_path):
    """Two writers (a stale process and a resumed one) can never interleave inside a line."""
    path = tmp_path / "results.jsonl"
    first, second = ResultsFile(path), ResultsFile(path)
    first.append({"id": "a"})
    second.append({"id": "b"})
    first.append({"id": "c"})
    assert [json.loads(line)["id"] for line in path.read_text().splitlines()] == ["a", "b", "c"]
    assert os.path.getsize(path) == len(path.read_bytes())


def test_shard_auto_reads_a_slurm_array_or_a_kubernetes_indexed_job(tmp_path, repo):
    slurm = {"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert parse_shard("auto", slurm) == (3, 4)  # 12 - 10 = index 2 of 0..3
    assert parse_shard("auto/4", slurm) == (3, 4)
    assert parse_shard(" auto / 3 ", {"JOB_COMPLETION_INDEX": "0"}) == (1, 3)
    assert parse_shard("auto/3", {"JOB_COMPLETION_INDEX": "2"}) == (3, 3)
    bad = [
        ("auto/5", slurm, "the SLURM job array has 4 tasks"),
        ("auto", {"JOB_COMPLETION_INDEX": "1"}, "needs the count: --shard auto/N"),
        ("auto/3", {"JOB_COMPLETION_INDEX": "3"}, "index 3 from JOB_COMPLETION_INDEX is not in 0..2"),
        ("auto", {**slurm, "SLURM_ARRAY_TASK_ID": "18"}, "an array with a step"),
        ("auto", {"SLURM_ARRAY_TASK_ID": "1"}, "must all be set to numbers"),
        ("auto", {}, "neither is set: use --shard I/N"),
    ]
    for value, env, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_shard(value, env)
    path = write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "workspace": "repo", "task": "t"}])
    proc = cli("batch", str(path), "--shard", "auto")  # this test's environment has neither
    assert proc.returncode == 2 and "neither is set" in proc.stderr
