"""The approval question as plain data (what will run, exactly), the menu of answers and the parsing
of the user's answer.

Front ends draw the view their way (rich colours the diff; plain prints it). In a terminal the
answer is one key of a numbered menu (`MENU_KEYS`); without one, a typed line (`parse_answer`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..calls import ToolCall
from ..safety.approval import Answer
from ..safety.grants import GrantScope
from .display import format_arguments, safe_text, split_diff

QUESTION = "Allow? [y]es / [n]o / [a]lways for this session (or type what to do instead): "
TELL_INSTEAD = "  What should it do instead? (Enter: just say no) "
# key -> choice: 1/y yes, 2/a always, 3/n no and say what to do instead, Esc no
MENU_KEYS = {"1": "yes", "y": "yes", "2": "always", "a": "always", "3": "instead", "n": "instead"}
MENU_KEYS["escape"] = "no"


@dataclass
class ApprovalView:
    title: str  # "Run this command?"
    reason: str  # why it asks (from the policy)
    command: str | None = None  # exec: the command, control and bidi characters escaped
    summary: str | None = None  # write/edit: "create a.py (12 bytes, 1 line)"
    diff: str | None = None  # write/edit: the unified diff
    text: str | None = None  # anything else: MCP annotations, the arguments
    always_note: str | None = None  # what an "always" answer covers (None: not known)


def approval_view(
    call: ToolCall, preview: str | None, reason: str, scope: GrantScope | None = None
) -> ApprovalView:
    """What the approval prompt shows for `call` (its preview comes from the executor or MCP; the
    scope of an "always" answer from the policy)."""
    note = always_note(scope) if scope is not None else None
    if call.name == "exec":
        command = safe_text(str(call.arguments.get("command", "")))
        return ApprovalView("Run this command?", reason, command=command, always_note=note)
    if call.name in ("write", "edit"):
        path = safe_text(str(call.arguments.get("path", "")), keep_newlines=False)
        title = f"{'Write' if call.name == 'write' else 'Edit'} {path}?"
        if preview is None:
            text = "(no preview: the change would fail as written)\n" + format_arguments(call.arguments)
            return ApprovalView(title, reason, text=text, always_note=note)
        summary, diff = split_diff(preview)
        return ApprovalView(
            title, reason, summary=safe_text(summary) or None, diff=diff or None, always_note=note
        )
    parts = [safe_text(preview)] if preview else []
    parts.append(format_arguments(call.arguments))
    return ApprovalView(f"Call {call.name}?", reason, text="\n".join(parts), always_note=note)


def always_note(scope: GrantScope) -> str:
    """The prompt's line on what "always" grants (an exact line is the command shown above it)."""
    covered = "this exact command" if scope.line is not None else safe_text(str(scope), keep_newlines=False)
    return f"always: run {covered} without asking for the rest of this session"


def menu_labels(scope: GrantScope | None) -> dict[str, str]:
    """The answers (choice -> label) in menu order; "no" is Esc in a terminal's menu. Every front end
    that asks (the terminal, an editor over ACP) offers these."""
    covered = f"{safe_text(str(scope), keep_newlines=False)} " if scope is not None else "this "
    return {
        "yes": "Yes",
        "always": f"Yes, and don't ask again for {covered}this session",
        "instead": "No, and tell it what to do instead",
        "no": "No",
    }


def menu_lines(scope: GrantScope | None) -> list[str]:
    """The numbered answers, each with its key."""
    labels = menu_labels(scope)
    return [
        f"1. {labels['yes']}  (y)",
        f"2. {labels['always']}  (a)",
        f"3. {labels['instead']}  (n; Esc: just no)",
    ]


CHOSEN = {"yes": "Yes", "always": "Yes, and don't ask again", "instead": "No", "no": "No"}


def menu_choice(read_key: Callable[[], str]) -> str:
    """The choice a key of the menu picks; other keys are ignored (Ctrl-D, a closed terminal: no)."""
    try:
        while True:
            key = read_key()
            choice = MENU_KEYS.get(key.lower() if len(key) == 1 else key)
            if choice is not None:
                return choice
    except EOFError:
        return "no"


def menu_answer(choice: str, ask: Callable[[str], str]) -> Answer:
    """The answer a menu choice gives; "instead" asks what to do instead (nothing typed: just no)."""
    if choice != "instead":
        return Answer(choice != "no", always=choice == "always")
    try:
        instead = ask(TELL_INSTEAD).strip()
    except EOFError:
        instead = ""
    return Answer(False, message=instead or None)


def typed_answer(ask: Callable[[str], str]) -> Answer:
    """Without single keys (no terminal to read them from): a typed line, asked until it answers."""
    while True:
        try:
            answer = parse_answer(ask(QUESTION))
        except EOFError:
            return Answer(False)
        if answer is not None:
            return answer


def parse_answer(reply: str) -> Answer | None:
    """y/yes, a/always, n/no [reason]; any other sentence declines and goes to the model, unchanged.
    None for an empty reply (ask again)."""
    text = reply.strip()
    if not text:
        return None
    match = _ANSWER_WORD.match(text)
    word, rest = (match.group(1).lower(), text[match.end() :]) if match else ("", text)
    if word in ("y", "yes"):
        return Answer(True)
    if word in ("a", "always"):
        return Answer(True, always=True)
    if word in ("n", "no"):
        return Answer(False, message=rest.strip() or None)
    return Answer(False, message=text)


# The first word and what separates it from the rest ("n, use ruff", "no: later", "y"); the rest is
# passed on exactly as typed.
_ANSWER_WORD = re.compile(r"(\w+)(?:[.!:;,]*\s+|[.!:;,]+\s*|$)")
