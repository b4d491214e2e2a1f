"""The approval gate: policy.decide (pure) plus the front end's confirm prompt (I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from ..calls import ToolCall, ToolResult, error_result
from ..config import ApprovalMode
from .boundary import Rule
from .grants import Grants, GrantScope


@dataclass
class Answer:
    approved: bool
    always: bool = False  # approve this tool for the rest of the session
    message: str | None = None  # a sentence for the model when refused


# (call, preview, reason, what an "always" answer would cover) -> Answer
Confirm = Callable[[ToolCall, str | None, str, GrantScope], Answer]


class ApprovalGate:
    """Callable gate for the loop: None to run the call, an error result when it is refused."""

    def __init__(
        self,
        mode: ApprovalMode,
        confirm: Confirm | None,
        *,
        preview: Callable[[str, dict[str, Any]], str | None] | None = None,
        sandboxed: bool = True,
        workspace: str | PurePath | None = None,
        path_rule: Callable[[str, bool], Rule | None] | None = None,
    ) -> None:
        self.mode = mode
        self.confirm = confirm  # None: nobody to ask (headless without --yes)
        self.preview = preview
        self.sandboxed = sandboxed
        self.workspace = workspace  # lets the policy match absolute paths against the workspace's .git
        self.path_rule = path_rule  # the boundary's rule for a file tool's path (raw path, write?)
        self.grants = Grants()

    def __call__(self, call: ToolCall) -> ToolResult | None:
        # the policy's shell analysis is imported with the first call judged, not at start-up
        from .policy import decide, grant_scope, remember

        rule = self._rule(call)
        verdict = decide(
            call, self.mode, self.grants, sandboxed=self.sandboxed, workspace=self.workspace, rule=rule
        )
        if verdict.decision == "allow":
            return None
        if verdict.decision == "deny":
            return error_result(call, f"refused by policy: {verdict.reason}. Do not retry this call.")
        if self.confirm is None:
            who = (
                "--yes does not cover it and nobody can approve it in this headless run"
                if self.mode == "full-auto" or (rule is not None and rule.effect == "ask")
                else "nobody can approve it in this headless run (the user can re-run with --yes)"
            )
            return error_result(
                call,
                f"not run: {verdict.reason}; {who}. Continue without it, or finish and explain what is "
                "left to do.",
            )
        preview = self.preview(call.name, call.arguments) if self.preview else None
        scope = grant_scope(call, sandboxed=self.sandboxed, mode=self.mode)
        answer = self.confirm(call, preview, verdict.reason, scope)
        if answer.approved:
            if answer.always:
                remember(self.grants, call, sandboxed=self.sandboxed, mode=self.mode)
            return None
        note = f" The user said: {answer.message}" if answer.message else ""
        return error_result(call, f"the user declined this {call.name} call.{note}")

    def _rule(self, call: ToolCall) -> Rule | None:
        path = call.arguments.get("path")
        if self.path_rule is None or call.name not in ("write", "edit") or not isinstance(path, str):
            return None
        return self.path_rule(path, True)
