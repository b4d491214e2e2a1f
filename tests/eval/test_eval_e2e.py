"""`vllm-bot eval` end to end against the scripted server: a reference solver scores 100 %, doing
nothing scores 0, the same scripted model scores the same twice; the report per tier and mode, the
JSON, the verdict and what it says to fix (a server without tool flags, reasoning left in the text,
replies cut by max_tokens); no verdict on an interrupted run, and the command that resumes it."""

import json
import os
import shlex
import shutil
import signal
import time
from pathlib import Path

from batch_support import cli, rows, stalling, start
from eval_support import BY_ID, TASKS, doing_nothing, key, sample, solving

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox.status import probe
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

SANDBOXED = probe(SandboxConfig()).active


def runnable(tasks):
    return [t for t in tasks if not t.missing()]


def run_eval(server, tasks, out, *extra):
    proc = cli(
        "eval", "--base-url", server.base_url, "--tasks", ",".join(t.id for t in tasks),
        "--output-dir", str(out), "--json", *extra,
    )  # fmt: skip
    return proc, (json.loads(proc.stdout) if proc.stdout.strip() else None)


def passed(result, mode="default"):
    return {task_id for task_id, r in result["runs"][mode]["tasks"].items() if r["passed"]}


def test_the_reference_solver_scores_all_and_doing_nothing_scores_nothing(tmp_path):
    chosen = runnable(sample(by=("tier", "language")))
    with FakeVLLM(conversations={key(t): solving(t) for t in chosen}) as server:
        proc, result = run_eval(server, chosen, tmp_path / "solver", "--workers", "4")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert passed(result) == {t.id for t in chosen}
    assert (
        result["verdict"].startswith("strong: ")
        and f"solves {len(chosen)}/{len(chosen)} (100%)" in result["verdict"]
    )
    tiers = result["runs"]["default"]["figures"]["tiers"]
    assert {tier: t["passed"] for tier, t in tiers.items()} == {tier: t["tasks"] for tier, t in tiers.items()}
    assert set(tiers) == {"tools", "file", "repo"}

    with FakeVLLM(conversations={key(t): doing_nothing() for t in chosen}) as server:
        proc, result = run_eval(server, chosen, tmp_path / "nothing", "--workers", "4")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert passed(result) == set() and result["verdict"].startswith("poor: ")
    figures = result["runs"]["default"]["figures"]
    assert figures["tokens_per_solved"] is None and figures["valid_call_rate"] is None


def malformed_then_wrong():
    wrong = "def paginate(items, page, per_page):\n    return items[:per_page]\n\n\ndef page_count(total, per_page):\n    return -(-total // per_page)\n"
    return [
        Reply(calls=[Call("patch", {"path": "pager.py"})]),
        Reply(calls=[Call("write", {"path": "pager.py", "content": wrong})]),
        Reply(content="Fixed."),
    ]


MIXED = ["py-roman", "repo-failing-tree", "tools-read-log", "py-paginate"]


def mixed():
    solved = [BY_ID[t] for t in MIXED[:3]]
    conversations = {key(t): solving(t) for t in solved}
    conversations[key(BY_ID["py-paginate"])] = malformed_then_wrong()
    return conversations


