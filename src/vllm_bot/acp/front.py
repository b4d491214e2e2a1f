"""The ACP front end of one session: an event consumer like the terminal's, and its `confirm`.

It runs on the worker (main) thread, as the session does. Updates go to the editor through the
channel without waiting; a question (permission, elicitation) waits for the editor's answer, and a
Ctrl-C (`session/cancel`) while it waits withdraws it.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TextIO

from acp import tool_diff_content, update_agent_thought_text

from ..agent.interrupts import Cancel
from ..agent.planning import PlanChoice
from ..calls import ToolCall
from ..events import Event, ModeChanged
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from ..tools.context import ToolError
from ..tools.edit import plan_edit
from ..tools.write import plan_write
from ..ui.plan_prompt import plan_choice
from ..ui.status import StatusLine
from . import options, permission
from .updates import Update, Updates, notice

HELD_UPDATES = 200  # updates from outside a turn (start-up notices) kept for the next one


class Channel(Protocol):
    """The protocol thread, as the worker thread sees it."""

    def send(self, session_id: str, updates: list[Update]) -> None:
        """Queue `session/update`s, in order (returns at once)."""

    def request(self, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """`await call(connection)` on the protocol thread once the queued updates are sent; its result
        (None when the editor answered with an error)."""

    @property
    def elicits_forms(self) -> bool:
        """Did the editor say it can show a form (elicitation)?"""


class AcpFront:
    show_reasoning = True  # reasoning goes to the editor as thought chunks

    def __init__(self, channel: Channel, workspace: str) -> None:
        self.channel = channel
        self.session_id = ""
        self.status = StatusLine()
        self.executor: Any = None  # the session's, once it is built: write/edit diffs
        self.cancel: Cancel = Cancel()  # the agent's, once the session is built
        self.updates = Updates(workspace, self._diff)
        self.live = False  # inside a turn (or a load's replay): updates go out at once
        self.held: list[Update] = []
        self.ended_by_user = False  # "instead", and the editor cannot ask: the turn ends (end_turn)
        self.session: Any = None
        self.shown = ("", "")  # the mode and model the editor was last told

    def attach(self, session: Any) -> None:
        self.session = session
        self.session_id = session.history.session_id
        self.executor = session.executor
        self.cancel = session.agent.cancel

    def __call__(self, event: Event) -> None:
        self.status(event)
        self.send(self.updates(event))
        if isinstance(event, ModeChanged) and self.session is not None:  # e.g. an approved plan
            self.send(options.changed(self.session, self.shown))
            self.shown = options.shown(self.session)

    def send(self, updates: list[Update]) -> None:
        if not updates:
            return
        if self.live:
            self.channel.send(self.session_id, updates)
        else:
            self.held = [*self.held, *updates][-HELD_UPDATES:]

    def begin_turn(self) -> None:
        self.live, self.ended_by_user = True, False
        held, self.held = self.held, []
        self.send(held)

    def end_turn(self) -> None:
        self.live = False

    # -- what the session asks of a front end --------------------------------------------------------

    def say(self, text: str) -> None:
        self.send([update_agent_thought_text(text.rstrip("\n") + "\n")])

    def error(self, text: str) -> None:
        self.send([notice("error", text)])

    def stop_live(self) -> None:
        pass

    def debug_stream(self) -> TextIO:
        return sys.stderr  # never stdout: it carries the protocol

    def confirm(
        self, call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None = None
    ) -> Answer:
        """The approval gate's question, asked in the editor (blocks this thread until it answers)."""
        self.send([self.updates.announce(call)])
        change = self.updates.changes.get(call.id)
        question = permission.tool_call(call, preview, reason, [change] if change is not None else None)
        return self._ask(question, permission.options(scope), "What should it do instead?")

    def choose_plan(self, plan: str) -> PlanChoice:
        """Plan mode's question (present_plan), asked in the editor with the plan."""
        call_id = self.updates.running.id if self.updates.running is not None else "present_plan"
        question = permission.plan_question(call_id, plan)
        return plan_choice(self._ask(question, permission.plan_options(), "What should it change?"))

    def _ask(self, question: Any, options: list[Any], instead_title: str) -> Answer:
        """`session/request_permission`; for "instead", the editor's form (or the end of the turn)."""
        response = self.channel.request(
            lambda conn: conn.request_permission(
                session_id=self.session_id, tool_call=question, options=options
            )
        )
        chosen = permission.Chosen.from_response(response)
        if chosen.choice == "cancelled" or (chosen.choice == "instead" and not self.channel.elicits_forms):
            # A withdrawn question stops the task; so does "instead" in an editor without forms,
            # whose next prompt then says what to do instead.
            self.ended_by_user = chosen.choice == "instead"
            self.cancel.event.set()
            return chosen.answer()
        if chosen.choice != "instead":
            return chosen.answer()
        form = permission.instead_form(self.session_id, question.tool_call_id, instead_title)
        reply = self.channel.request(lambda conn: conn.create_elicitation(message=instead_title, mode=form))
        return chosen.answer(permission.instead_text(reply))

    def _diff(self, call: ToolCall) -> Any | None:
        """The ACP diff of a write or edit about to run, computed as the tool would (nothing written);
        None when it would fail or the file is binary."""
        if self.executor is None:
            return None

        args, ctx = call.arguments, self.executor.context
        try:
            if call.name == "write":
                written = plan_write(ctx, args["path"], args["content"])
                if written.old is not None and written.old_text is None:
                    return None  # replaces a binary file
                return tool_diff_content(str(written.target), written.text, written.old_text)
            edited = plan_edit(
                ctx, args["path"], args["oldText"], args["newText"], bool(args.get("replace_all"))
            )
            return tool_diff_content(str(edited.target), edited.after, edited.before)
        except (ToolError, OSError, UnicodeError, KeyError, TypeError, ValueError):
            return None
