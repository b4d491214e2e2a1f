"""The bundled eval suite is sound: every task's check fails on its untouched repository and passes
with a reference solution (tests/eval/solutions.yaml), the hidden files stay out of the repository,
and the mix of tasks is what the README promises."""

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from vllm_bot.eval.suite import bundled, materialize, select, write_files

SOLUTIONS = yaml.safe_load((Path(__file__).parent / "solutions.yaml").read_text())
TASKS = bundled()


def run_check(line, workspace):
    """As batch runs a task's check: the hidden files copied in first (the line's check_files)."""
    shutil.copytree(line["check_files"], workspace, dirs_exist_ok=True)
    return subprocess.run(
        ["bash", "-c", line["check"]], cwd=workspace, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    import json

    root = tmp_path_factory.mktemp("suite")
    tasks_file, hidden = materialize(TASKS, root)
    return {json.loads(line)["id"]: json.loads(line) for line in tasks_file.read_text().splitlines()}, hidden


def test_the_suite_has_at_least_twenty_tasks_of_every_kind():
    assert len(TASKS) >= 20
    kinds = Counter(t.kind for t in TASKS)
    assert set(kinds) == {"bug fix", "feature", "refactor", "failing test"}
    languages = Counter(t.language for t in TASKS)
    assert languages["python"] > len(TASKS) / 2 and languages["shell"] >= 2 and languages["javascript"] >= 2
    assert set(SOLUTIONS) == {t.id for t in TASKS}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_each_check_fails_untouched_and_passes_solved(task, suite, tmp_path):
    lines, hidden = suite
    if task.missing():
        pytest.skip(f"{task.id} needs {', '.join(task.missing())}")
    line = lines[task.id]
    untouched = tmp_path / "untouched"
    subprocess.run(["git", "clone", "-q", line["workspace"], str(untouched)], check=True)
    assert not any((untouched / name).exists() for name in task.hidden if name.startswith("hidden_test"))
    failed = run_check(line, untouched)
    assert failed.returncode != 0, f"{task.id}: the check passes without any change"
    solved = tmp_path / "solved"
    subprocess.run(["git", "clone", "-q", line["workspace"], str(solved)], check=True)
    write_files(solved, SOLUTIONS[task.id])
    passed = run_check(line, solved)
    assert passed.returncode == 0, f"{task.id}: {passed.stdout[-2000:]}{passed.stderr[-2000:]}"
    assert (hidden / task.id).is_dir()


def test_select_names_unknown_tasks():
    assert [t.id for t in select(TASKS, "py-roman, py-dedupe")] == ["py-roman", "py-dedupe"]
    with pytest.raises(ValueError, match=r"unknown eval task.*nope"):
        select(TASKS, "py-roman,nope")