def test_both_modes_scored_per_tier_with_the_tool_call_figures(tmp_path):
    tasks = [BY_ID[t] for t in MIXED]
    with FakeVLLM(conversations=mixed(), prompt_tokens_details=True, metrics={}) as server:
        proc, result = run_eval(server, tasks, tmp_path / "eval", "--modes", "native,text", "--workers", "4")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert result == json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert result["schema_version"] == 2 and result["suite_version"] >= 2 and result["verdict"] is not None
    assert result["sandbox"] == {"active": SANDBOXED, "mode": "auto"} and not result["interrupted"]
    for mode in ("native", "text"):
        run = result["runs"][mode]
        assert passed(result, mode) == set(MIXED[:3]), mode
        assert {t: r["status"] for t, r in run["tasks"].items() if not r["passed"]} == {
            "py-paginate": "failed"
        }
        figures = run["figures"]
        assert figures["tiers"] == {
            "file": {"tasks": 2, "passed": 1},
            "repo": {"tasks": 1, "passed": 1},
            "tools": {"tasks": 1, "passed": 1},
        }
        assert figures["malformed_calls"] == 1 and 0 < figures["valid_call_rate"] < 1
        assert figures["fell_back_tasks"] == 0 and figures["loop_stops"] == 0 and figures["cut_replies"] == 0
        assert figures["tokens_per_solved"] > 0 and figures["cache_hit_rate"] > 0
        assert run["tasks"]["py-paginate"]["malformed_calls"] == 1 and run["summary"]["modes"] == {mode: 4}
    assert result["verdict"].startswith("usable: ") and "solves 3/4 (75%)" in result["verdict"]
    assert "(file 1/2, repo 1/1, tools 1/1)" in result["verdict"] and result["fixes"] == []

    text = cli(
        "eval",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--tasks",
        "py-roman",
        "--output-dir",
        str(tmp_path / "eval"),
    )
    assert text.returncode == 1  # the server is looked at first: nothing runs against a dead one


def test_two_runs_of_one_scripted_model_score_the_same(tmp_path):
    tasks = [BY_ID[t] for t in ("py-roman", "py-paginate")]
    results = []
    for n in range(2):
        with FakeVLLM(conversations=mixed()) as server:
            proc, result = run_eval(server, tasks, tmp_path / str(n), "--workers", "2")
        assert proc.returncode == 0, proc.stderr
        run = result["runs"]["default"]
        same = {
            t: (r["passed"], r["status"], r["iterations"], r["tokens"], r["malformed_calls"])
            for t, r in run["tasks"].items()
        }
        results.append((result["verdict"], same, run["figures"]["tiers"], run["figures"]["valid_call_rate"]))
    assert results[0] == results[1]


def test_a_server_without_tool_flags_is_named_in_what_to_fix(tmp_path):
    task = BY_ID["py-roman"]
    with FakeVLLM(mode="noparser", conversations={key(task): solving(task)}) as server:
        proc, result = run_eval(server, [task], tmp_path / "eval", "--modes", "native,text")
    assert proc.returncode == 0, proc.stderr
    native = result["runs"]["native"]
    assert native["figures"]["fell_back_tasks"] == 1 and native["tasks"]["py-roman"]["mode"] == "native+text"
    [fix] = result["fixes"]
    assert fix.startswith("native: native tool calls failed and 1 of 1 tasks fell back to the text protocol")
    assert "--enable-auto-tool-choice --tool-call-parser" in fix and "doctor`" in fix
    assert "usable in native mode" not in result["verdict"]
    assert "fell back to text" in result["verdict"] or "in text mode" in result["verdict"]


def test_reasoning_in_the_text_and_replies_cut_by_max_tokens_are_named(tmp_path):
    task = BY_ID["py-roman"]
    [write, done] = solving(task)
    script = [
        Reply(reasoning="The subtractive forms are missing.", content=write.content, calls=write.calls),
        Reply(content="The numerals now use the subtractive", finish_reason="length"),
        done,
    ]
    with FakeVLLM(think_in_content=True, conversations={key(task): script}) as server:
        proc, result = run_eval(server, [task], tmp_path / "eval")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    figures = result["runs"]["default"]["figures"]
    assert figures["reasoning_in_text"] == 1 and figures["cut_replies"] == 1 and figures["replies"] == 3
    fixes = "\n".join(result["fixes"])
    assert "--reasoning-parser" in fixes and "replies were cut by max_tokens" in fixes and "doctor" in fixes


