"""Assemble streamed tool-call deltas into complete calls, tolerating vLLM's known quirks.

Quirks handled (see the protocol reference, section 2): id/name only in the first delta for an
index; argument fragments to concatenate; calls interleaved; several entries for one index in one
chunk; explicit nulls; missing or duplicated ids; `""`/missing arguments meaning `{}`; a duplicated
argument tail at the final chunk (the concatenation is not JSON but the last fragment is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..calls import ToolCall, new_call_id


@dataclass
class _Pending:
    index: int
    id: str | None = None
    name: str | None = None
    fragments: list[str] = field(default_factory=list)


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


class ToolCallAssembler:
    """Feed `delta.tool_calls` lists in stream order; `finish()` returns the calls by index order."""

    def __init__(self) -> None:
        self._calls: dict[int, _Pending] = {}
        self._last_index: int | None = None
        self._finished: list[ToolCall] | None = None
        self._not_json = False

    def feed(self, entries: list[Any] | None) -> None:
        for entry in entries or []:
            index = _get(entry, "index")
            entry_id = _get(entry, "id")
            if not isinstance(index, int):
                index = self._infer_index(entry_id)
            pending = self._calls.setdefault(index, _Pending(index))
            self._last_index = index
            if entry_id and not pending.id:
                pending.id = entry_id
            function = _get(entry, "function")
            name = _get(function, "name")
            if name and not pending.name:
                pending.name = name
            arguments = _get(function, "arguments")
            if arguments:
                pending.fragments.append(arguments)

    def _infer_index(self, entry_id: str | None) -> int:
        """Servers that omit `index`: a new id starts a new call, otherwise continue the last one."""
        if self._last_index is None:
            return 0
        current = self._calls[self._last_index]
        if entry_id and current.id and entry_id != current.id:
            return max(self._calls) + 1
        return self._last_index

    @property
    def active(self) -> bool:
        return bool(self._calls)

    @property
    def not_json(self) -> bool:
        """Whether any call's arguments are not JSON, even after the known repairs."""
        self.finish()
        return self._not_json

    def finish(self) -> list[ToolCall]:
        """The assembled calls (computed once; later feeds are not expected)."""
        if self._finished is None:
            self._finished = self._assemble()
        return self._finished

    def _assemble(self) -> list[ToolCall]:
        calls: list[ToolCall] = []
        seen_ids: set[str] = set()
        for index in sorted(self._calls):
            pending = self._calls[index]
            call_id = pending.id if pending.id and pending.id not in seen_ids else new_call_id()
            seen_ids.add(call_id)
            raw = "".join(pending.fragments)
            try:
                arguments, error, note = decode_arguments(raw, pending.fragments)
            except NotJSON as e:
                arguments, error, note = {}, str(e), None
                self._not_json = True
            metadata: dict[str, Any] = {"source": "native", "raw_arguments": raw}
            if note:
                metadata["repaired"] = note
            if not pending.name:
                error = "the tool call had no function name"
            if error:
                metadata["error"] = error
            calls.append(ToolCall(call_id, pending.name or "", arguments, metadata))
        return calls


class NotJSON(ValueError):
    """Streamed arguments that are not JSON, even after the known repairs (its text is for the model)."""


def decode_arguments(raw: str, fragments: list[str]) -> tuple[dict[str, Any], str | None, str | None]:
    """Return (arguments, error for the model, repair note); raises NotJSON."""
    if not raw.strip():
        return {}, None, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        recovered = _recover(raw, fragments)
        if recovered is not None:
            return recovered
        raise NotJSON(
            f"the arguments are not valid JSON ({e.msg} at character {e.pos}): {raw[:200]!r}"
        ) from None
    if isinstance(value, str):  # arguments double-encoded as a JSON string
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {raw[:200]!r}", None
    return value, None, None


def _recover(raw: str, fragments: list[str]) -> tuple[dict[str, Any], None, str] | None:
    if len(fragments) > 1:
        try:
            value = json.loads(fragments[-1])
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value, None, "duplicated argument tail: used the final fragment"
    try:
        value, _ = json.JSONDecoder().raw_decode(raw.lstrip())
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict):
        return value, None, "trailing text after the arguments object was dropped"
    return None
