"""Newer vLLM families whose facts need a tool schema of their own (nested MiniMax-M3 values)."""

from __future__ import annotations

from typing import Any

from vllm_bot.parsing import StreamFilter, extract_tool_calls, parse_tool_calls

NS = "]<]minimax[>["

# Our own tool: one parameter of every kind a MiniMax-M3 value can nest into (scalars, an object,
# an array of objects, a free-form object of strings, an object without properties).
RELEASE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "plan_release",
        "parameters": {
            "type": "object",
            "properties": {
                "build": {"type": "integer"},
                "dry_run": {"type": "boolean"},
                "summary": {"type": "string"},
                "target": {
                    "type": "object",
                    "properties": {"branch": {"type": "string"}, "pr": {"type": "integer"}},
                },
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"task": {"type": "string"}, "retries": {"type": "integer"}},
                    },
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extras": {"type": "object"},
            },
        },
    },
}


def m3(*parts: str) -> str:
    return "".join(f"{NS}{p}" for p in parts)


RELEASE_CALL = (
    f"{NS}<tool_call>\n"
    + m3('<invoke name="plan_release">', "<build>317", "</build>", "<dry_run>true", "</dry_run>")
    + m3("<summary>Ship the parser fixes before the freeze.", "</summary>")
    + m3("<target>", "<branch>release/2.4", "</branch>", "<pr>00731", "</pr>", "</target>")
    + m3("<steps>", "<item>", "<task>lint", "</task>", "<retries>1", "</retries>", "</item>")
    + m3("<item>", "<task>unit-tests", "</task>", "<retries>3", "</retries>", "</item>", "</steps>")
    + m3("<labels>", "<owner>parser-team", "</owner>", "<channel>nightly", "</channel>", "</labels>")
    + m3("<extras>", "<flag>x", "</flag>", "<flag>y", "</flag>", "</extras>", "</invoke>")
    + f"\n{NS}</tool_call>"
)


def test_minimax_m3_nested_values_follow_the_schema() -> None:
    extraction = extract_tool_calls("Planning the release.\n" + RELEASE_CALL, [RELEASE])
    (call,) = extraction.calls
    assert call.error is None, call.error
    assert call.name == "plan_release"
    assert call.arguments == {
        "build": 317,
        "dry_run": True,
        "summary": "Ship the parser fixes before the freeze.",
        "target": {"branch": "release/2.4", "pr": 731},
        "steps": [{"task": "lint", "retries": 1}, {"task": "unit-tests", "retries": 3}],
        "labels": {"owner": "parser-team", "channel": "nightly"},
        "extras": {"flag": ["x", "y"]},
    }
    assert extraction.content == "Planning the release."


def test_minimax_m3_multiple_invokes_share_one_block() -> None:
    block = f"{NS}<tool_call>\n" + "\n".join(
        m3('<invoke name="plan_release">', f"<build>{n}", "</build>", "</invoke>") for n in (7, 12)
    )
    calls = parse_tool_calls(block + f"\n{NS}</tool_call>", [RELEASE])
    assert [c.arguments for c in calls] == [{"build": 7}, {"build": 12}]


def test_minimax_m3_half_written_start_is_held_then_released() -> None:
    f = StreamFilter([RELEASE])
    half = f"Next I run the build {NS}<tool_c"
    held = f.feed(half)
    assert held == "Next I run the build "
    assert held + f.flush() == half
    assert parse_tool_calls(half, [RELEASE]) == []


def test_minimax_m3_deep_nesting_is_an_error_call_not_a_crash() -> None:
    deep = m3('<invoke name="plan_release">', *["<summary>"] * 100, "x", *["</summary>"] * 100, "</invoke>")
    (call,) = parse_tool_calls(f"{NS}<tool_call>{deep}{NS}</tool_call>", [RELEASE])
    assert call.error is not None and "nest too deep" in call.error


def test_streamed_m3_call_never_prints_its_syntax() -> None:
    text = "Planning it.\n" + RELEASE_CALL
    f = StreamFilter([RELEASE])
    printed = "".join(f.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + f.flush()
    assert printed.strip() == "Planning it."
