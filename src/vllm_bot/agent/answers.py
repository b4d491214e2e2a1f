"""Is a reply without tool calls the task's answer? Not when max_tokens cut it, nor when it is empty.

A reply cut by the max_tokens limit (`finish_reason: "length"`, or "tool_calls" with no calls: vLLM's
answer when `required` spent the budget on reasoning) stays in the history and the model
is asked to go on where it stopped; the pieces are joined (with a space: reply text arrives trimmed)
into the answer once it finishes. A reply
with no answer text (all of it reasoning, or nothing at all) gets a note asking for the answer. After
MAX_NUDGES such replies in a row the task stops (exit 3) with its own reason: `truncated` or
`empty_answer`. A reply with calls resets the count: the model is working.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..calls import AssistantTurn
from ..cliargs import program_name
from ..prompts import message

MAX_NUDGES = 2  # unfinished replies in a row that get a note; one more stops the task


@dataclass
class Ending:
    """What a reply means for the task: go on (no note), go on after `note`, or end (`reason`)."""

    note: str | None = None  # for the model
    reason: str | None = None  # "done", "truncated", "empty_answer": the task ends
    text: str = ""  # the answer, the stop message, or (with a note) what the user is told


class AnswerCheck:
    def __init__(self, max_nudges: int = MAX_NUDGES) -> None:
        self.max_nudges = max_nudges
        self.pieces: list[str] = []  # text of replies cut short, to be continued
        self.nudges = 0

    def reset(self) -> None:
        self.pieces.clear()
        self.nudges = 0

    def judge(self, turn: AssistantTurn) -> Ending:
        if turn.tool_calls:
            self.reset()
            return Ending()
        empty = not turn.content.strip()
        # vLLM ends `required` whose reasoning used the budget with "tool_calls" and no calls (a
        # prose reply some parsers label "tool_calls" is an answer like any other)
        cut = turn.finish_reason == "length" or (turn.finish_reason == "tool_calls" and empty)
        if not cut and not empty:
            answer = " ".join([*self.pieces, turn.content])
            self.reset()
            return Ending(reason="done", text=answer)
        if self.nudges >= self.max_nudges:
            return self._stop(cut, empty)
        self.nudges += 1
        if not empty:
            self.pieces.append(turn.content)
            return Ending(
                note=message("continue"),
                text="The reply was cut off by max_tokens; asking the model to go on.",
            )
        if cut and turn.reasoning:
            return Ending(
                note=message("thought_too_long"),
                text="The model reasoned until max_tokens; asking for its answer.",
            )
        return Ending(note=message("no_answer"), text="The reply had no answer; asking the model for it.")

    def _stop(self, cut: bool, empty: bool) -> Ending:
        replies = f"{self.nudges + 1} replies in a row"
        if cut:
            what = "were still reasoning when" if empty else "were"
            return Ending(
                reason="truncated",
                text=f'Stopped: {replies} {what} cut off by the max_tokens limit (finish_reason "length"). '
                "Raise vllm.max_tokens (by default the rest of the window, at most 32768 tokens), or serve "
                "the model with a larger --max-model-len.",
            )
        return Ending(
            reason="empty_answer",
            text=f"Stopped: {replies} ended without an answer or a tool call (only reasoning, or "
            f"nothing). `{program_name()} doctor` checks how the server and model answer.",
        )