def test_an_interrupted_eval_has_no_verdict_and_says_how_to_resume(tmp_path):
    quick, stuck = BY_ID["py-rename-function"], BY_ID["py-roman"]
    args = ["eval", "--tasks", f"{quick.id},{stuck.id}", "--workers", "2", "--json"]
    with FakeVLLM(conversations={key(quick): solving(quick), key(stuck): stalling()}) as server:
        first = start(*args, "--base-url", server.base_url)
        state = Path(os.environ["XDG_STATE_HOME"]) / "vllm-bot" / "eval"  # no --output-dir: a new one
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not [
            r for f in state.glob("*/*/results.jsonl") for r in rows(f)
        ]:
            time.sleep(0.5)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=120)
    assert first.returncode == 3, err
    assert json.loads(out)["verdict"] is None and "interrupted, so no verdict" in err
    hint = err.split("this resumes it: ", 1)[1].splitlines()[0]
    command = shlex.split(hint)
    assert command[:2] == ["python", str(Path(__file__).parents[2] / "cli.py")] and "--output-dir" in command
    out_dir = Path(command[command.index("--output-dir") + 1])
    assert out_dir.parent == state and command[command.index("--tasks") + 1] == f"{quick.id},{stuck.id}"
    saved = json.loads((out_dir / "eval.json").read_text())
    assert saved["verdict"] is None and saved["resume"] == hint

    # the default output dir is in the state dir: the agents still work there (the boundary does
    # not hide a folder from the workspace inside it), and the finished task is not asked again
    with FakeVLLM(conversations={key(stuck): solving(stuck)}) as server:
        command[command.index("--base-url") + 1] = server.base_url
        again = cli(*command[2:])
        server.assert_done()
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["output_dir"] == str(out_dir) and not result["interrupted"] and result["verdict"]
    assert passed(result) == {quick.id, stuck.id}
    assert [r["id"] for f in out_dir.glob("*/results.jsonl") for r in rows(f)] == [quick.id, stuck.id]


def test_help_list_and_a_missing_program(tmp_path, monkeypatch):
    help_text = " ".join(cli("eval", "--help").stdout.split())
    assert (
        "wall clock per task (default 600)" in help_text
        and "model requests per task (default 30)" in help_text
    )
    listing = cli("eval", "--list")
    assert listing.returncode == 0 and f"{len(TASKS)} bundled eval tasks" in listing.stdout
    assert ["repo-feature-depth", "repo", "feature"] in [
        line.split()[:3] for line in listing.stdout.splitlines()
    ]
    assert cli("eval", "--tasks", "nope").returncode == 2
    assert "--modes takes" in cli("eval", "--modes", "fast").stderr
    # no node on PATH: the JavaScript task is skipped, the rest runs; no sandbox: it says so
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "bash", "python3", "cp", "env"):
        (bin_dir / program).symlink_to(shutil.which(program))
    monkeypatch.setenv("PATH", str(bin_dir))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"sandbox": {"mode": "off"}}))
    task = BY_ID["py-roman"]
    with FakeVLLM(conversations={key(task): solving(task)}) as server:
        proc = cli(
            "eval", "--base-url", server.base_url, "--config", str(config), "--tasks", "py-roman,js-sum-range",
            "--output-dir", str(tmp_path / "out"),
        )  # fmt: skip
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert "skipping js-sum-range (node not found)" in proc.stderr
    assert "warning: sandbox.mode is off" in proc.stderr and "hidden tests are hidden" in proc.stderr
    assert "verdict: strong: " in proc.stdout and "solves 1/1 (100%)" in proc.stdout
    assert "py-roman" in proc.stdout and "passed (2 it)" in proc.stdout and "sandbox: OFF" in proc.stdout
    assert "score by tier" in proc.stdout and "tool calls and cost, by mode" in proc.stdout
    saved = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert saved["skipped"] == [{"id": "js-sum-range", "missing": ["node"]}]
    assert saved["sandbox"] == {"active": False, "mode": "off"}


def test_each_scripts_key_names_one_task():
    for task in TASKS:
        assert [t.id for t in TASKS if key(task) in t.task] == [task.id]
