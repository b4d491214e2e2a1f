"""Issue 37's ways of working, wired into a session: the approval modes (plan mode with its read-only
boundary and present_plan), the task list (update_plan) and read-only sub-agents (delegate). Each can
be turned off in config (agent.plan_mode, agent.task_list, delegate.enabled); a tool that is not
offered costs no tokens."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..conversation import task_list
from ..events import Emit, ModeChanged, PlanUpdated
from ..tools.definitions import DELEGATE, PRESENT_PLAN, UPDATE_PLAN
from .delegation import Delegation, Made
from .planning import PlanPresenter, message
from .tasklist import TaskList

MODES = ("ask", "auto-edit", "full-auto", "plan")  # Shift-Tab's order, as Claude Code users expect


class Workflow:
    """Plan mode, the task list and delegation for one session (`session` is the composition root)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.boundary = session.boundary  # the session's own, writable; plan mode's is read-only
        self.note: str | None = None  # what the model must know with the next task (plan mode on/off)
        config = session.config
        executor = session.executor
        if config.agent.task_list:
            executor.register(UPDATE_PLAN, TaskList(session.emit))
        self.delegation: Delegation | None = None
        if config.delegate.enabled:
            self.delegation = Delegation(self._subagent, config.delegate, session.emit)
            executor.register(DELEGATE, self.delegation)
        choose = session.front.choose_plan if session.interactive else None
        self.presenter = PlanPresenter(choose, self.set_mode)
        if session.gate.mode == "plan":
            self.set_mode("plan", "started in plan mode")
            self.note = message("plan_on")

    @property
    def modes(self) -> tuple[str, ...]:
        return MODES if self.session.config.agent.plan_mode else MODES[:-1]

    def cycle(self) -> str:
        """The next approval mode (Shift-Tab): ask → auto-edit → full-auto → plan → ask."""
        modes = self.modes
        current = self.session.gate.mode
        following = modes[(modes.index(current) + 1) % len(modes)] if current in modes else modes[0]
        self.set_mode(following, "Shift-Tab")
        return following

    def set_mode(self, mode: str, reason: str = "") -> None:
        """Switch the approval mode; plan mode also makes the workspace read-only (sandbox and file
        tools alike) and offers present_plan, and the model hears of it with the next message."""
        session = self.session
        was_plan = session.gate.mode == "plan"
        session.gate.mode = mode
        plan = mode == "plan"
        session.toolbox.set_boundary(dataclasses.replace(self.boundary, workspace_read_only=plan))
        executor = session.executor
        if plan and "present_plan" not in executor.handlers:
            executor.register(PRESENT_PLAN, self.presenter)
        elif not plan and "present_plan" in executor.handlers:
            executor.unregister("present_plan")
        if plan and not was_plan:
            self.note = message("plan_on")
        elif was_plan and not plan and reason != "the plan was approved":  # an approval says it itself
            self.note = message("plan_off", mode=mode)
        session.emit(ModeChanged(mode, reason))

    def announce(self) -> None:
        """At the start: the task list of a resumed conversation (--continue, --resume) shows again."""
        steps = task_list(self.session.agent.conversation.entries)
        if steps:
            self.session.emit(PlanUpdated(steps))

    def task_message(self, text: str) -> str:
        """The user's message, after what the model must know first (plan mode went on or off)."""
        note, self.note = self.note, None
        return f"{note}\n\n{text}" if note else text

    def _subagent(self, emit: Emit) -> Made:
        return self.session.make_subagent(emit)

    def close(self) -> None:
        if self.delegation is not None:
            self.delegation.close()
