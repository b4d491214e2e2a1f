"""The approval gate: policy.decide (pure) plus the front end's confirm prompt (I/O), and the
checkpoint before a change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from ..calls import ToolCall, ToolResult, error_result
from ..config import ApprovalMode
from ..prompts import message
from .boundary import Rule
from .grants import Grants, GrantScope
from .policy import changes_files, command_line, decide, grant_scope


@dataclass
class Answer:
    approved: bool
    always: bool = False  # approve this tool for the rest of the session
    message: str | None = None  # a sentence for the model when refused


# (call, preview, reason, what an "always" answer would cover) -> Answer
Confirm = Callable[[ToolCall, str | None, str, GrantScope], Answer]


class ApprovalGate:
    """Callable gate for the loop: None to run the call, an error result when it is refused. Before
    an allowed call that may change files runs, `before_change` (the session's checkpoint) is called."""

    def __init__(
        self,
        mode: ApprovalMode,
        confirm: Confirm | None,
        *,
        preview: Callable[[ToolCall], str | None] | None = None,
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
        self.before_change: Callable[[], None] | None = None  # the session's checkpoint (history)
        self.grants = Grants()

    def __call__(self, call: ToolCall) -> ToolResult | None:
        line = command_line(call)  # split once: for the policy, an "always" answer and the checkpoint
        rule = self._rule(call)
        verdict = decide(
            call,
            self.mode,
            self.grants,
            sandboxed=self.sandboxed,
            workspace=self.workspace,
            rule=rule,
            line=line,
        )
        if verdict.decision == "deny":
            return error_result(call, message("refused_by_policy", reason=verdict.reason))
        if verdict.decision == "ask" and self.confirm is None:
            yes_too = self.mode == "full-auto" or (rule is not None and rule.effect == "ask")
            who = message("nobody_with_yes" if yes_too else "nobody_headless")
            return error_result(call, message("not_run_headless", reason=verdict.reason, who=who))
        if verdict.decision == "ask" and self.confirm is not None:
            preview = self.preview(call) if self.preview else None
            scope = grant_scope(call, sandboxed=self.sandboxed, mode=self.mode, line=line)
            answer = self.confirm(call, preview, verdict.reason, scope)
            if not answer.approved:
                said = message("user_said", message=answer.message) if answer.message else ""
                return error_result(call, message("declined", tool=call.name, said=said))
            if answer.always:
                self.grants.add(scope)
        if self.before_change is not None and changes_files(call, line):
            self.before_change()
        return None

    def _rule(self, call: ToolCall) -> Rule | None:
        path = call.arguments.get("path")
        if self.path_rule is None or call.name not in ("write", "edit") or not isinstance(path, str):
            return None
        return self.path_rule(path, True)
