"""How an eval task is checked: by the harness we ship (harness/check.py), run from outside the
workspace, which proves that the task's tests ran and passed. This module writes its command line:
the runner for the task's language, the number of tests the test files declare (counted here, from
the sources, so a test that never ran is noticed) and each test file's SHA-256."""

from __future__ import annotations

import ast
import hashlib
import re
import shlex
import sys
from pathlib import Path

HARNESS_DIR = Path(__file__).resolve().parent / "harness"
RUNNERS = {"python": "python", "javascript": "node", "shell": "bash"}  # language -> harness runner
SUFFIXES = {"python": ".py", "node": ".js", "bash": ".sh"}
JS_TEST = re.compile(r"^test\(", re.M)
SH_TEST = re.compile(r"^(?:function\s+)?(test_\w+)\s*\(\)", re.M)


def count_tests(runner: str, source: str) -> int:
    """The tests a test file declares: TestCase methods named test*, top-level `test(...)` calls,
    `test_*` shell functions."""
    if runner == "node":
        return len(JS_TEST.findall(source))
    if runner == "bash":
        return len(set(SH_TEST.findall(source)))
    count = 0
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and any(_name(base).endswith("TestCase") for base in node.bases):
            count += sum(
                1
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")
            )
    return count


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def check_command(runner: str, tests: dict[str, str]) -> str:
    """The check of a task whose test files are `tests` (path -> source), as a shell command run in
    the task's workspace."""
    expect = sum(count_tests(runner, source) for source in tests.values())
    digests = [f"{path}={hashlib.sha256(source.encode()).hexdigest()}" for path, source in tests.items()]
    argv = [sys.executable, "-I", str(HARNESS_DIR / "check.py"), "--runner", runner, "--expect", str(expect)]
    return shlex.join([*argv, *digests])
