"""Verdicts on the doctor's model requests: do native tool calls work, leak into the text (in which
format), get refused, or not happen at all; and what to change on the server for each case."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.server_errors import FALLBACK_MARKERS
from ..parsing import extract_tool_calls
from .knowledge import Family, Knowledge
from .probes import Outcome, Probe, same_calls
from .report import Advice, Check

NATIVE = ("native", "wrong_arguments")


@dataclass
class ToolVerdict:
    kind: str  # native | wrong_arguments | refused | leaked | no_call | truncated | error
    detail: str
    formats: list[str] = field(default_factory=list)
    recovered: bool = False  # the agent's reply parser found the expected calls in the text
    spent: str = ""  # truncated: what used up max_tokens, "reasoning" or "text"
    budget: int = 0  # truncated: the max_tokens it ran out of
    raised: bool = False  # truncated: that budget was already raised once (doctor/checkup.py)

    @property
    def native(self) -> bool:
        return self.kind in NATIVE


def describe_calls(calls: list[Any]) -> str:
    return ", ".join(f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})" for c in calls)


def classify(outcome: Outcome, probe: Probe, know: Knowledge) -> ToolVerdict:
    """What happened to a request that offered tools."""
    if outcome.status == 400 and any(m in outcome.error for m in FALLBACK_MARKERS):
        return ToolVerdict("refused", f"the server refused tools: {outcome.error}")
    if outcome.error:
        return ToolVerdict("error", f"the request failed ({outcome.status}): {outcome.error}")
    if outcome.calls:
        if same_calls(outcome.calls, probe.expected):
            return ToolVerdict("native", f"native tool calls work: {describe_calls(outcome.calls)}")
        return ToolVerdict(
            "wrong_arguments",
            f"native calls arrive, but not the expected ones: {describe_calls(outcome.calls)}",
        )
    extraction = extract_tool_calls(outcome.content, probe.definitions)
    formats = know.leaked_formats(outcome.content, extraction.formats if extraction.calls else [])
    if extraction.calls or formats:
        recovered = same_calls(extraction.calls, probe.expected)
        return ToolVerdict(
            "leaked", f"tool calls arrive as text: {outcome.excerpt(160)!r}", formats, recovered
        )
    if outcome.finish_reason == "length":
        return truncated(outcome, probe, know)
    return ToolVerdict("no_call", f"the model answered without a tool call: {outcome.excerpt(160)!r}")


def truncated(outcome: Outcome, probe: Probe, know: Knowledge) -> ToolVerdict:
    """A reply that hit max_tokens before any call: what used the tokens, and how many there were."""
    spent = "reasoning" if outcome.reasoning or know.reasoning_leak(outcome.content) else "text"
    budget = outcome.max_tokens or probe.max_tokens
    raised = f" (raised once from {outcome.raised_from})" if outcome.raised_from else ""
    detail = f"the reply hit max_tokens={budget}{raised} in {spent} before any call"
    return ToolVerdict("truncated", detail, spent=spent, budget=budget, raised=bool(outcome.raised_from))


def flags_text(parser: str | None) -> str:
    if parser is None:
        return "--enable-auto-tool-choice and the --tool-call-parser of the model's family (see the note)"
    return f"--enable-auto-tool-choice --tool-call-parser {parser}"


def tool_check(
    check_id: str,
    title: str,
    verdict: ToolVerdict,
    family: Family | None,
    know: Knowledge,
    advice: Advice,
    thinking_off: bool = False,
) -> Check:
    """A check row for a tool-call request; records the server flags to suggest in `advice`.
    `thinking_off`: the model profile already turns thinking off."""
    data = {"kind": verdict.kind, "formats": verdict.formats, "recovered": verdict.recovered}
    if verdict.kind == "native":
        return Check(check_id, title, "pass", verdict.detail, data=data)
    if verdict.kind == "wrong_arguments":
        fix = "a model quality issue, not the server: a larger model or a lower temperature helps"
        return Check(check_id, title, "warn", verdict.detail, fix, data)
    if verdict.kind == "truncated":
        return Check(
            check_id,
            title,
            "warn",
            verdict.detail + "; inconclusive",
            truncated_fix(verdict, thinking_off),
            data,
        )
    if verdict.kind == "error":
        return Check(check_id, title, "fail", verdict.detail, "read the server log for the cause", data)
    parser = know.tool_parser_for(verdict.formats[0] if verdict.formats else None, family)
    advice.tool_parser = advice.tool_parser or parser
    if parser is None:  # no family, no format: name the choices instead of a placeholder
        advice.add_note(unknown_parser_note(know))
    restart = f"restart vLLM with {flags_text(parser)}"
    if verdict.kind == "refused":
        return Check(
            check_id, title, "fail", verdict.detail, restart + "; until then the agent uses text mode", data
        )
    if verdict.kind == "leaked":
        return Check(check_id, title, "fail", _leak_detail(verdict, family, parser), restart, data)
    fix = (
        "the model or its chat template does not do tool calls; serve an instruct model with tool support "
        f"(and {flags_text(parser)})"
    )
    return Check(check_id, title, "fail", verdict.detail, fix, data)


def unknown_parser_note(know: Knowledge) -> str:
    return (
        "The model is not in the doctor's parser table, so the command names no --tool-call-parser: "
        f"use the one of the model's family. The table's parsers: {know.parser_choices()} "
        '(docs/doctor.md, "The parser table"; vLLM\'s tool calling docs list the rest).'
    )


def truncated_fix(verdict: ToolVerdict, thinking_off: bool) -> str:
    if verdict.spent != "reasoning":
        return (
            "re-run; if it persists, the model talks instead of calling tools: a larger or tool-tuned "
            "model does better"
        )
    if verdict.raised:
        return thinker_fix(verdict.budget, thinking_off)
    if thinking_off:
        return "re-run; the model reasons at length although its profile turns thinking off"
    return "re-run; if it persists, turn thinking off in a model profile (chat_template_kwargs)"


def thinker_fix(budget: int, thinking_off: bool) -> str:
    """For a model still thinking when the raised probe budget ran out."""
    off = (
        "the model reasons at length although its profile turns thinking off"
        if thinking_off
        else "or turn thinking off in a model profile (chat_template_kwargs)"
    )
    return (
        f"a budget above {budget:,} tokens would do: sessions give a reply vllm.max_tokens (null: the "
        f"rest of the window, up to 32,768), so they may work; {off}"
    )


def _leak_detail(verdict: ToolVerdict, family: Family | None, parser: str | None) -> str:
    fmt = ", ".join(verdict.formats) or "an unknown format"
    text = f"tool calls leak into the reply text in {fmt} format, so the server parsed none"
    if family and family.tool_call_parser and parser and parser != family.tool_call_parser:
        text += (
            f" (the table expects {family.tool_call_parser} for {family.name}, but the model writes {fmt})"
        )
    if verdict.recovered:
        return text + "; the agent recovers them from the text"
    return text + "; the agent's reply parser cannot recover them either"
