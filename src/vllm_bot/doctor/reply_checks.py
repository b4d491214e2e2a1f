"""Checks on what the replies carry: parallel calls, long arguments through streaming, reasoning
separation, usage in streams, and the agent's text protocol as the fallback."""

from __future__ import annotations

from typing import Any

from ..parsing import extract_tool_calls
from .knowledge import Family, Knowledge
from .probes import LONG_TEXT, Outcome, Probe, first_difference, same_calls
from .report import Advice, Check
from .tool_checks import ToolVerdict, describe_calls, truncated, truncated_fix

UPGRADE = "a vLLM streaming bug in this tool parser: upgrade vLLM (pip install -U vllm) or report it"


def parallel_check(verdict: ToolVerdict, outcome: Outcome) -> Check | None:
    """None when the verdict is not about native calls (the caller reports those like any tool check)."""
    title = "parallel calls"
    if verdict.kind == "native":
        return Check(
            "parallel_calls", title, "pass", f"two calls in one reply: {describe_calls(outcome.calls)}"
        )
    if verdict.kind != "wrong_arguments":
        return None
    detail = f"asked for two calls at once, got {len(outcome.calls)}: {describe_calls(outcome.calls)}"
    fix = "nothing to fix for the agent: it makes one call per turn when a model does not batch them"
    return Check("parallel_calls", title, "warn", detail, fix, {"calls": len(outcome.calls)})


def long_result(outcome: Outcome, probe: Probe) -> tuple[str, str]:
    """("intact" | "repaired" | "invalid" | "changed" | "missing", detail) for the long-argument call."""
    call = next((c for c in outcome.calls if c.name == "write"), None)
    if call is None:
        return (
            "missing",
            f"no write call came back: {describe_calls(outcome.calls) or outcome.excerpt(120)!r}",
        )
    if call.error:
        return "invalid", call.error
    if same_calls([call], probe.expected):
        note = call.metadata.get("repaired")
        return ("repaired", str(note)) if note else ("intact", "")
    return "changed", first_difference(str(call.arguments.get("content", "")), LONG_TEXT)


def long_check(streamed: tuple[str, str], whole: tuple[str, str] | None) -> Check:
    """`whole` is the non-streamed rerun, made only when the streamed arguments were not intact."""
    title, size = "long arguments", f"a {LONG_TEXT.count(chr(10))}-line argument"
    kind, detail = streamed
    data = {"streamed": kind, "non_streamed": whole[0] if whole else None}
    if kind == "intact":
        return Check(
            "long_arguments", title, "pass", f"{size} with quotes and backslashes streamed intact", data=data
        )
    if kind == "repaired":
        text = f"{size} arrived broken in the stream ({detail}); the agent repaired it"
        return Check("long_arguments", title, "warn", text, UPGRADE, data)
    if whole is not None and whole[0] == "intact":
        text = f"streaming corrupted {size} ({detail}); the non-streamed reply was intact"
        return Check(
            "long_arguments",
            title,
            "fail",
            text,
            UPGRADE + "; the agent asks the model to repeat a broken call",
            data,
        )
    text = f"the model did not copy {size} exactly, streamed or not ({detail})"
    fix = "model precision, not the server: larger models copy long text more faithfully"
    return Check("long_arguments", title, "warn", text, fix, data)


def reasoning_check(
    outcome: Outcome,
    family: Family | None,
    know: Knowledge,
    advice: Advice,
    thinking_on: Outcome | None = None,
) -> Check:
    """`thinking_on`: the same probe without the profile's thinking-off switch, sent when the model
    reasoned in its reply text although the profile turns thinking off."""
    title = "reasoning"
    if outcome.error:
        return Check(
            "reasoning", title, "warn", f"the request failed: {outcome.error}", "read the server log"
        )
    leak = know.reasoning_leak(outcome.content)
    data = {"fields": outcome.reasoning_fields, "leak": leak}
    if leak and thinking_on is not None:
        parser = know.reasoning_parser_for(outcome.content, family)
        still = bool(know.reasoning_leak(thinking_on.content))
        return _thinking_off_leak(leak, parser, thinking_on, still, advice, data)
    if leak:
        parser = know.reasoning_parser_for(outcome.content, family)
        advice.reasoning_parser = advice.reasoning_parser or parser
        detail = (
            f"reasoning arrives inside the reply text ({leak}); the agent strips it, but it shows late "
            "and the server cannot drop it from history"
        )
        return Check(
            "reasoning",
            title,
            "warn",
            detail,
            f"restart vLLM with --reasoning-parser {parser or 'PARSER'}",
            data,
        )
    if outcome.reasoning_fields:
        fields = " and ".join(f"`{f}`" for f in outcome.reasoning_fields)
        return Check("reasoning", title, "pass", f"reasoning arrives separately in {fields}", data=data)
    if outcome.finish_reason == "length":
        return Check(
            "reasoning", title, "warn", "the reply hit max_tokens before finishing; inconclusive", data=data
        )
    return Check(
        "reasoning",
        title,
        "pass",
        "no reasoning in the reply (not a reasoning model, or thinking is off)",
        data=data,
    )


