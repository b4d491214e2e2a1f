"""Decide whether each call of a reply can run, once, before anything else reads it.

A call that can run becomes a CheckedCall (its arguments normalized; the conversation keeps it, the
gate and the executor take it as it is). A call that cannot is answered with an error result that
tells the model what to send instead; it is never executed. A checked call that then fails when run
(refused path, non-zero exit) is a normal result, not a malformed reply.
"""

from __future__ import annotations

from typing import Any

from ..calls import AssistantTurn, CallProblem, CheckedCall, ToolCall
from ..cliargs import program_name
from ..prompts import message
from ..tools.definitions import find_definition
from ..tools.validation import check_call, expected_shape


def check_turn(turn: AssistantTurn, definitions: list[dict[str, Any]]) -> list[CheckedCall | CallProblem]:
    """Each call of `turn` checked (`tools.validation.check_call`); the turn keeps the checked calls,
    so the conversation, the display and the next request show the arguments that run."""
    checks = [_check(call, definitions) for call in turn.tool_calls]
    calls = zip(checks, turn.tool_calls, strict=True)
    turn.tool_calls = [check if isinstance(check, CheckedCall) else call for check, call in calls]
    return checks


def _check(call: ToolCall, definitions: list[dict[str, Any]]) -> CheckedCall | CallProblem:
    checked = check_call(call, definitions)
    if isinstance(checked, CheckedCall) or call.error is None:
        return checked
    # a problem its maker marked (the parser, the stream, a cut-off reply): said with the tool's shape
    definition = find_definition(definitions, call.name)
    reason = checked.rstrip()
    expected = message("expected_shape", shape=expected_shape(definition)) if definition else ""
    hint = f" {expected}." if expected and expected not in reason else ""  # the parser's errors may say it
    stop = "" if reason.endswith((".", "!", "?")) else "."
    return CallProblem(message("could_not_use", reason=f"{reason}{stop}{hint}"), checked.kind)


def malformed_message(streak: int, problem: CallProblem, via: str) -> str:
    """Why the task stopped after `streak` malformed replies, and what may help. With native calls on
    the server is not the cause; a cut-off call is a matter of the output limit."""
    text = f"Stopped: the model sent {streak} malformed tool calls in a row (last problem: {problem})."
    if problem.kind == "truncated":
        return text + " Raise vllm.max_tokens, or ask for smaller steps."
    if via == "native":
        return (
            text + " Native tool calling is on, so this is the model: a larger model or a lower "
            "temperature may do better, and vllm.tool_choice: required makes vLLM hold the arguments "
            "to the tools' schemas."
        )
    doctor = f"`{program_name()} doctor`"
    return text + f" A model or server with native tool calling may do better; {doctor} checks it."
