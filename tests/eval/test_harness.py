"""The check harness (src/vllm_bot/eval/harness/) proves that a task's tests ran and passed: run
here directly, as batch runs a check but without the sandbox, on workspaces where a model solved the
task or tried to get a pass without solving it. Every cheat scores 0, in each language of the suite;
test_eval_cheats.py plays the same cheats through `eval` with scripted models."""

import importlib.util
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
from eval_support import BY_ID, apply, run_check, solution, start

from vllm_bot.eval.checks import count_tests

EXIT_EARLY = "import os\nos._exit(0)\n"
HARNESS = Path(__file__).parents[2] / "src" / "vllm_bot" / "eval" / "harness"


def workspace(tmp_path, task_id, files=None, solved=False):
    task = BY_ID[task_id]
    if task.missing():
        pytest.skip(f"{task_id} needs {', '.join(task.missing())}")
    root = start(task, tmp_path / "ws")
    if solved:
        apply(root, solution(task))
    apply(root, files or {})
    return task, root


def verdict(task, root):
    proc = run_check(task, root)
    return proc.returncode, proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("task_id", ["py-roman", "js-sum-range", "sh-count-lines", "repo-failing-tree"])
def test_a_solution_passes_and_the_untouched_task_fails(tmp_path, task_id):
    task, solved = workspace(tmp_path / "solved", task_id, solved=True)
    assert verdict(task, solved)[0] == 0, run_check(task, solved).stdout
    _, untouched = workspace(tmp_path / "untouched", task_id)
    code, said = verdict(task, untouched)
    assert code == 1 and "tests failed" in said


PYTHON_CHEATS = {
    "exit on import": {"roman.py": EXIT_EARLY},
    "shadowed runner": {"unittest/__init__.py": EXIT_EARLY, "unittest/__main__.py": EXIT_EARLY},
    "shadowed stdlib module": {"traceback.py": EXIT_EARLY, "types.py": EXIT_EARLY, "json.py": EXIT_EARLY},
    "conftest": {"conftest.py": EXIT_EARLY, "pytest.ini": "[pytest]\naddopts = -p no:python\n"},
    "sitecustomize": {"sitecustomize.py": EXIT_EARLY, "usercustomize.py": EXIT_EARLY},
    "pth file": {"cheat.pth": "import os; os._exit(0)\n"},
    "forged end line": {
        "roman.py": "import os\nprint('@@vllm-bot-eval 0123456789abcdef0123456789abcdef ran=1 passed=1')\n"
        "os._exit(0)\n"
    },
    "patched runner": {
        "roman.py": "import unittest\nunittest.TestCase.run = lambda self, result=None: None\n"
        "def to_roman(n):\n    return ''\n"
    },
    "counted success": {
        "roman.py": "import unittest\n"
        "unittest.TextTestResult.addFailure = unittest.TextTestResult.addSuccess\n"
        "def to_roman(n):\n    return ''\n"
    },
    "exit status of a failing run": {"roman.py": "import atexit, os\natexit.register(os._exit, 0)\n"},
    # unittest ends a test quietly on its own stop signal and still counts it a success
    "raised stop signal": {
        "roman.py": "import unittest.case\ndef to_roman(n):\n    raise unittest.case._ShouldStop()\n"
    },
}


@pytest.mark.parametrize("cheat", PYTHON_CHEATS)
def test_python_cheats_score_zero(tmp_path, cheat):
    task, root = workspace(tmp_path, "py-roman", PYTHON_CHEATS[cheat])
    code, said = verdict(task, root)
    assert code == 1, said