def _thinking_off_leak(
    leak: str,
    parser: str | None,
    thinking_on: Outcome,
    still_in_text: bool,
    advice: Advice,
    data: dict[str, Any],
) -> Check:
    """The model reasons in its text although the profile turns thinking off. With thinking off a
    server's reasoning parser leaves the text alone, so only the thinking-on reply (`still_in_text`:
    its reasoning was in the text too) tells whether the server has one."""
    said = (
        f"the model writes reasoning into its reply text ({leak}) although the model profile turns "
        "thinking off (chat_template_kwargs), and with thinking off vLLM leaves it there; the agent strips it"
    )
    data["thinking_on_fields"] = thinking_on.reasoning_fields
    if thinking_on.reasoning_fields:
        fix = "nothing to restart: to have vLLM separate the reasoning, turn thinking on in the profile"
        detail = f"{said}. With thinking on the server separates it, so its --reasoning-parser works"
        return Check("reasoning", "reasoning", "warn", detail, fix, data)
    if still_in_text:
        advice.reasoning_parser = advice.reasoning_parser or parser
        detail = f"{said}. With thinking on it still arrives in the text: the server has no reasoning parser"
        return Check(
            "reasoning",
            "reasoning",
            "warn",
            detail,
            f"restart vLLM with --reasoning-parser {parser or 'PARSER'}",
            data,
        )
    detail = (
        f"{said}. Asked with thinking on, the model did not reason, so whether the server splits "
        "reasoning is unknown"
    )
    return Check(
        "reasoning", "reasoning", "warn", detail, "nothing needed: the agent strips the reasoning", data
    )


def usage_check(streamed: list[Outcome], advice: Advice) -> Check:
    title = "usage in streams"
    answered = [o for o in streamed if o.status == 200 and not o.error]
    if not answered:
        return Check("usage", title, "skip", "no streamed reply to look at")
    with_usage = [o for o in answered if o.usage is not None]
    if not with_usage:
        return Check(
            "usage",
            title,
            "warn",
            "stream_options.include_usage was ignored: streamed replies carry no token counts",
            "talk to vLLM directly (a proxy may drop stream_options), "
            "or start it with --enable-force-include-usage",
        )
    detail = "token counts arrive at the end of each stream"
    if any(o.usage.cached_tokens is not None for o in with_usage if o.usage):
        detail += "; prefix-cache hits are reported"
    else:
        advice.add_optional("--enable-prompt-tokens-details")
        detail += "; prefix-cache hits are not reported (optional: --enable-prompt-tokens-details)"
    return Check("usage", title, "pass", detail)


def text_check(outcome: Outcome, probe: Probe, know: Knowledge, thinking_off: bool = False) -> Check:
    """The agent's text protocol (TOOL_CALL: blocks, no tools in the request). A reply cut by max_tokens
    before any call is inconclusive (`data.inconclusive`), not a model that cannot do it."""
    title = "text protocol"
    if outcome.error:
        return Check(
            "text_protocol", title, "fail", f"the request failed: {outcome.error}", "read the server log"
        )
    calls = extract_tool_calls(outcome.content, probe.definitions).calls
    if same_calls(calls, probe.expected):
        return Check(
            "text_protocol", title, "pass", f"the model follows the text protocol: {describe_calls(calls)}"
        )
    if calls:
        detail = (
            f"the model writes calls the agent can read, though not the expected one: {describe_calls(calls)}"
        )
        return Check("text_protocol", title, "warn", detail, "a larger model follows instructions better")
    if outcome.finish_reason == "length":
        cut = truncated(outcome, probe, know)
        fix = truncated_fix(cut, thinking_off)
        return Check(
            "text_protocol", title, "warn", cut.detail + "; inconclusive", fix, {"inconclusive": True}
        )
    detail = f"the model did not write a tool call in the text protocol: {outcome.excerpt(160)!r}"
    fix = "the agent cannot work like this: fix native tool calls (see above) or use another model"
    return Check("text_protocol", title, "fail", detail, fix)
