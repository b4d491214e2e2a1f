"""The bundled eval suite is sound: at least 60 tasks in three tiers, each task's check fails on its
untouched repository and passes with a reference solution (tests/eval/solutions.yaml; a repo task's
is the bundled project as shipped), a bug across two modules needs both fixed, the hidden files stay
out of the repositories, and the bundled project is the size the README promises. A plain run checks
a sample of the tasks (one of each tier and language); CI checks them all."""

import ast
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from eval_support import TASKS, apply, missing_programs, run_check, sample, solution, solutions, start

from vllm_bot.eval.suite import PROJECTS_DIR, SuiteError, bundled, materialize, parse_task, select


def test_the_suite_has_sixty_tasks_in_three_tiers():
    assert len(TASKS) >= 60
    tiers = Counter(t.tier for t in TASKS)
    assert set(tiers) == {"tools", "file", "repo"} and min(tiers.values()) >= 15, tiers
    kinds = {tier: {t.kind for t in TASKS if t.tier == tier} for tier in tiers}
    assert kinds["tools"] == {"find", "read", "run"}
    assert kinds["file"] == {"bug fix", "feature", "refactor", "failing test"}
    assert kinds["repo"] == {"bug across modules", "feature", "failing test"}
    languages = Counter(t.language for t in TASKS)
    assert languages["shell"] >= 3 and languages["javascript"] >= 3 and languages["python"] > len(TASKS) / 2
    assert set(solutions()) == {t.id for t in TASKS if t.tier != "repo"}


def test_the_bundled_project_is_a_few_thousand_lines_with_its_own_tests():
    project = PROJECTS_DIR / "ledger"
    modules = list((project / "ledger").glob("*.py"))
    tests = list((project / "tests").glob("test_*.py"))
    lines = sum(len(p.read_text().splitlines()) for p in [*modules, *tests])
    assert len(modules) >= 12 and len(tests) >= 12 and lines >= 3000, (len(modules), len(tests), lines)
    for task in [t for t in TASKS if t.tier == "repo"]:
        changed = [p for p in task.solution if p.startswith("ledger/")]
        expected = {"bug across modules": 2, "feature": 3}.get(task.kind, 1)
        assert len(changed) == expected, (task.id, changed)


@pytest.mark.parametrize("task", sample(by=("tier", "language")), ids=lambda t: t.id)
def test_each_check_fails_untouched_and_passes_solved(task, tmp_path):
    missing_programs(task)
    untouched = run_check(task, start(task, tmp_path / "untouched"))
    assert untouched.returncode == 1, f"{task.id}: the check passes without any change"
    assert "FAILED" in untouched.stdout.splitlines()[-1]
    solved = start(task, tmp_path / "solved")
    apply(solved, solution(task))
    passed = run_check(task, solved)
    assert passed.returncode == 0, f"{task.id}: {passed.stdout[-2000:]}{passed.stderr[-2000:]}"


BUGS = sample([t for t in TASKS if t.kind == "bug across modules"])


@pytest.mark.parametrize("task", BUGS, ids=lambda t: t.id)
def test_a_bug_across_two_modules_needs_both_fixed(task, tmp_path):
    for n, path in enumerate(task.solution):
        half = start(task, tmp_path / str(n))
        apply(half, {path: task.solution[path]})
        assert run_check(task, half).returncode == 1, f"{task.id}: fixing {path} alone passes"


def test_materialized_tasks_keep_the_hidden_files_out_of_the_repositories(tmp_path):
    chosen = select(TASKS, "py-failing-inventory,repo-tags,tools-read-log")
    tasks_file, hidden = materialize(chosen, tmp_path / "suite")
    lines = [json.loads(line) for line in tasks_file.read_text().splitlines()]
    assert [line["id"] for line in lines] == [t.id for t in chosen]
    for task, line in zip(chosen, lines, strict=True):
        repo = Path(line["workspace"])
        listed = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True)
        assert set(listed.stdout.split()) == set(task.files), task.id
        for name, text in task.hidden.items():
            assert (hidden / task.id / name).read_text() == text
            assert (
                not (repo / name).exists() or (repo / name).read_text() != text or name.startswith("tests/")
            )
        assert line["check_files"] == str(hidden / task.id)
        assert "-I" in line["check"] and "--expect" in line["check"]


def test_select_takes_ids_and_tiers():
    assert [t.id for t in select(TASKS, "py-roman, py-dedupe")] == ["py-dedupe", "py-roman"]
    repo = select(TASKS, "repo")
    assert repo and {t.tier for t in repo} == {"repo"}
    assert len(select(TASKS, "repo,py-roman")) == len(repo) + 1
    with pytest.raises(ValueError, match=r"unknown eval task.*nope.*or name a tier"):
        select(TASKS, "py-roman,nope")


def test_a_malformed_task_file_names_itself(tmp_path):
    (tmp_path / "broken.yaml").write_text(
        "tier: file\nkind: bug fix\nlanguage: python\ntask: x\nhidden: {}\n"
    )
    with pytest.raises(SuiteError, match=r"broken.yaml: tests \[\] must name hidden files"):
        bundled(tmp_path)
    with pytest.raises(ValueError, match="found 0 times"):
        parse_task(
            "t",
            {
                "tier": "repo",
                "kind": "feature",
                "language": "python",
                "task": "x",
                "project": "ledger",
                "changes": {"ledger/money.py": [{"old": "no such text", "new": ""}]},
            },
            {},
            PROJECTS_DIR,
        )


def test_the_hidden_tests_of_every_task_parse():
    for task in TASKS:
        for path in task.tests:
            if path.endswith(".py"):
                ast.parse(task.hidden[path], path)
