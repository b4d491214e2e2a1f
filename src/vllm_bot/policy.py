"""INTERIM approval policy until the full policy (shell splitting, read-only commands) lands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .calls import ToolCall

Decision = Literal["allow", "ask", "deny"]


@dataclass
class Grants:
    tools: set[str] = field(default_factory=set)
    commands: set[str] = field(default_factory=set)


@dataclass
class Verdict:
    decision: Decision
    reason: str


def decide(call: ToolCall, mode: str, grants: Grants, *, sandboxed: bool = True, tool_kinds=None) -> Verdict:
    if mode == "full-auto" or call.name == "read" or call.name in grants.tools:
        return Verdict("allow", "allowed")
    if mode == "auto-edit" and call.name in ("write", "edit"):
        return Verdict("allow", "file edits run in auto-edit")
    return Verdict("ask", f"{call.name} needs approval in {mode} mode")
