"""The agent loop: ask the model, run every call in order, append the results, repeat.

It stops when a reply has no tool calls and is a whole answer (answers.py: not cut by max_tokens, not
empty) or a limit is reached. It imports no SDK, UI or git code: the model client, the tool
executor, the approval gate and the event consumers are handed in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ..calls import AssistantTurn, CallProblem, CheckedCall, ToolCall, ToolResult, Usage, error_result
from ..config import AgentConfig
from ..conversation import Conversation
from ..errors import EXIT_LIMIT, EXIT_OK
from ..events import (
    Emit,
    Event,
    IterationStarted,
    Notice,
    TaskFinished,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    UsageReported,
)
from ..model.watchdog import DeadlineReached
from ..tools.context import plural
from .answers import AnswerCheck, Ending
from .budget import Budget, OutOfTime, not_run_results
from .dispatch import check_turn, malformed_message
from .interrupts import Cancel, Interrupted, PartialReply, interrupted_results
from .loopguard import LoopGuard
from .planning import TaskEnded, ended_results
from .progress import Progress
from .seams import Client, Executor, Gate, allow_all


@dataclass
class Outcome:
    reason: str
    answer: str
    exit_code: int
    iterations: int


class Agent:
    def __init__(
        self,
        client: Client,
        executor: Executor,
        config: AgentConfig,
        emit: Emit,
        *,
        gate: Gate = allow_all,
        conversation: Conversation | None = None,
        cancel: Cancel | None = None,
    ) -> None:
        self.client = client
        self.executor = executor
        self.config = config
        self.progress = Progress()  # what the task did, counted as it is reported
        self.emit = self.progress.watch(emit)
        self.gate = gate
        self.conversation = conversation or Conversation()
        self.usage = Usage()
        self.guard = LoopGuard(config.loop_warn_after, config.loop_stop_after)
        self.answers = AnswerCheck()
        self.cancel = cancel or Cancel()  # the front end routes Ctrl-C here while a task runs

    def run(self, task: str) -> Outcome:
        """Work on one user message until the model answers without tool calls or a limit stops it."""
        self.conversation.add_user(task)
        self.guard.reset()
        self.cancel.reset()
        self.answers.reset()
        self.progress.reset()
        malformed_streak = 0
        limit = self.config.max_iterations
        budget = Budget(self.config.time_budget)
        for iteration in range(1, limit + 1):
            if budget.expired():
                return self._stop("time_budget", budget.message(), iteration - 1)
            self.emit(IterationStarted(iteration, limit))
            turn_started = time.monotonic()
            try:
                turn = self._ask(budget.deadline)
            except Interrupted as e:
                return self._interrupted(e.turn, iteration)
            except OutOfTime as e:
                if e.turn is not None:  # what had streamed stays, marked partial (none of its calls ran)
                    self.conversation.add_turn(e.turn)
                return self._stop("time_budget", budget.message(), iteration)
            checks = check_turn(turn, self.executor.definitions)  # each call once, before it is kept
            self.conversation.add_turn(turn)
            self._account(turn, time.monotonic() - turn_started)
            ending = self.answers.judge(turn)  # a reply without calls: the answer, or not yet
            if ending.reason:
                return self._end(ending, iteration)
            if ending.note:
                self.emit(Notice("info", ending.text))
                self.conversation.add_user(ending.note, kind="note")
                continue
            results, problems, ended = self._run_calls(turn.tool_calls, checks, budget)
            self.conversation.add_results(results, turn.via)
            if ended is not None:  # a tool ended the task (present_plan in a headless --plan run)
                return self._finish("done", ended, EXIT_OK, iteration)
            if self.cancel.requested:
                return self._interrupted(None, iteration)
            malformed_streak = malformed_streak + 1 if problems else 0
            if malformed_streak >= self.config.max_malformed_replies:
                return self._stop(
                    "malformed", malformed_message(malformed_streak, problems[-1], turn.via), iteration
                )
            verdict = self.guard.observe(turn.tool_calls, results)
            if verdict.action == "stop":
                return self._stop("loop", f"Stopped: {verdict.message} (loop guard).", iteration)
            if verdict.action == "note":
                self.conversation.add_user(verdict.message, kind="note")
        return self._stop(
            "max_iterations",
            f"Stopped after {plural(limit, 'iteration')} without a final answer "
            "(agent.max_iterations; raise it with --max-iterations N).",
            limit,
        )

    def _ask(self, deadline: float | None) -> AssistantTurn:
        """One model turn; Ctrl-C while it streams raises Interrupted with the text so far, the time
        budget running out raises OutOfTime with it."""
        partial = PartialReply()

        def emit(event: Event) -> None:
            partial.observe(event)
            self.emit(event)

        try:
            return self.client.complete(self.conversation, self.executor.definitions, emit, deadline=deadline)
        except KeyboardInterrupt:
            raise Interrupted(partial.turn()) from None
        except DeadlineReached:
            raise OutOfTime(partial.turn()) from None

    def _run_calls(
        self, calls: list[ToolCall], checks: list[CheckedCall | CallProblem], budget: Budget
    ) -> tuple[list[ToolResult], list[CallProblem], str | None]:
        """Run every call in order; exactly one result per call (an interrupt, the time budget or a
        tool that ends the task answers the rest). Returns (results, malformed problems, the answer
        of a tool that ended the task)."""
        results: list[ToolResult] = []
        problems: list[CallProblem] = []
        # what may start ahead of its turn (several delegate calls)
        self.executor.prefetch([c for c in checks if isinstance(c, CheckedCall)])
        for call, check in zip(calls, checks, strict=True):
            if self.cancel.requested:
                break
            if budget.expired():
                return not_run_results(calls, results), problems, None
            if isinstance(check, CallProblem):
                problems.append(check)
                result = error_result(call, str(check))
                self.emit(ToolCallFinished(call, result, 0.0, check.kind))
            else:
                try:
                    result = self._run_one(check, budget.deadline)
                except KeyboardInterrupt:
                    self.cancel.event.set()
                    rest = interrupted_results(calls, results, mid_call=True)
                    self.emit(ToolCallFinished(call, rest[len(results)], 0.0))
                    return rest, problems, None
                except TaskEnded as e:
                    result = replace(e.result, tool_call_id=call.id, name=call.name)
                    self.emit(ToolCallFinished(call, result, 0.0))
                    return ended_results(calls, [*results, result]), problems, e.answer
            results.append(result)
        return interrupted_results(calls, results, mid_call=False), problems, None

    def _run_one(self, call: CheckedCall, deadline: float | None) -> ToolResult:
        refused = self.gate(call)
        if refused is not None:
            self.emit(ToolCallFinished(call, refused, 0.0))
            return refused
        self.emit(ToolCallStarted(call))
        started = time.monotonic()
        with self.cancel.tool():
            result = self.executor.execute_call(
                call,
                on_output=lambda text: self.emit(ToolOutput(call.id, text)),
                cancel=self.cancel.event,
                deadline=deadline,  # exec cuts a command's timeout to the time left
            )
        self.emit(ToolCallFinished(call, result, time.monotonic() - started))
        return result

    def _account(self, turn: AssistantTurn, seconds: float) -> None:
        if turn.usage is None:
            return
        self.usage.add(turn.usage)
        self.emit(UsageReported(turn.usage, self.usage, seconds, self.client.context_window))

    def _end(self, ending: Ending, iterations: int) -> Outcome:
        if ending.reason == "done":
            return self._finish("done", ending.text, EXIT_OK, iterations)
        return self._stop(str(ending.reason), ending.text, iterations)

    def _stop(self, reason: str, message: str, iterations: int) -> Outcome:
        """A limit ended the task: say which, and where the work stands."""
        return self._finish(reason, f"{message}\n{self.progress.summary()}", EXIT_LIMIT, iterations)

    def _interrupted(self, partial: AssistantTurn | None, iterations: int) -> Outcome:
        """The user stopped the task (Ctrl-C); the conversation stays consistent for the next one.
        A reply cut short is kept in history, marked partial (it has no calls)."""
        if partial is not None:
            self.conversation.add_turn(partial)
        answer = (partial.content.strip() if partial else "") or "Interrupted by the user."
        self.emit(TaskFinished("interrupted", answer, EXIT_LIMIT, iterations, self.usage))
        return Outcome("interrupted", answer, EXIT_LIMIT, iterations)

    def _finish(self, reason: str, answer: str, code: int, iterations: int) -> Outcome:
        if code != EXIT_OK:
            self.emit(Notice("error", answer))
        self.emit(TaskFinished(reason, answer, code, iterations, self.usage))
        return Outcome(reason, answer, code, iterations)
