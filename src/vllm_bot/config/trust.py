"""Trusting a workspace's own settings. A project config (`.vllm-bot/config.json`) and a `.mcp.json`
come from the repository: whoever wrote the repository wrote them. The keys that could weaken safety
apply only once the user has trusted that workspace; the answer is remembered in our state dir, keyed
by the workspace's real path and a hash of exactly those keys' values, so a changed file asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..printable import safe_text
from .statedir import user_state_dir

TRUST_FILE = "trusted-workspaces.json"
AGENT_WRITES = "agent-writes.json"  # files that configure the agent, as the agent last wrote them
TRUST_ENV = "VLLM_BOT_TRUST_PROJECT"  # =1: trust this run's project settings, as --trust-project does
# A setting of the trust question wraps at 100 columns (at spaces where it can), never cut; its next
# lines are indented deeper than an item, so no part of a value can pass for another setting.
SETTING_WRAP = textwrap.TextWrapper(
    100, initial_indent="  ", subsequent_indent=" " * 6, break_on_hyphens=False
)

# Dotted keys (and whole sections) a repository may not set until trusted: what sandboxes commands,
# what asks before acting, what the agent may touch, what runs a program and where our data goes.
SAFETY_KEYS = (
    "sandbox",  # all of it: mode, network, the bwrap binary, hidden and writable paths, limits
    "agent.approval",
    "tools.allowed_paths",
    "tools.exec_env",  # the environment of every command (PATH, LD_PRELOAD, ...)
    "mcp.servers",  # programs that run outside the sandbox, with the user's rights
    "vllm.base_url",  # where the code, the conversation and the API key are sent
    "system_prompt.template",  # a file read from anywhere on disk into the prompt
    "git.checkpoints",  # the snapshots undo needs
    "git.private_excludes",  # untracked files they leave out ("*" would leave out every one)
    "git.max_file_mb",  # and by size (1 would leave out most)
    "git.keep_sessions",  # how many sessions keep their checkpoints (0 would prune the ones before)
    "git.auto_commit",  # commits in the user's repository
)


def trusted_by_env(env: Any) -> bool:
    """`VLLM_BOT_TRUST_PROJECT=1` (or true/yes): trust this run's project settings."""
    return str(env.get(TRUST_ENV, "")).strip().lower() in ("1", "true", "yes", "on")


def is_safety_key(dotted: str) -> bool:
    return any(dotted == key or dotted.startswith(key + ".") for key in SAFETY_KEYS)


