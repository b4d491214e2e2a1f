"""Decide whether a parsed call is well-formed before anything runs (unknown tool, bad JSON, schema).

A malformed call is answered with an error result that tells the model what to send instead; it is
never executed. A well-formed call that then fails when run (refused path, non-zero exit) is a normal
result, not a malformed reply.
"""

from __future__ import annotations

from typing import Any

from ..calls import TRUNCATED_CALL, ToolCall
from ..cliargs import program_name
from ..tools.definitions import find_definition, tool_names
from ..tools.validation import ArgumentError, expected_shape, normalize_arguments


def check_call(call: ToolCall, definitions: list[dict[str, Any]]) -> str | None:
    """Return a message for the model if `call` cannot run; otherwise normalize its arguments in place."""
    definition = find_definition(definitions, call.name)
    if call.error:
        reason = call.error.rstrip()
        shape = f"Expected {expected_shape(definition)}" if definition else ""
        hint = f" {shape}." if shape and shape not in reason else ""  # the parser's errors may say it
        stop = "" if reason.endswith((".", "!", "?")) else "."
        return f"could not use this tool call: {reason}{stop}{hint}"
    if definition is None:
        available = ", ".join(tool_names(definitions))
        return (
            f"unknown tool {call.name!r}. Available tools: {available}. Call one of them by its exact name."
        )
    try:
        call.arguments = normalize_arguments(definition, call.arguments)
    except ArgumentError as e:
        return str(e)
    return None


def malformed_message(streak: int, problem: str, via: str) -> str:
    """Why the task stopped after `streak` malformed replies, and what may help. With native calls on
    the server is not the cause; a cut-off call is a matter of the output limit."""
    text = f"Stopped: the model sent {streak} malformed tool calls in a row (last problem: {problem})."
    if TRUNCATED_CALL in problem:
        return text + " Raise vllm.max_tokens, or ask for smaller steps."
    if via == "native":
        return (
            text + " Native tool calling is on, so this is the model: a larger model or a lower "
            "temperature may do better, and vllm.tool_choice: required makes vLLM hold the arguments "
            "to the tools' schemas."
        )
    doctor = f"`{program_name()} doctor`"
    return text + f" A model or server with native tool calling may do better; {doctor} checks it."
