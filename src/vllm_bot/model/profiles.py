"""Model profiles: per-model request settings, as data matched by the served model name or its root.

Precedence, highest first: explicit config (`vllm.temperature`, `vllm.context_window`,
`vllm.enable_function_calling: false`, flags) > a user profile (config.json `profiles`) > a shipped
profile (resources/profiles.yaml) > defaults. Within each layer the first matching profile (in file
order) wins; a user profile named like a shipped one and without `match` inherits its patterns.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..calls import AssistantTurn
from ..config import ConfigError, ProfileConfig, coerce
from ..conversation import UserMessage
from ..prompts import read_yaml

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
# Every ProfileConfig field but `match` is a setting that Profile carries too.
SETTINGS = tuple(f.name for f in fields(ProfileConfig) if f.name != "match")
THINKING_SWITCHES = ("enable_thinking", "thinking")  # chat_template_kwargs that turn thinking on/off


@dataclass
class Profile:
    """The effective settings for one model; `origin` says which profile set each one."""

    names: list[str] = field(default_factory=list)  # e.g. ["user:mine", "shipped:qwen3-coder"]
    tool_call_mode: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    keep_reasoning: bool | None = None
    context_window: int | None = None
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)

    @property
    def thinking_off(self) -> bool:
        """Does this profile turn the model's thinking off (Qwen3 `enable_thinking`, DeepSeek `thinking`)?"""
        return any(self.chat_template_kwargs.get(key) is False for key in THINKING_SWITCHES)

    def thinking_on(self) -> Profile:
        """The same profile without its thinking switch (the doctor asks once with thinking on)."""
        kwargs = {k: v for k, v in self.chat_template_kwargs.items() if k not in THINKING_SWITCHES}
        return dataclasses.replace(self, chat_template_kwargs=kwargs)

    @property
    def label(self) -> str:
        return " + ".join(self.names) if self.names else "defaults"

    def request_params(self) -> dict[str, Any]:
        """Chat request parameters this profile adds (temperature is resolved by the caller)."""
        params: dict[str, Any] = {}
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.stop:
            params["stop"] = list(self.stop)
        extra = dict(self.extra_body)
        if self.chat_template_kwargs:
            extra["chat_template_kwargs"] = dict(self.chat_template_kwargs)
        if extra:
            params["extra_body"] = extra
        return params


def pattern_matches(pattern: str, name: str) -> bool:
    """A glob (case-insensitive) on the whole name or the part after the last "/"; "re:" = regex search."""
    if pattern.startswith("re:"):
        return re.search(pattern[3:], name, re.IGNORECASE) is not None
    lowered, glob = name.lower(), pattern.lower()
    return fnmatch.fnmatchcase(lowered, glob) or fnmatch.fnmatchcase(lowered.rsplit("/", 1)[-1], glob)


def first_match(
    profiles: dict[str, ProfileConfig],
    names: Iterable[str | None],
    inherited: dict[str, list[str]] | None = None,
) -> tuple[str, ProfileConfig] | None:
    """The first profile (in order) with a pattern matching any of `names`."""
    candidates = [n for n in names if n]
    for key, profile in profiles.items():
        patterns = profile.match or (inherited or {}).get(key, [])
        for pattern in patterns:
            try:
                if any(pattern_matches(pattern, n) for n in candidates):
                    return key, profile
            except re.error as e:
                raise ConfigError(f"profile '{key}': bad regular expression {pattern!r} ({e})") from None
    return None


@lru_cache(maxsize=1)
def shipped_profiles() -> dict[str, ProfileConfig]:
    """resources/profiles.yaml, checked with the same strict rules as config.json."""
    return load_profiles(RESOURCES / "profiles.yaml")


def load_profiles(path: Path) -> dict[str, ProfileConfig]:
    data = read_yaml(path) or {}
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
        raise ConfigError(f"{path}: must define a 'profiles' mapping")
    return coerce(data["profiles"], dict[str, ProfileConfig], "profiles", str(path))


def resolve(
    names: Iterable[str | None],
    user: dict[str, ProfileConfig] | None = None,
    shipped: dict[str, ProfileConfig] | None = None,
) -> Profile:
    """Merge the first matching shipped profile and the first matching user profile (user wins)."""
    names = [n for n in names if n]
    shipped = shipped_profiles() if shipped is None else shipped
    inherited = {key: p.match for key, p in shipped.items()}
    profile = Profile()
    for layer, found in (
        ("shipped", first_match(shipped, names)),
        ("user", first_match(user or {}, names, inherited)),
    ):
        if found is not None:
            _overlay(profile, f"{layer}:{found[0]}", found[1])
    profile.names.reverse()  # the winning layer first
    return profile


def _overlay(profile: Profile, label: str, layer: ProfileConfig) -> None:
    profile.names.append(label)
    for name in SETTINGS:
        value = getattr(layer, name)
        if isinstance(value, dict):
            if value:
                setattr(profile, name, {**getattr(profile, name), **value})
                profile.origin[name] = label
        elif value is not None:
            setattr(profile, name, list(value) if isinstance(value, list) else value)
            profile.origin[name] = label


def describe(profile: Profile) -> str:
    """One line for the user: which profile applies and what it sets."""
    if not profile.names:
        return "no model profile matches (server defaults)"
    settings = []
    for name in SETTINGS:
        value = getattr(profile, name)
        if value not in (None, {}, []):
            settings.append(f"{name}={value}")
    return f"profile {profile.label}: " + (", ".join(settings) if settings else "no settings")


def keep_reasoning(messages: list[dict[str, Any]], conversation: Any) -> None:
    """For profiles with keep_reasoning: give the assistant messages of the current task that made tool
    calls their reasoning back, as `reasoning` (vLLM's harmony input) and `reasoning_content` (what
    chat templates read). `wire.to_messages` writes exactly one assistant message per turn."""
    entries = conversation.entries
    tasks = [i for i, e in enumerate(entries) if isinstance(e, UserMessage) and e.kind == "task"]
    start = tasks[-1] if tasks else 0
    turns = [(i, e) for i, e in enumerate(entries) if isinstance(e, AssistantTurn)]
    assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    for (index, turn), at in zip(turns, assistant, strict=False):
        if index > start and turn.tool_calls and turn.reasoning:
            messages[at].update(reasoning=turn.reasoning, reasoning_content=turn.reasoning)
