"""A short account of what a task did so far, for when a limit stops it (no model request)."""

from __future__ import annotations

from ..calls import AssistantTurn
from ..conversation import Conversation, ToolResults, UserMessage


def summarize_progress(conversation: Conversation) -> str:
    """`Progress: 3 reads; changed a.py, b.py; ran 2 commands (last: pytest -q, failed).`"""
    entries = conversation.entries
    start = max(
        (i for i, e in enumerate(entries) if isinstance(e, UserMessage) and e.kind == "task"), default=0
    )
    counts: dict[str, int] = {}
    changed: list[str] = []
    last_command, last_failed = None, False
    last_text = ""
    for i, entry in enumerate(entries[start:], start):
        if not isinstance(entry, AssistantTurn):
            continue
        last_text = entry.content.strip() or last_text
        following = entries[i + 1] if i + 1 < len(entries) else None
        results = following.results if isinstance(following, ToolResults) else []
        failed = {r.tool_call_id for r in results if r.is_error}
        for call in entry.tool_calls:
            counts[call.name] = counts.get(call.name, 0) + 1
            path = call.arguments.get("path")
            if (
                call.name in ("write", "edit")
                and isinstance(path, str)
                and call.id not in failed
                and path not in changed
            ):
                changed.append(path)
            if call.name == "exec":
                last_command, last_failed = call.arguments.get("command"), call.id in failed
    parts = [
        ", ".join(f"{n} {name} call{'s' if n != 1 else ''}" for name, n in counts.items()) or "no tool calls"
    ]
    if changed:
        parts.append("changed " + ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else ""))
    if last_command:
        parts.append(f"last command: {str(last_command)[:80]} ({'failed' if last_failed else 'ok'})")
    summary = "Progress: " + "; ".join(parts) + "."
    if last_text:
        summary += f" The model's last words: {last_text[:300]}"
    return summary
