"""Saved sessions: lossless entries, the recorder, torn lines, crash repair, finding sessions."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_bot.calls import AssistantTurn, ToolCall, ToolResult, Usage
from vllm_bot.conversation import Conversation, ToolResults, UserMessage, answer_calls
from vllm_bot.events import IterationStarted, ModeSwitched, TaskFinished, ToolCallFinished, TurnFinished
from vllm_bot.history.session_codec import INTERRUPTED, NOT_RUN, entry_from_dict, entry_to_dict, repair
from vllm_bot.history.session_recorder import SessionRecorder
from vllm_bot.history.sessions import SessionLog, SessionNotFound, find_session, list_sessions, load_session

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
calls = st.builds(
    ToolCall,
    id=st.text(min_size=1),
    name=st.text(),
    arguments=st.dictionaries(st.text(), json_values, max_size=3),
    metadata=st.dictionaries(st.text(), json_values, max_size=2),
)
usages = st.none() | st.builds(
    Usage, st.integers(0, 10**6), st.integers(0, 10**6), st.none() | st.integers(0, 10**6)
)
turns = st.builds(
    AssistantTurn,
    content=st.text(),
    tool_calls=st.lists(calls, max_size=3),
    reasoning=st.text(),
    finish_reason=st.none() | st.sampled_from(["stop", "tool_calls", "length"]),
    usage=usages,
    via=st.sampled_from(["native", "text"]),
    raw_content=st.none() | st.text(),
    partial=st.booleans(),
)
results = st.builds(
    ToolResult,
    tool_call_id=st.text(min_size=1),
    name=st.text(),
    kind=st.sampled_from(["text", "data", "error"]),
    value=json_values,
)
entries = st.one_of(
    st.builds(UserMessage, st.text(), st.sampled_from(["task", "note", "summary"])),
    turns,
    st.builds(ToolResults, st.lists(results, max_size=3), st.sampled_from(["native", "text"])),
)


@settings(deadline=None)
@given(st.lists(entries, max_size=6))
def test_entries_survive_a_json_round_trip_exactly(items):
    for entry in items:
        line = json.dumps(entry_to_dict(entry), ensure_ascii=False)
        assert entry_from_dict(json.loads(line)) == entry


def call(i, name="exec"):
    return ToolCall(f"call_{i}", name, {"command": f"step {i}"})


def simulate_loop(conversation, emit, task, calls_per_turn, answer="done"):
    """What Agent.run does to the conversation and the events, in the same order."""
    conversation.add_user(task)
    for iteration, calls_ in enumerate([*calls_per_turn, []], 1):
        emit(IterationStarted(iteration, 50))
        turn = AssistantTurn("" if calls_ else answer, calls_, usage=Usage(10, 2))
        emit(TurnFinished(turn, 0.1))
        conversation.add_turn(turn)
        if not calls_:
            break
        results_ = []
        for c in calls_:
            result = ToolResult(c.id, c.name, "text", f"ran {c.id}")
            emit(ToolCallFinished(c, result, 0.0))
            results_.append(result)
        conversation.add_results(results_, "native")
    emit(TaskFinished("done", answer, 0, iteration))


def recorder_for(tmp_path, conversation, name="s1"):
    log = SessionLog(tmp_path / "sessions" / f"{name}.jsonl")
    return SessionRecorder(log, conversation, lambda: {"id": name, "model": "m", "function_calling": True})


def test_recorded_session_loads_back_as_the_same_conversation(tmp_path):
    conv = Conversation()
    rec = recorder_for(tmp_path, conv)
    simulate_loop(conv, rec, "first task", [[call(1), call(2)], [call(3)]])
    rec(ModeSwitched(False, "no parser"))
    simulate_loop(conv, rec, "second task", [])
    rec.close()
    loaded = load_session(tmp_path / "sessions" / "s1.jsonl")
    assert loaded.entries == conv.entries
    assert loaded.turns == 2 and loaded.first_task == "first task"
    assert loaded.function_calling is False and loaded.tasks_finished == 2
    assert loaded.usage().prompt_tokens == 40 and loaded.interrupted_calls == 0 and not loaded.warnings


def test_no_file_for_a_session_without_a_task(tmp_path):
    rec = recorder_for(tmp_path, Conversation())
    rec.close()
    assert not (tmp_path / "sessions").exists()


def test_crash_mid_tool_call_gets_interrupted_results_and_keeps_finished_ones(tmp_path):
    conv = Conversation()
    rec = recorder_for(tmp_path, conv)
    conv.add_user("task")
    rec(IterationStarted(1, 50))
    turn = AssistantTurn("", [call(1), call(2), call(3)])
    rec(TurnFinished(turn, 0.1))
    conv.add_turn(turn)
    rec(ToolCallFinished(call(1), ToolResult("call_1", "exec", "text", "ok"), 0.0))
    # killed while call_2 runs: no more records
    loaded = load_session(tmp_path / "sessions" / "s1.jsonl")
    assert loaded.interrupted_calls == 2
    results = loaded.entries[-1]
    assert isinstance(results, ToolResults)
    assert [(r.tool_call_id, r.kind) for r in results.results] == [
        ("call_1", "text"),
        ("call_2", "error"),
        ("call_3", "error"),
    ]
    assert results.results[1].value == INTERRUPTED


def test_a_torn_last_line_is_dropped_and_appending_continues_cleanly(tmp_path):
    conv = Conversation()
    rec = recorder_for(tmp_path, conv)
    simulate_loop(conv, rec, "task", [[call(1)]])
    path = tmp_path / "sessions" / "s1.jsonl"
    with path.open("a") as f:
        f.write('{"type": "entry", "entry": {"entry": "user", "con')  # the crash cut this line
    loaded = load_session(path)
    assert loaded.entries == conv.entries and "cut off" in loaded.warnings[0]
    log = SessionLog(path)
    log.write({"type": "task", "reason": "done", "exit_code": 0, "iterations": 1})
    log.close()
    again = load_session(path)
    assert not again.warnings and again.tasks_finished == 2


def test_a_damaged_middle_line_is_reported_and_skipped(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [
        {"type": "meta", "id": "s"},
        {"type": "entry", "entry": {"entry": "user", "content": "a", "kind": "task"}},
    ]
    path.write_text(json.dumps(lines[0]) + "\nnot json\n" + json.dumps(lines[1]) + "\n")
    loaded = load_session(path)
    assert loaded.entries == [UserMessage("a")] and "line 2" in loaded.warnings[0]


def test_clear_writes_a_reset_and_the_new_history(tmp_path):
    conv = Conversation()
    rec = recorder_for(tmp_path, conv)
    simulate_loop(conv, rec, "old task", [[call(1)]])
    conv.clear()
    simulate_loop(conv, rec, "new task", [])
    rec.close()
    loaded = load_session(tmp_path / "sessions" / "s1.jsonl")
    assert loaded.entries == conv.entries and loaded.first_task == "new task"


def test_repair_answers_partial_turns_and_merges_missing_results():
    partial = AssistantTurn("", [call(1)], partial=True)
    complete = AssistantTurn("", [call(2), call(3)])
    fixed, added = repair(
        [
            UserMessage("t"),
            partial,
            UserMessage("next"),
            complete,
            ToolResults([ToolResult("call_3", "exec", "text", "ok")]),
        ]
    )
    assert added == 2
    assert fixed[2] == ToolResults([ToolResult("call_1", "exec", "error", NOT_RUN)])
    assert [r.tool_call_id for r in fixed[-1].results] == ["call_2", "call_3"]
    assert len(fixed) == 6


# deadline=None: each example fsyncs a few lines; disk latency is not what this test is about.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(1, 3), max_size=4), st.integers(0, 12))
def test_every_call_has_exactly_one_result_after_repair(tmp_path, shape, cut):
    """Whatever prefix of a session survives a crash, the repaired history pairs calls and results."""
    path = tmp_path / "sessions" / "p.jsonl"
    path.unlink(missing_ok=True)
    conv = Conversation()
    rec = recorder_for(tmp_path, conv, name="p")
    counter = iter(range(1000))
    simulate_loop(conv, rec, "t", [[call(next(counter)) for _ in range(n)] for n in shape])
    rec.close()
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: max(1, len(lines) - cut)]))
    loaded = load_session(path)
    seen: dict[str, int] = {}
    for entry in loaded.entries:
        if isinstance(entry, AssistantTurn):
            seen.update({c.id: 0 for c in entry.tool_calls})
        elif isinstance(entry, ToolResults):
            for r in entry.results:
                seen[r.tool_call_id] += 1
    assert all(n == 1 for n in seen.values()), seen


def test_find_and_list_sessions(tmp_path):
    state = tmp_path / ".vllm-bot"
    with pytest.raises(SessionNotFound):
        find_session(state, None)
    for name, task in [("20250101-100000-aaaa", "older"), ("20250102-100000-bbbb", "newer")]:
        conv = Conversation()
        rec = SessionRecorder(SessionLog(state / "sessions" / f"{name}.jsonl"), conv, lambda: {})
        simulate_loop(conv, rec, task, [])
        rec.close()
    assert [s.first_task for s in list_sessions(state)] == ["newer", "older"]
    assert find_session(state, None).first_task == "newer"
    assert find_session(state, "20250101").first_task == "older"
    with pytest.raises(SessionNotFound, match="several"):
        find_session(state, "2025")
    with pytest.raises(SessionNotFound, match="no session"):
        find_session(state, "1999")


@settings(deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=6), st.lists(st.sampled_from("abcde"), max_size=6))
def test_answer_calls_gives_each_call_exactly_one_result_in_call_order(ids, answered):
    calls_ = [ToolCall(i, "read", {}) for i in ids]
    have = [ToolResult(i, "read", "text", f"ran {i} #{n}") for n, i in enumerate(answered)]
    fixed = answer_calls(calls_, have, "not run", first="stopped")
    assert [r.tool_call_id for r in fixed] == ids
    errors = [r for r in fixed if r.kind == "error"]
    assert [r.value for r in errors] == ["stopped", *["not run"] * (len(errors) - 1)][: len(errors)]
    assert len(fixed) - len(errors) == sum(min(ids.count(i), answered.count(i)) for i in set(ids))
