"""`cli.py --demo`: the recorded task runs to completion with the real agent and tools, without a
terminal and without input, on a throwaway copy that is deleted afterwards."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from vllm_bot.demo.runner import copy_sample
from vllm_bot.demo.script import ANSWER, BUGGY_LINE, FIXED_LINE, TEST_COMMAND, demo_script

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_to_completion_without_a_terminal(tmp_path):
    env = {**os.environ, "VLLM_BOT_DEMO_PACE": "0", "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("DEBUG", None)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "--demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(ANSWER.strip())  # the answer streamed to stdout
    err = proc.stderr
    assert "vLLM Bot [DEMO]" in err and "DEMO finished" in err
    for step in ("-> read shop.py", "-> read test_shop.py", f"-> exec {TEST_COMMAND}", "-> edit shop.py"):
        assert step in err
    assert "exec failed: Exit code 1" in err and "exec ok: Exit code 0" in err
    assert f"run `python {shlex.quote(str(ROOT / 'cli.py'))}` in your project" in err  # the command it ran
    assert "\x1b[" not in proc.stdout + err  # no colours or cursor moves without a terminal
    copy = re.search(r"sample project \((\S+)\)", err).group(1)
    assert not Path(copy).exists()  # the throwaway copy is gone
    assert [p.name for p in tmp_path.iterdir()] in ([], ["state"])  # nothing written where it ran


def test_the_sample_project_really_has_the_bug_the_demo_fixes(tmp_path):
    workspace = copy_sample(tmp_path)
    assert sorted(p.name for p in workspace.iterdir()) == ["README.md", "shop.py", "test_shop.py"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def tests():
        return subprocess.run(
            [sys.executable, "-m", "unittest", "-v"], cwd=workspace, capture_output=True, text=True, env=env
        )

    before = tests()
    assert before.returncode == 1 and "FAILED (failures=2)" in before.stderr
    source = (workspace / "shop.py").read_text()
    assert source.count(BUGGY_LINE) == 1  # the scripted edit matches exactly one place
    (workspace / "shop.py").write_text(source.replace(BUGGY_LINE, FIXED_LINE))
    after = tests()
    assert after.returncode == 0 and "Ran 4 tests" in after.stderr


def test_demo_pace_sets_a_lifelike_stream():
    assert all(reply.latency == 0.05 for reply in demo_script(1.0))
    assert all(reply.latency == 0.0 for reply in demo_script(0))
