"""Runs an eval task's Python tests, started by check.py as `python -I -X pycache_prefix=FRESH`: no
user site, no PYTHON* variables, neither this folder nor the workspace on sys.path.

Reads the nonce (the first line of stdin) and the tests' sources (the rest, JSON) before anything of
the workspace runs; imports the test runner; then puts the workspace on sys.path after the standard
library (a `unittest/` or `json.py` there shadows nothing) and imports only sources from it (no
bytecode, no extension modules: stale or planted `.pyc` files are never loaded). It runs every
TestCase the test files define, then writes one end-of-run line to its own copy of stdout:
`@@vllm-bot-eval NONCE ran=N passed=M` (and `tampered=WHAT` when the code under test changed the
runner). Standard library only.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
import types
import unittest
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, SourceFileLoader
from typing import Any

RESULT = "@@vllm-bot-eval"


class CountingResult(unittest.TextTestResult):
    """Counts the tests that passed: called a success by unittest (a test whose subtests failed is not)
    and whose method returned. unittest alone can be fooled from the code under test: a raised
    `unittest.case._ShouldStop` ends the method and unittest still calls the test a success."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.passed = 0
        self.returned: set[int] = set()  # id() of the tests whose method returned

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self.passed += id(test) in self.returned


def note_returns(suite: unittest.TestSuite, returned: set[int]) -> None:
    """Wrap each test's method so that `returned` gets the test's id() when the method returns."""
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            note_returns(test, returned)
            continue
        method = getattr(test, test._testMethodName)

        @functools.wraps(method)  # keeps expectedFailure's and skip's marks
        def noted(*args: Any, _method: Any = method, _test: Any = test, **kwargs: Any) -> Any:
            value = _method(*args, **kwargs)
            returned.add(id(_test))
            return value

        setattr(test, test._testMethodName, noted)


GUARDED = (
    unittest.TestCase,
    vars(unittest.case)["_Outcome"],  # decides what ends a test (not in the type stubs)
    unittest.TestSuite,
    unittest.TestResult,
    unittest.TextTestResult,
    unittest.TextTestRunner,
    CountingResult,
)


def isolate(workspace: str) -> None:
    """The workspace on sys.path after the standard library, sources only."""

    def sources_only(path: str) -> FileFinder:
        if path == workspace or path.startswith(workspace + os.sep):
            return FileFinder(path, (SourceFileLoader, SOURCE_SUFFIXES))
        raise ImportError("not the workspace")

    sys.path_hooks.insert(0, sources_only)
    sys.path_importer_cache.clear()
    site = [i for i, p in enumerate(sys.path) if p.endswith(("site-packages", "dist-packages"))]
    sys.path.insert(site[0] if site else len(sys.path), workspace)


def load(files: list[dict[str, str]], workspace: str) -> tuple[unittest.TestSuite, int]:
    """The TestCases each test file defines, and how many files failed to load."""
    suite, failed = unittest.TestSuite(), 0
    loader = unittest.TestLoader()
    for spec in files:
        name = spec["path"].removesuffix(".py").replace("/", ".")
        module = types.ModuleType(name)
        module.__file__ = os.path.join(workspace, spec["path"])
        sys.modules[name] = module
        try:
            exec(compile(spec["source"], module.__file__, "exec"), module.__dict__)
        except BaseException:  # SystemExit and all: the tests of this file did not load
            traceback.print_exc()
            failed += 1
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, GUARDED[0]) and value.__module__ == name:
                suite.addTests(loader.loadTestsFromTestCase(value))
    return suite, failed


def main() -> None:
    nonce = sys.stdin.readline().strip()
    files = json.loads(sys.stdin.read())
    sys.stdin.close()
    sys.stdin = open(os.devnull)  # noqa: SIM115 (the tests' stdin for the rest of the run)
    out, write = os.dup(1), os.write  # the end-of-run line's own stdout, whatever the tests do to fd 1
    before = {cls: dict(vars(cls)) for cls in GUARDED}
    workspace = os.path.realpath(os.getcwd())
    isolate(workspace)
    suite, _ = load(files, workspace)
    returned: set[int] = set()
    note_returns(suite, returned)

    def counting(*args: Any, **kwargs: Any) -> CountingResult:
        result = CountingResult(*args, **kwargs)
        result.returned = returned
        return result

    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=counting)
    result = runner.run(suite)
    changed = [cls.__name__ for cls in GUARDED if dict(vars(cls)) != before[cls]]
    if sys.modules.get("unittest") is not unittest:
        changed.append("sys.modules['unittest']")
    line = f"{RESULT} {nonce} ran={result.testsRun} passed={getattr(result, 'passed', 0)}"
    line += f" tampered={','.join(changed)}" if changed else ""
    write(out, (line + "\n").encode())


if __name__ == "__main__":
    main()
