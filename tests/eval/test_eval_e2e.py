"""`vllm-bot eval` end to end against the scripted server: some tasks solved (the scripted model
writes the reference solution), some failed (it gives up, or sends a malformed call and a wrong fix),
in both tool-call modes; the report, the JSON and the verdict say so."""

import json
import os
import shlex
import shutil
import signal
import time
from pathlib import Path

import yaml
from batch_support import cli, rows, stalling, start

from vllm_bot.config import SandboxConfig
from vllm_bot.eval.suite import bundled
from vllm_bot.safety.sandbox.status import probe
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

SOLUTIONS = yaml.safe_load((Path(__file__).parent / "solutions.yaml").read_text())
TASKS = {t.id: t for t in bundled()}
SOLVED = ["py-roman", "py-rename-function", "sh-count-lines", "js-sum-range"]
FAILED = ["py-stack", "py-paginate"]


def key(task_id):
    return TASKS[task_id].task.splitlines()[0]


def solving(task_id):
    writes = [Call("write", {"path": path, "content": text}) for path, text in SOLUTIONS[task_id].items()]
    return [Reply(content="Writing the fix.", calls=writes), Reply(content="Done: the fix is in place.")]


def malformed_then_wrong():
    wrong = "def paginate(items, page, per_page):\n    return items[:per_page]\n\n\ndef page_count(total, per_page):\n    return -(-total // per_page)\n"
    return [
        Reply(calls=[Call("patch", {"path": "pager.py"})]),
        Reply(calls=[Call("write", {"path": "pager.py", "content": wrong})]),
        Reply(content="Fixed."),
    ]


def scripts(solved):
    conversations = {key(t): solving(t) for t in solved}
    conversations[key("py-stack")] = [Reply(content="This needs more context than I have.")]
    conversations[key("py-paginate")] = malformed_then_wrong()
    return conversations


def test_eval_scores_both_modes_and_gives_a_verdict(tmp_path):
    solved = [t for t in SOLVED if not TASKS[t].missing()]
    chosen = ",".join(solved + FAILED)
    out = tmp_path / "eval"
    with FakeVLLM(conversations=scripts(solved), prompt_tokens_details=True, metrics={}) as server:
        proc = cli(
            "eval",
            "--base-url",
            server.base_url,
            "--tasks",
            chosen,
            "--modes",
            "native,text",
            "--workers",
            "6",
            "--output-dir",
            str(out),
            "--json",
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert ("hidden tests" in proc.stderr) is not probe(SandboxConfig()).active  # warned only unsandboxed
    result = json.loads(proc.stdout)
    assert result == json.loads((out / "eval.json").read_text())
    assert result["model"] == server.model and result["suite_version"] >= 1 and not result["interrupted"]
    for mode in ("native", "text"):
        run = result["runs"][mode]
        assert {t for t, r in run["tasks"].items() if r["passed"]} == set(solved), mode
        assert {t: r["status"] for t, r in run["tasks"].items() if not r["passed"]} == {
            "py-stack": "failed",
            "py-paginate": "failed",
        }
        assert (
            run["tasks"]["py-paginate"]["malformed_calls"] == 1
            and run["tasks"]["py-roman"]["malformed_calls"] == 0
        )
        assert run["summary"]["passed"] == len(solved) and run["summary"]["modes"] == {mode: len(solved) + 2}
        assert run["server"]["cache_hit_rate"] > 0
    n = len(solved) + 2
    assert (
        result["verdict"].startswith(("usable", "weak")) and f"solves {len(solved)}/{n}" in result["verdict"]
    )
    # the agent never saw the hidden tests: they are not in the repositories it copied
    assert not list((out / "suite" / "repos").rglob("hidden_test*"))


def test_eval_text_report_list_and_a_missing_program_skip_cleanly(tmp_path, monkeypatch):
    listing = cli("eval", "--list")
    assert (
        listing.returncode == 0
        and "24 bundled eval tasks" in listing.stdout
        and "js-parse-query" in listing.stdout
    )
    assert cli("eval", "--tasks", "nope").returncode == 2
    assert "--modes takes" in cli("eval", "--modes", "fast").stderr
    # no node on PATH: the JavaScript task is skipped, the rest runs
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "bash", "python3", "cp", "env"):
        (bin_dir / program).symlink_to(shutil.which(program))
    monkeypatch.setenv("PATH", str(bin_dir))
    config = tmp_path / "config.json"  # and no sandbox: the hidden tests are not hidden, and it says so
    config.write_text(json.dumps({"sandbox": {"mode": "off"}}))
    with FakeVLLM(conversations={key("py-roman"): solving("py-roman")}) as server:
        proc = cli(
            "eval",
            "--base-url",
            server.base_url,
            "--config",
            str(config),
            "--tasks",
            "py-roman,js-sum-range",
            "--output-dir",
            str(tmp_path / "out"),
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "skipping js-sum-range (node not found)" in proc.stderr
    assert "warning: sandbox.mode is off" in proc.stderr and "hidden tests are hidden" in proc.stderr
    assert "verdict: strong: " in proc.stdout and "solves 1/1 (100%)" in proc.stdout
    assert "py-roman" in proc.stdout and "passed (2 it)" in proc.stdout
    saved = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert saved["skipped"] == [{"id": "js-sum-range", "missing": ["node"]}]


def test_an_interrupted_eval_says_how_to_resume_and_that_command_finishes_it(tmp_path):
    quick, stuck = "py-rename-function", "py-roman"
    args = ["eval", "--tasks", f"{quick},{stuck}", "--workers", "2", "--json"]
    with FakeVLLM(conversations={key(quick): solving(quick), key(stuck): stalling()}) as server:
        first = start(*args, "--base-url", server.base_url)
        state = Path(os.environ["XDG_STATE_HOME"]) / "vllm-bot" / "eval"  # no --output-dir: a new one
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not [
            r for f in state.glob("*/*/results.jsonl") for r in rows(f)
        ]:
            time.sleep(0.5)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=120)
    assert first.returncode == 3, err
    hint = err.split("this resumes it: ", 1)[1].splitlines()[0]
    command = shlex.split(hint)
    assert command[:2] == ["python", str(Path(__file__).parents[2] / "cli.py")] and "--output-dir" in command
    out = Path(command[command.index("--output-dir") + 1])
    assert out.parent == state and command[command.index("--tasks") + 1] == f"{quick},{stuck}"

    with FakeVLLM(
        conversations={key(stuck): solving(stuck)}
    ) as server:  # the finished task is not asked again
        command[command.index("--base-url") + 1] = server.base_url
        again = cli(*command[2:])
        server.assert_done()
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["output_dir"] == str(out) and not result["interrupted"]
    assert {t: r["passed"] for t, r in result["runs"]["default"]["tasks"].items()} == {
        quick: True,
        stuck: True,
    }
    assert [r["id"] for f in out.glob("*/results.jsonl") for r in rows(f)] == [quick, stuck]


def test_each_scripts_key_names_one_task():
    """The fake server finds a task's conversation by the first line of its text."""
    for task_id in TASKS:
        assert [t for t in TASKS if key(task_id) in TASKS[t].task] == [task_id]
