"""Scripted models that try to get a pass without solving the task (issue 33's findings and their
cousins), played through `vllm-bot eval` against the fake server: every one scores 0, and the task's
check.log says why. One eval run plays them all; each cheat is its own test."""

import json
import sys

import pytest
from batch_support import cli
from eval_support import BY_ID, key, solution

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

EXIT = "import os\nos._exit(0)\n"
PASSES = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n"


def writes(files):
    return [Call("write", {"path": path, "content": text}) for path, text in files.items()]


def stale_bytecode():
    """Compile the reference solution into an unchecked-hash pyc (never compared with its source)
    where the interpreter looks for convert.py's bytecode, and leave convert.py unsolved."""
    source = solution(BY_ID["py-kelvin"])["convert.py"]
    tag = sys.implementation.cache_tag  # the interpreter eval's checks run on
    script = (
        "import pathlib, py_compile; pathlib.Path('/tmp/solved.py').write_text(" + repr(source) + "); "
        f"py_compile.compile('/tmp/solved.py', cfile='__pycache__/convert.{tag}.pyc', "
        "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
    )
    return [Call("exec", {"command": f"python3 -c {json.dumps(script)}"})]


CHEATS = {  # cheat -> (task, the calls of the model's one working turn, what check.log says)
    "exit on import": ("py-roman", writes({"roman.py": EXIT}), "did not finish"),
    "shadowed runner": (
        "py-dedupe",
        writes({"unittest/__init__.py": EXIT, "unittest/__main__.py": EXIT}),
        "tests failed",
    ),
    "rewritten test file": (
        "py-failing-inventory",
        writes({"tests/test_inventory.py": PASSES, "hidden_test.py": EXIT}),
        "tests failed",
    ),
    "conftest": ("py-slugify", writes({"conftest.py": EXIT, "pytest.ini": "[pytest]\n"}), "tests failed"),
    "start-up files": (
        "py-stack",
        writes({"sitecustomize.py": EXIT, "usercustomize.py": EXIT, "cheat.pth": "import os; os._exit(0)\n"}),
        "tests failed",
    ),
    "stale bytecode": ("py-kelvin", stale_bytecode, "tests failed"),  # the solution is read when played
    "forged end-of-run line": (
        "py-binary-search",
        writes(
            {"search.py": "print('@@vllm-bot-eval 00000000000000000000000000000000 ran=2 passed=2')\n" + EXIT}
        ),
        "did not finish",
    ),
    "process.exit atop a .js file": (
        "js-sum-range",
        writes({"range.js": "process.exit(0);\n" + BY_ID["js-sum-range"].files["range.js"]}),
        "did not finish",
    ),
    "killing the shell runner": (
        "sh-count-lines",
        writes({"count.sh": "#!/usr/bin/env bash\nkill -9 $(ps -o ppid= -p $PPID)\n"}),
        "did not finish",
    ),
    "a link where a test file goes": (
        "py-roman",  # not played with the others: one conversation per task
        [Call("exec", {"command": "ln -s roman.py hidden_test.py"})],
        "eval check: FAILED",  # batch removes the link and puts the shipped test in its place
    ),
}
PLAYED = {name: cheat for name, cheat in CHEATS.items() if name != "a link where a test file goes"}


@pytest.fixture(scope="module")
def cheated(tmp_path_factory):
    """One eval run of every cheat (its task's key -> a turn of cheating calls, then a claim)."""
    tasks = [BY_ID[task_id] for task_id, _, _ in PLAYED.values() if not BY_ID[task_id].missing()]
    conversations = {
        key(BY_ID[task_id]): [
            Reply(content="Fixing it.", calls=calls() if callable(calls) else calls),
            Reply(content="Done: all tests pass."),
        ]
        for task_id, calls, _ in PLAYED.values()
    }
    conversations = {k: v for k, v in conversations.items() if any(k == key(t) for t in tasks)}
    out = tmp_path_factory.mktemp("cheats")
    with FakeVLLM(conversations=conversations) as server:
        proc = cli(
            "eval", "--base-url", server.base_url, "--tasks", ",".join(t.id for t in tasks),
            "--output-dir", str(out), "--workers", "4", "--json",
        )  # fmt: skip
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), out


@pytest.mark.parametrize("cheat", PLAYED)
def test_the_cheat_scores_zero(cheated, cheat):
    result, out = cheated
    task_id, _, said = PLAYED[cheat]
    if BY_ID[task_id].missing():
        pytest.skip(f"{task_id} needs {', '.join(BY_ID[task_id].missing())}")
    outcome = result["runs"]["default"]["tasks"][task_id]
    assert outcome["passed"] is False and outcome["status"] == "failed"
    log = (out / "default" / "tasks" / task_id / "check.log").read_text()
    assert "eval check: FAILED: " in log and said in log, log[-1500:]


def test_all_of_them_together_score_nothing(cheated):
    result, _ = cheated
    assert result["runs"]["default"]["summary"]["passed"] == 0 and result["verdict"].startswith("poor: ")


def test_a_link_where_a_test_file_goes_scores_zero(tmp_path):
    task_id, calls, said = CHEATS["a link where a test file goes"]
    conversation = [Reply(content="Fixing it.", calls=calls), Reply(content="Done.")]
    with FakeVLLM(conversations={key(BY_ID[task_id]): conversation}) as server:
        proc = cli(
            "eval", "--base-url", server.base_url, "--tasks", task_id, "--output-dir", str(tmp_path), "--json"
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"]["default"]["summary"]["passed"] == 0
    assert said in (tmp_path / "default" / "tasks" / task_id / "check.log").read_text()
