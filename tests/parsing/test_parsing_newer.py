"""Newer vLLM families whose facts need a tool schema of their own (nested MiniMax-M3 values)."""

from __future__ import annotations

from typing import Any

from vllm_bot.parsing import StreamFilter, extract_tool_calls, parse_tool_calls

NS = "]<]minimax[>["

ORDER: dict[str, Any] = {  # the tool of vLLM's tests/tool_parsers/test_minimax_m3_tool_parser.py
    "type": "function",
    "function": {
        "name": "create_order",
        "parameters": {
            "type": "object",
            "properties": {
                "user_id": {"type": "integer"},
                "urgent": {"type": "boolean"},
                "note": {"type": "string"},
                "shipping": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
                },
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                    },
                },
                "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                "duplicate_demo": {"type": "object"},
            },
        },
    },
}


def m3(*parts: str) -> str:
    return "".join(f"{NS}{p}" for p in parts)


ORDER_CALL = (
    f"{NS}<tool_call>\n"
    + m3('<invoke name="create_order">', "<user_id>42", "</user_id>", "<urgent>true", "</urgent>")
    + m3("<note>Please leave at front desk.", "</note>")
    + m3("<shipping>", "<city>Singapore", "</city>", "<zip>018956", "</zip>", "</shipping>")
    + m3("<items>", "<item>", "<sku>book-001", "</sku>", "<qty>2", "</qty>", "</item>")
    + m3("<item>", "<sku>pen-007", "</sku>", "<qty>5", "</qty>", "</item>", "</items>")
    + m3("<metadata>", "<source>mobile", "</source>", "<campaign>may-launch", "</campaign>", "</metadata>")
    + m3("<duplicate_demo>", "<tag>a", "</tag>", "<tag>b", "</tag>", "</duplicate_demo>", "</invoke>")
    + f"\n{NS}</tool_call>"
)


def test_minimax_m3_nested_values_follow_the_schema() -> None:
    extraction = extract_tool_calls("I will create it.\n" + ORDER_CALL, [ORDER])
    (call,) = extraction.calls
    assert call.error is None, call.error
    assert call.name == "create_order"
    assert call.arguments == {
        "user_id": 42,
        "urgent": True,
        "note": "Please leave at front desk.",
        "shipping": {"city": "Singapore", "zip": 18956},
        "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen-007", "qty": 5}],
        "metadata": {"source": "mobile", "campaign": "may-launch"},
        "duplicate_demo": {"tag": ["a", "b"]},
    }
    assert extraction.content == "I will create it."


def test_minimax_m3_multiple_invokes_share_one_block() -> None:
    block = f"{NS}<tool_call>\n" + "\n".join(
        m3('<invoke name="create_order">', f"<user_id>{n}", "</user_id>", "</invoke>") for n in (1, 2)
    )
    calls = parse_tool_calls(block + f"\n{NS}</tool_call>", [ORDER])
    assert [c.arguments for c in calls] == [{"user_id": 1}, {"user_id": 2}]


def test_minimax_m3_half_written_start_is_held_then_released() -> None:
    f = StreamFilter([ORDER])
    shown = f.feed(f"plain {NS}<tool_ca") + f.flush()
    assert shown == f"plain {NS}<tool_ca"
    assert parse_tool_calls(f"plain {NS}<tool_ca", [ORDER]) == []


def test_minimax_m3_deep_nesting_is_an_error_call_not_a_crash() -> None:
    deep = m3('<invoke name="create_order">', *["<note>"] * 100, "x", *["</note>"] * 100, "</invoke>")
    (call,) = parse_tool_calls(f"{NS}<tool_call>{deep}{NS}</tool_call>", [ORDER])
    assert call.error is not None and "nest too deep" in call.error


def test_streamed_m3_call_never_prints_its_syntax() -> None:
    text = "Creating it.\n" + ORDER_CALL
    f = StreamFilter([ORDER])
    printed = "".join(f.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + f.flush()
    assert printed.strip() == "Creating it."
