"""Many sessions at once against one fake vLLM server, each scripted on its own.

`Conversations` lets one server answer many concurrent sessions (a batch run): each conversation
has its own script, found by a key that appears in the request's first user message (the task text),
and the reply is picked by the request's turn: the number of assistant messages already in its
history. Nothing depends on the order in which sessions arrive, and a task that is run again from
the start (a resumed batch) gets the same replies again.
"""

from __future__ import annotations

import threading
from typing import Any

from .script import Reply


def first_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message (the task), whether content is a string or a list of parts."""
    for m in messages:
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content if isinstance(content, str) else ""
    return ""


class Conversations:
    """Per-conversation scripts, keyed by a string found in the first user message."""

    def __init__(self, scripts: dict[str, list[Reply]]) -> None:
        self.scripts = scripts
        self.served: dict[str, list[int]] = {key: [] for key in scripts}  # turns answered, in order
        self._lock = threading.Lock()

    def key_for(self, messages: list[dict[str, Any]]) -> tuple[str | None, str | None]:
        """(the conversation's key, a problem) for a request; (None, None) when no key matches."""
        task = first_user_text(messages)
        keys = [key for key in self.scripts if key in task]
        if len(keys) > 1:
            return None, f"the first user message matches several conversations: {sorted(keys)}"
        return (keys[0] if keys else None), None

    def reply(self, key: str, messages: list[dict[str, Any]]) -> tuple[Reply | None, str | None]:
        """The scripted reply for this turn of conversation `key`, or (None, a problem)."""
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        script = self.scripts[key]
        with self._lock:
            self.served[key].append(turn)
        if turn >= len(script):
            return None, f"conversation {key!r}: unscripted turn {turn + 1} (script has {len(script)})"
        return script[turn], None

    def unfinished(self) -> list[str]:
        """A problem for each conversation whose script was not played to its end."""
        problems = []
        for key, script in self.scripts.items():
            missing = sorted(set(range(len(script))) - set(self.served[key]))
            if missing:
                problems.append(
                    f"conversation {key!r}: turns {[t + 1 for t in missing]} of {len(script)} never asked for"
                )
        return problems
