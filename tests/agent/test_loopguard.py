"""Loop guard table: repeats, ping-pong and repeated errors trigger; legitimate repetition does not."""

import pytest

from vllm_bot.agent.loopguard import LoopGuard
from vllm_bot.calls import ToolCall, ToolResult


def step(name, args, ok=True, out="ok"):
    call = ToolCall("id", name, args)
    return call, ToolResult("id", name, "text" if ok else "error", out)


READ = lambda p: step("read", {"path": p})  # noqa: E731
TEST = step("exec", {"command": "pytest -q"}, ok=False, out="1 failed")
TEST_OK = step("exec", {"command": "pytest -q"})
EDIT = lambda n: step("edit", {"path": "a.py", "oldText": f"v{n}", "newText": f"v{n + 1}"})  # noqa: E731
LS = step("exec", {"command": "ls"})
BAD = step("edit", {"path": "a.py", "oldText": "zzz", "newText": "y"}, ok=False, out="no match for oldText")


def run(steps, warn=3, stop=5):
    guard = LoopGuard(warn, stop)
    actions = []
    for call, result in steps:
        verdict = guard.observe([call], [result])
        actions.append(verdict.action)
        if verdict.action == "stop":
            break
    return actions


CASES = {
    # name: (steps, expected actions)
    "same call 3x gets a note": ([LS] * 3, ["ok", "ok", "note"]),
    "same call 5x stops": ([LS] * 6, ["ok", "ok", "note", "ok", "stop"]),
    "ping-pong A-B x3 cycles notes, x5 stops": (
        [READ("a"), READ("b")] * 6,
        ["ok"] * 5 + ["note"] + ["ok"] * 3 + ["stop"],
    ),
    "same error 5x stops even with different calls": (
        [
            step("edit", {"path": "a.py", "oldText": f"x{i}", "newText": "y"}, ok=False, out="no match")
            for i in range(5)
        ],
        ["ok", "ok", "note", "ok", "stop"],
    ),
    "repeated identical bad edit stops": ([BAD] * 5, ["ok", "ok", "note", "ok", "stop"]),
}

NEGATIVES = {
    "reading 20 different files": [READ(f"f{i}.py") for i in range(20)],
    "tests after each edit": [s for n in range(10) for s in (EDIT(n), TEST)],
    "edit-test cycles that pass in the end": [s for n in range(8) for s in (EDIT(n), TEST)]
    + [EDIT(9), TEST_OK],
    "same command twice then something else, repeated": [LS, LS, READ("a")] * 5,
    "three files in rotation": [READ("a"), READ("b"), READ("c")] * 5,
    "different failing commands": [
        step("exec", {"command": f"make t{i}"}, ok=False, out=f"err {i}") for i in range(10)
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_triggers(name):
    steps, expected = CASES[name]
    assert run(steps) == expected


@pytest.mark.parametrize("name", list(NEGATIVES))
def test_legitimate_repetition_never_triggers(name):
    assert set(run(NEGATIVES[name])) == {"ok"}


def test_note_given_once_per_streak():
    actions = run([LS] * 4, warn=3, stop=10)
    assert actions.count("note") == 1


def test_parallel_calls_in_one_turn_are_counted_in_order():
    guard = LoopGuard(3, 5)
    calls, results = zip(*[LS, LS, LS], strict=True)
    assert guard.observe(list(calls), list(results)).action == "note"


def test_a_long_task_of_big_writes_is_not_kept_alive_by_the_guard():
    import tracemalloc

    guard = LoopGuard()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(300):  # 300 distinct 10 kB writes (the history compacts them away meanwhile)
            call, result = step("write", {"path": f"f{n}.py", "content": f"# {n}\n" + "x = 1\n" * 1700})
            assert guard.observe([call], [result]).action == "ok"
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 300_000  # their signatures alone would be 3 MB
    verdicts = [guard.observe([READ("a")[0]], [READ("a")[1]]).action for _ in range(5)]
    assert verdicts == ["ok", "ok", "note", "ok", "stop"]  # the same guard still catches a repeat
