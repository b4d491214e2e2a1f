"""Forced tool choice (`vllm.tool_choice: required` or a tool's name) and how such a task ends.

When every reply must be a call, the model needs a call that means "done": these modes offer one
more tool, `finish(answer)`, and a reply whose only call is `finish` becomes an ordinary answer
(content, no calls) before the loop sees it. A named choice is sent as `required` over that tool and
`finish`, so the model may use the chosen tool or end the task. The tools carry `"strict": true`: vLLM
(0.32) then holds the arguments to each tool's schema, not only the call's envelope. With `auto` or
`none` the tools go out as declared.
"""

from __future__ import annotations

from typing import Any

from ..calls import AssistantTurn, CallProblem, with_problem
from ..events import Emit, TextDelta
from ..prompts import message

FINISH = "finish"
FINISH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FINISH,
        "description": (
            "End the task: call this once the work is done (or cannot be done), with your final answer "
            "for the user. Call it alone, after the results of your other calls."
        ),
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "the final answer for the user"}},
            "required": ["answer"],
        },
    },
}


def forced(choice: str) -> bool:
    return choice not in ("auto", "none")


def tools_and_choice(choice: str, definitions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    """The `tools` and `tool_choice` to send for the configured choice."""
    if not forced(choice):
        return definitions, choice
    offered = definitions
    if choice != "required":
        offered = [d for d in definitions if d["function"]["name"] == choice]
        if not offered:  # its tool is not offered now (an MCP server that failed): nothing is forced
            return definitions, "auto"
    return [_strict(d) for d in [*offered, FINISH_TOOL]], "required"


def _strict(definition: dict[str, Any]) -> dict[str, Any]:
    return {**definition, "function": {**definition["function"], "strict": True}}


def finish_as_answer(turn: AssistantTurn, emit: Emit) -> AssistantTurn:
    """A reply whose only call is finish is the answer (shown as reply text); finish beside other
    calls is refused; a finish that could not be read goes back to the model like any bad call."""
    finishes = [c for c in turn.tool_calls if c.name == FINISH]
    if not finishes or any(c.error for c in finishes):
        return turn
    if len(turn.tool_calls) > len(finishes):
        problem = CallProblem(message("finish_with_others"), "finish_beside_others")
        turn.tool_calls = [with_problem(c, problem) if c.name == FINISH else c for c in turn.tool_calls]
        return turn
    answer = finishes[-1].arguments.get("answer")
    if isinstance(answer, str) and answer.strip():
        turn.content = answer
        emit(TextDelta(answer))
    turn.tool_calls = []
    return turn
