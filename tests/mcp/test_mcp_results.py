"""MCP call results (wire form) -> ToolResult of the right kind."""

import json

import pytest

from vllm_bot.calls import AssistantTurn, ToolCall
from vllm_bot.conversation import Conversation, ToolResults
from vllm_bot.mcp.results import cap, convert_result
from vllm_bot.model.context import shrink_results

PNG = "iVBORw0KGgo" * 4


def text(value):
    return {"type": "text", "text": value}


@pytest.mark.parametrize(
    ("result", "kind", "value"),
    [
        ({"content": [text("hello")]}, "text", "hello"),
        ({"content": [text("a"), text("b")]}, "text", "a\nb"),
        ({"content": []}, "text", "(the tool returned no output)"),
        ({"content": [text("no such repo")], "isError": True}, "error", "no such repo"),
        ({"content": [], "isError": True}, "error", "the tool failed without a message"),
        # Structured content that the text only repeats becomes data.
        ({"content": [text('{"n": 3}')], "structuredContent": {"n": 3}}, "data", {"n": 3}),
        ({"content": [], "structuredContent": [1, 2]}, "data", [1, 2]),
        # Text that says something else wins over the structured form.
        ({"content": [text("echo: hi")], "structuredContent": {"result": "echo: hi"}}, "text", "echo: hi"),
        # An error with structured content is still an error.
        ({"content": [text("bad")], "structuredContent": {"e": 1}, "isError": True}, "error", "bad"),
        (
            {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
            "text",
            f"[image image/png, {len(PNG) * 3 // 4} bytes, not shown]",
        ),
        (
            {"content": [{"type": "audio", "data": "A" * 40000, "mimeType": "audio/wav"}]},
            "text",
            "[audio audio/wav, 29 KB, not shown]",
        ),
        (
            {"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}}]},
            "text",
            "[resource file:///a.txt]\nbody",
        ),
        (
            {
                "content": [
                    {
                        "type": "resource",
                        "resource": {"uri": "s3://b/x", "blob": "AAAA", "mimeType": "application/zip"},
                    }
                ]
            },
            "text",
            "[resource s3://b/x (application/zip), 3 bytes, binary, not shown]",
        ),
        (
            {
                "content": [
                    {"type": "resource_link", "name": "log", "uri": "https://h/l", "description": "CI log"}
                ]
            },
            "text",
            "[resource link log https://h/l: CI log]",
        ),
        # A blob whose MIME type is text is text (server-everything's text/plain blobs).
        (
            {
                "content": [
                    {
                        "type": "resource",
                        "resource": {"uri": "demo://a", "blob": "aGVsbG8K", "mimeType": "text/plain"},
                    }
                ]
            },
            "text",
            "[resource demo://a (text/plain)]\nhello\n",
        ),
        # ... unless it does not decode as UTF-8.
        (
            {
                "content": [
                    {"type": "resource", "resource": {"uri": "x:b", "blob": "/w==", "mimeType": "text/csv"}}
                ]
            },
            "text",
            "[resource x:b (text/csv), 1 bytes, binary, not shown]",
        ),
        ({"content": [{"type": "hologram"}]}, "text", "[hologram content, not shown]"),
        # An image next to structured content: the data alone would lose it, so text.
        (
            {
                "content": [text("{}"), {"type": "image", "data": "", "mimeType": "image/png"}],
                "structuredContent": {},
            },
            "text",
            "{}\n[image image/png, 0 bytes, not shown]",
        ),
    ],
)
def test_conversion_table(result, kind, value):
    converted = convert_result("call_1", "mcp__s__t", result, 1000)
    assert (converted.tool_call_id, converted.name) == ("call_1", "mcp__s__t")
    assert (converted.kind, converted.value) == (kind, value)


def test_long_text_is_capped_with_head_and_tail():
    long = "".join(f"line {i}\n" for i in range(5000))
    converted = convert_result("c", "t", {"content": [text(long)]}, 3000)
    assert converted.value.startswith("line 0\n") and converted.value.rstrip().endswith("line 4999")
    [marker] = [line for line in converted.value.splitlines() if line.startswith("[...")]
    assert marker.endswith(
        "characters cut here: the output is too long. Ask the tool for less (a narrower query, a filter or a page) ...]"
    )
    assert 2900 < len(converted.value) <= 3000


def test_large_structured_content_falls_back_to_capped_json_text():
    value = {"rows": list(range(5000))}
    converted = convert_result("c", "t", {"content": [], "structuredContent": value}, 2000)
    assert converted.kind == "text" and converted.value.startswith(json.dumps(value)[:100])
    assert len(converted.value) <= 2000


def test_resource_links_say_how_to_read_them_when_the_server_is_known():
    link = {"type": "resource_link", "name": "doc", "uri": "demo://r/1", "mimeType": "text/markdown"}
    converted = convert_result("c", "t", {"content": [link]}, 1000, server="everything")
    assert converted.value == (
        '[resource link doc demo://r/1 (text/markdown); read it with mcp_read_resource(server="everything", '
        'uri="demo://r/1")]'
    )


def test_cap_keeps_short_text():
    assert cap("short", 10) == "short"


def test_a_capped_result_cut_again_for_the_window_carries_one_marker():
    """The MCP cap and the context window's cut do not stack two markers (the second with advice
    meant for read): one marker, the total count, advice an MCP tool can follow."""
    long = "".join(f"line {i:05d}\n" for i in range(5000))  # 55,000 characters
    conversation = Conversation()
    conversation.add_user("task")
    for i in range(2):
        call = ToolCall(f"c{i}", "mcp__s__t", {})
        conversation.add_turn(AssistantTurn(content="", tool_calls=[call]))
        conversation.add_results(
            [convert_result(call.id, call.name, {"content": [text(long)]}, 20000)], "native"
        )
    assert shrink_results(conversation, keep_turns=1, keep_chars=2000) == 1
    cut = next(e.results[0].value for e in conversation.entries if isinstance(e, ToolResults))
    markers = [line for line in cut.splitlines() if line.startswith("[...")]
    assert len(markers) == 1 and "read with offset" not in markers[0]
    kept = len(cut) - len(markers[0]) - 2  # the original text left around the marker line
    assert markers[0].startswith(f"[... {len(long) - kept} characters")
    assert cut.startswith("line 00000\n") and cut.endswith("line 04999\n")
