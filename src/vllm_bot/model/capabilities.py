"""What we learned about a server+model: remembered tool-call mode, kept in the user's state dir.

When a session falls back to text mode (the server refused tools) or sees tool calls leak into
`content` (the server's parser does not match the model), the next session for the same server and
model starts in text mode without a failed request. A `doctor` run that sees native calls work
forgets the entry. The cache is a small JSON file; a damaged file is treated as empty.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..cliargs import program_name
from ..config.statedir import user_state_dir
from ..events import CallsDetected, Debug, Event, ModeSwitched, Notice, RequestStarted
from .profiles import describe, resolve

CACHE_FILE = "servers.json"


@dataclass
class Remembered:
    mode: str  # "text"
    reason: str  # "fallback" (the server refused tools) or "leak" (calls arrived in content)
    detail: str = ""
    formats: list[str] = field(default_factory=list)
    since: str = ""  # local time it was learned, for the user


def server_key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')}|{model}"


class CapabilityCache:
    """Entries keyed by server URL + served model name, in one JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        return self._path or user_state_dir(create=False) / CACHE_FILE

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        return entries if isinstance(entries, dict) else {}

    def _write(self, entries: dict[str, Any]) -> None:
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": 1, "entries": entries}, indent=1), encoding="utf-8")
        os.replace(tmp, path)

    def get(self, base_url: str, model: str) -> Remembered | None:
        raw = self._read().get(server_key(base_url, model))
        if not isinstance(raw, dict) or raw.get("mode") != "text":
            return None
        formats = raw.get("formats")
        return Remembered(
            "text",
            str(raw.get("reason", "")),
            str(raw.get("detail", "")),
            [str(f) for f in formats] if isinstance(formats, list) else [],
            str(raw.get("since", "")),
        )

    def remember(self, base_url: str, model: str, entry: Remembered) -> None:
        entries = self._read()
        entry.since = entry.since or time.strftime("%Y-%m-%d %H:%M")
        entries[server_key(base_url, model)] = asdict(entry)
        self._write(entries)

    def forget(self, base_url: str, model: str) -> bool:
        """Drop the entry; True if there was one."""
        entries = self._read()
        if entries.pop(server_key(base_url, model), None) is None:
            return False
        self._write(entries)
        return True


def start_mode(
    enabled: bool,
    forced_native: bool,
    user_mode: str | None,
    shipped_mode: str | None,
    memo: Remembered | None,
) -> tuple[bool, str]:
    """(function calling on?, which layer decided) by precedence: config off > --function-calling flag >
    user profile > remembered fallback > shipped profile > default (native)."""
    if not enabled:
        return False, "config"
    if forced_native:
        return True, "flag"
    if user_mode is not None:
        return user_mode == "native", "user profile"
    if memo is not None:
        return False, "remembered"
    if shipped_mode is not None:
        return shipped_mode == "native", "shipped profile"
    return True, "default"


def remembered_note(memo: Remembered) -> str:
    why = (
        "the server refused tools"
        if memo.reason == "fallback"
        else f"tool calls leaked into the reply text ({', '.join(memo.formats) or 'unknown format'})"
    )
    return (
        f"starting in text mode: on {memo.since} {why} for this server and model. "
        f"`{program_name()} doctor` re-checks (and forgets this once native calls work); "
        "--function-calling forces a native try."
    )


class ModeMemory:
    """Event consumer: remembers a fallback or a leaked format for `client`'s server and model."""

    def __init__(self, cache: CapabilityCache, client: Any, emit: Any = None) -> None:
        self.cache = cache
        self.client = client
        self.emit = emit
        self._native_request = False
        self._saved = False

    def __call__(self, event: Event) -> None:
        if self._saved:
            return
        if isinstance(event, RequestStarted):
            self._native_request = event.mode == "native"
        elif isinstance(event, ModeSwitched) and not event.function_calling:
            self._save(Remembered("text", "fallback", event.reason))
        elif isinstance(event, CallsDetected) and event.source == "text" and self._native_request:
            formats = [f for f in event.formats if f != "native"]
            self._save(Remembered("text", "leak", "tool calls arrived in the reply text", formats))

    def _save(self, entry: Remembered) -> None:
        self._saved = True
        try:
            self.cache.remember(self.client.config.base_url, self.client.model, entry)
        except OSError as e:  # a read-only home must not stop the session
            if self.emit is not None:
                self.emit(Notice("warning", f"could not remember the tool-call mode: {e}"))


def configure(client: Any, config: Any, cache: CapabilityCache, emit: Any) -> None:
    """After connecting: give `client` its model profile and choose the starting tool-call mode."""
    info = client.model_info
    profile = resolve([client.model, info.root if info else None], config.profiles)
    client.profile = profile
    origin = profile.origin.get("tool_call_mode", "")
    memo = cache.get(config.vllm.base_url, client.model) if client.function_calling else None
    on, why = start_mode(
        config.vllm.enable_function_calling,
        "vllm.enable_function_calling" in config.flags and config.vllm.enable_function_calling,
        profile.tool_call_mode if origin.startswith("user:") else None,
        profile.tool_call_mode if origin.startswith("shipped:") else None,
        memo,
    )
    client.function_calling = on
    emit(Debug(f"tool-call mode {'native' if on else 'text'} ({why}); {describe(profile)}"))
    if why == "remembered" and memo is not None:
        emit(Notice("info", remembered_note(memo)))