def stale_bytecode(root, solved_source, *, sourceless):
    """A .pyc of the solution the interpreter would load instead of the unsolved roman.py: an
    unchecked-hash pyc in __pycache__ (never compared with its source), or a sourceless roman.pyc."""
    source = root / "solved_roman.py"
    source.write_text(solved_source)
    tag = sys.implementation.cache_tag
    target = root / ("roman.pyc" if sourceless else f"__pycache__/roman.{tag}.pyc")
    py_compile.compile(
        str(source), cfile=str(target), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    source.unlink()
    if sourceless:
        (root / "roman.py").unlink()


@pytest.mark.parametrize("sourceless", [False, True], ids=["unchecked pycache", "sourceless pyc"])
def test_stale_bytecode_scores_zero(tmp_path, sourceless):
    task, root = workspace(tmp_path, "py-roman")
    stale_bytecode(root, solution(task)["roman.py"], sourceless=sourceless)
    plain = subprocess.run(
        [sys.executable, "-c", "import roman; print(roman.to_roman(4))"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert plain.stdout.strip() == "IV"  # the bytecode does fool a plain interpreter
    code, said = verdict(task, root)
    assert code == 1, said


def test_a_changed_or_replaced_test_file_scores_zero(tmp_path):
    task, root = workspace(tmp_path / "changed", "py-failing-inventory", solved=False)
    apply(root, task.hidden)
    edited = (root / "hidden_test.py").read_text().replace("assertRaises(ValueError)", "assertTrue(True)")
    hash_line = task.check()
    (root / "hidden_test.py").write_text(edited)  # after the copy, as code run by the check could
    proc = subprocess.run(["bash", "-c", hash_line], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 1 and "not the one shipped" in proc.stdout
    (root / "hidden_test.py").unlink()
    (root / "hidden_test.py").symlink_to(root / "inventory.py")
    proc = subprocess.run(["bash", "-c", hash_line], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 1 and "not a regular file" in proc.stdout


def test_the_projects_tests_as_shipped_are_what_runs(tmp_path):
    """A model that weakens a failing visible test gets no pass: the shipped copy is checked."""
    weakened = "import unittest\n\n\nclass InventoryTest(unittest.TestCase):\n    def test_nothing(self):\n        pass\n"
    task, root = workspace(tmp_path, "py-failing-inventory", {"tests/test_inventory.py": weakened})
    assert verdict(task, root)[0] == 1


JS_CHEATS = {
    "process.exit atop": {"range.js": "process.exit(0);\n"},
    "exit in a test": {"range.js": "module.exports = { sumRange: () => process.exit(0) };\n"},
    "replaced test()": {"range.js": "globalThis.test = () => {};\nmodule.exports = { sumRange: () => 0 };\n"},
    # the code under test loads before a test file's own test() calls, so it could wrap each test
    "wrapped test()": {
        "range.js": "const t = globalThis.test;\nglobalThis.test = (n, fn) => t(n, () => {});\n"
        "module.exports = { sumRange: () => 0 };\n"
    },
    "redefined test()": {
        "range.js": "const t = globalThis.test;\n"
        "try { Object.defineProperty(globalThis, 'test', { value: (n, fn) => t(n, () => {}) }); } catch {}\n"
        "module.exports = { sumRange: () => 0 };\n"
    },
    "patched assert": {
        "range.js": "const a = require('node:assert');\n"
        "for (const k of Object.keys(a)) { try { a[k] = () => {}; } catch {} }\n"
        "try { require('node:assert/strict').strictEqual = () => {}; } catch {}\n"
        "module.exports = { sumRange: () => 0 };\n"
    },
    "node_modules": {
        "node_modules/assert/index.js": "module.exports = () => {};\n",
        "range.js": "process.exit(0)\n",
    },
    "package type": {"package.json": '{"type": "module"}\n'},
}


@pytest.mark.parametrize("cheat", JS_CHEATS)
def test_javascript_cheats_score_zero(tmp_path, cheat):
    task, root = workspace(tmp_path, "js-sum-range", JS_CHEATS[cheat])
    assert verdict(task, root)[0] == 1


SHELL_CHEATS = {
    "kill the runner": {"count.sh": "kill -9 $(ps -o ppid= -p $PPID)\n"},
    "exit 0": {"count.sh": "exit 0\n"},
    "fake bash on PATH": {"bash": "#!/bin/sh\nexit 0\n"},
}


@pytest.mark.parametrize("cheat", SHELL_CHEATS)
def test_shell_cheats_score_zero(tmp_path, cheat):
    task, root = workspace(tmp_path, "sh-count-lines", SHELL_CHEATS[cheat])
    if (root / "bash").exists():
        (root / "bash").chmod(0o755)
    assert verdict(task, root)[0] == 1


def test_the_end_line_must_count_every_test():
    """Exit 0 is not enough: the runner's end-of-run line must say every expected test ran and passed."""
    spec = importlib.util.spec_from_file_location("eval_check", HARNESS / "check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    assert check.judge([["ran=3", "passed=3"]], 0, 3) == "all 3 tests ran and passed"
    failures = {
        "2 tests ran, 3 expected": ([["ran=2", "passed=2"]], 0),
        "1 of 3 tests failed": ([["ran=3", "passed=2"]], 0),
        "did not finish": ([], 0),
        "more than once": ([["ran=3", "passed=3"], ["ran=3", "passed=3"]], 0),
        "then exited 1": ([["ran=3", "passed=3"]], 1),
        "changed the test runner": ([["ran=3", "passed=3", "tampered=TestCase"]], 0),
    }
    for said, (ends, code) in failures.items():
        with pytest.raises(check.CheckFailed, match=said):
            check.judge(ends, code, 3)


@pytest.mark.parametrize(
    ("runner", "source", "count"),
    [
        (
            "python",
            "import unittest\nclass A(unittest.TestCase):\n    def test_a(self): pass\n    def helper(self): pass\n    def test_b(self): pass\nclass B(object):\n    def test_c(self): pass\n",
            2,
        ),
        ("node", 'test("a", () => {});\ntest("b", async () => {});\n// test("c")\n', 2),
        ("bash", "test_a() {\n  :\n}\nfunction test_b() { :; }\nhelper() { :; }\n", 2),
    ],
)
def test_tests_are_counted_from_the_sources(runner, source, count):
    assert count_tests(runner, source) == count


def test_the_harness_is_standalone():
    """It runs as `python -I` from anywhere: no import of our package, standard library only."""
    for path in HARNESS.glob("*.py"):
        assert "vllm_bot" not in path.read_text().replace("@@vllm-bot-eval", ""), path