def split(data: dict[str, Any], prefix: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """(what any repository may set, {dotted safety key: value}) of one config mapping."""
    safe: dict[str, Any] = {}
    risky: dict[str, Any] = {}
    for key, value in data.items():
        dotted = prefix + key
        if is_safety_key(dotted) and "." not in dotted and isinstance(value, dict):
            risky.update({f"{dotted}.{name}": inner for name, inner in value.items()})  # a section
        elif is_safety_key(dotted):
            risky[dotted] = value
        elif isinstance(value, dict) and any(key.startswith(dotted + ".") for key in SAFETY_KEYS):
            inner_safe, inner_risky = split(value, dotted + ".")
            if inner_safe:
                safe[key] = inner_safe
            risky.update(inner_risky)
        else:
            safe[key] = value
    return safe, risky


def fingerprint(risky: dict[str, Any]) -> str:
    """A stable hash of the safety-relevant settings (any change in them asks again)."""
    canonical = json.dumps(risky, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def record_agent_write(workspace: Path, path: Path, data: bytes) -> None:
    """Note that the agent (with the user's approval) wrote `path`, a file that configures the agent."""
    store = user_state_dir() / AGENT_WRITES
    entries = _read_json(store)
    ws = entries.setdefault(str(workspace.resolve()), {})
    ws[str(path.relative_to(workspace))] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "at": time.strftime("%Y-%m-%d %H:%M"),
    }
    _write_json(store, entries)


def changes_since_trusted(workspace: Path, files: list[str], entry: dict[str, Any] | None) -> list[str]:
    """One line per file of `files` (relative to `workspace`) that changed since the workspace was last
    trusted (`entry`, None: never), and whether the agent wrote it as it is now."""
    wrote = _read_json(user_state_dir(create=False) / AGENT_WRITES).get(str(workspace.resolve()), {})
    trusted_files = (entry or {}).get("files") or {}
    lines = []
    for name in files:
        now = file_digest(workspace / name)
        agent = wrote.get(name)
        by_agent = isinstance(agent, dict) and agent.get("sha256") == now
        if entry is not None and trusted_files.get(name, "") == now:
            continue
        if entry is None and not by_agent:
            continue  # never trusted: the question says so; nothing changed that it would not show
        line = f"{name}: " + (
            f"changed since you trusted this workspace on {entry.get('since')}" if entry else ""
        )
        if by_agent:
            line += (
                "; " if entry else ""
            ) + f"written by the agent, with your approval, on {agent.get('at')}"
        elif agent:
            line += "; not as the agent last wrote it"
        lines.append(line)
    return lines


def _files_run(workspace: Path, server: Any) -> list[str]:
    """The files inside `workspace` one stdio server's command and arguments name, relative to it."""
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        return []
    cwd = server.get("cwd")
    base = workspace / cwd if isinstance(cwd, str) else workspace
    found = []
    for word in [server["command"], *(server.get("args") or [])]:
        if not isinstance(word, str) or not word or "\0" in word:
            continue
        path = Path(os.path.realpath(base / word))  # an absolute word stays itself
        if path.is_relative_to(workspace) and path != workspace and path.is_file():
            found.append(str(path.relative_to(workspace)))
    return found


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


@dataclass
class TrustRequest:
    """What a workspace asks to be trusted with: {file label: {dotted key: value}}, and which of its
    files changed since it was last trusted (`changes`, filled in by TrustPolicy)."""

    workspace: Path
    settings: dict[str, dict[str, Any]]
    changes: list[str] = field(default_factory=list)

    def keys(self) -> list[str]:
        return [key for keys in self.settings.values() for key in keys]

    def programs(self) -> list[str]:
        """Files inside the workspace that its MCP servers run, relative to it: the command, or an
        argument naming a file (`python3 tools/server.py`). They run outside the sandbox with the
        user's rights, so trusting the settings trusts these files as they are; a change asks again
        (code they import is not followed)."""
        ws = self.workspace.resolve()
        found: list[str] = []
        for keys in self.settings.values():
            for key, value in keys.items():
                servers = value.values() if key == "mcp.servers" and isinstance(value, dict) else [value]
                if key == "mcp.servers" or key.startswith(("mcp.servers.", "mcpServers.")):
                    found += [p for server in servers for p in _files_run(ws, server) if p not in found]
        return found

    def question(self) -> list[str]:
        """The lines shown before the yes/no question: every setting in full, long ones wrapped (the
        user approves exactly what runs), the repository's text escaped (it cannot move the cursor)."""
        workspace = safe_text(str(self.workspace), keep_newlines=False)
        lines = [f"The workspace {workspace} has its own settings that can weaken safety:"]
        for label, keys in self.settings.items():
            for key, value in keys.items():
                shown = f"{label}: {key} = {json.dumps(value, ensure_ascii=False)}"
                lines += SETTING_WRAP.wrap(safe_text(shown, keep_newlines=False))
        for program in self.programs():
            shown = f"runs {program} from the workspace, trusted as it is now (a change asks again)"
            lines += SETTING_WRAP.wrap(safe_text(shown, keep_newlines=False))
        for change in self.changes:
            lines += SETTING_WRAP.wrap(safe_text(change, keep_newlines=False))
        lines.append(
            "They come from the repository. Trust this workspace? They then apply, now and in later "
            "sessions, until they change."
        )
        return lines

    def ignored_warning(self) -> str:
        """The one line an untrusted workspace gets (the repository's key names escaped)."""
        parts = [f"{', '.join(keys)} ({label})" for label, keys in self.settings.items()]
        ignored = safe_text("; ".join(parts), keep_newlines=False)
        return (
            f"not trusted, so ignored: {ignored}. To trust this workspace, answer yes when an "
            f"interactive session here asks, or pass --trust-project ({TRUST_ENV}=1)."
        )


class TrustStore:
    """The trusted workspaces, in one JSON file in the per-user state dir."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        return self._path or user_state_dir(create=False) / TRUST_FILE

    def _read(self) -> dict[str, Any]:
        entries = _read_json(self.path).get("workspaces")
        return entries if isinstance(entries, dict) else {}

    def entry(self, workspace: Path) -> dict[str, Any] | None:
        """What was remembered when `workspace` was last trusted (None: never)."""
        found = self._read().get(str(workspace.resolve()))
        return found if isinstance(found, dict) else None

    def is_trusted(self, workspace: Path, digest: str) -> bool:
        entry = self.entry(workspace)
        return entry is not None and entry.get("sha256") == digest

    def remember(self, workspace: Path, digest: str, files: Sequence[str] = ()) -> None:
        entries = self._read()
        entries[str(workspace.resolve())] = {
            "sha256": digest,
            "since": time.strftime("%Y-%m-%d %H:%M"),
            "files": {name: file_digest(workspace / name) for name in files},
        }
        _write_json(self.path, {"version": 1, "workspaces": entries})


@dataclass
class TrustPolicy:
    """How this run decides: an explicit flag trusts (for this run only); an interactive start asks
    (`ask`) and remembers a yes; headless runs never ask."""

    explicit: bool = False
    ask: Callable[[TrustRequest], bool] | None = None
    store: TrustStore = field(default_factory=TrustStore)

    def decide(self, request: TrustRequest) -> str:
        """Returns "trusted" (remembered), "trusted for this run" (explicit), or "not trusted"."""
        merged: dict[str, Any] = {}
        for label, keys in request.settings.items():
            merged.update({f"{label}:{key}": value for key, value in keys.items()})
        programs = request.programs()
        merged.update({f"file:{name}": file_digest(request.workspace / name) for name in programs})
        digest = fingerprint(merged)
        if self.store.is_trusted(request.workspace, digest):
            return "trusted"
        files = [*request.settings, *programs]
        request.changes = changes_since_trusted(request.workspace, files, self.store.entry(request.workspace))
        if self.explicit:
            return "trusted for this run"
        if self.ask is not None and self.ask(request):
            self.store.remember(request.workspace, digest, files)
            return "trusted"
        return "not trusted"
