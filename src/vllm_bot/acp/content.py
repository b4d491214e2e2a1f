"""The editor's prompt as one task text, and a saved conversation as the updates that replay it.

Prompt capabilities are honest: text, embedded context (the editor's @-mentions with their text, unsaved
changes included) and resource links (read from disk by the read tool, under its rules, like `@path`).
Images and audio are refused: the conversation and the wire carry text only, and no model profile
says a model takes images, so `takes_images` is False until both exist.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)

from ..calls import AssistantTurn
from ..conversation import Entry, ToolResults, UserMessage
from ..ui.display import call_title
from .errors import InputError
from .updates import KINDS, Update


class PromptRefused(InputError):
    """A prompt block this agent cannot take (the message says why and what to do)."""


def takes_images(session: Any) -> bool:
    """Whether the served model's profile says it takes images: no profile key says so yet, and the
    conversation carries text only."""
    return False


def task_text(blocks: list[Any], workspace: Path, images: bool = False) -> str:
    """The prompt's blocks as the user's message: text as typed, embedded resources attached below
    it, resource links as `@path` mentions (the read tool attaches them)."""
    parts: list[str] = []
    attached: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(mention(block.uri, workspace))
        elif kind == "resource":
            attached.append(embedded(block.resource, workspace))
        elif kind in ("image", "audio") and not images:
            raise PromptRefused(
                f"this agent takes no {kind} in prompts: the model's profile does not say it takes "
                f"{kind}s and vLLM Bot sends text only; describe it in words, or attach a file's text"
            )
    text = " ".join(part for part in parts if part)
    return "\n\n".join([text, *attached]) if attached else text


def file_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def shown_path(uri: str, workspace: Path) -> str:
    """A file URI as a path relative to the workspace where it is inside it; other URIs as they are."""
    path = file_path(uri)
    if path is None:
        return uri
    relative = os.path.relpath(path, workspace)
    return path if relative.startswith("..") else relative


def mention(uri: str, workspace: Path) -> str:
    path = shown_path(uri, workspace)
    if file_path(uri) is None or any(c.isspace() for c in path):
        return path
    return "@" + path


def embedded(resource: Any, workspace: Path) -> str:
    where = shown_path(resource.uri, workspace)
    text = getattr(resource, "text", None)
    if text is None:
        return f'<attached path="{where}">\n(binary content, not shown)\n</attached>'
    return f'<attached path="{where}" from="the editor">\n{text.rstrip()}\n</attached>'


def replay(entries: list[Entry]) -> Iterator[Update]:
    """A saved conversation as the updates that show it again (`session/load`)."""
    for entry in entries:
        if isinstance(entry, UserMessage):
            if entry.kind == "task":
                yield update_user_message_text(entry.content)
            elif entry.kind == "summary":
                yield update_agent_thought_text(f"(earlier turns, summarized)\n{entry.content}\n")
        elif isinstance(entry, AssistantTurn):
            if entry.reasoning:
                yield update_agent_thought_text(entry.reasoning)
            if entry.content:
                yield update_agent_message_text(entry.content)
            for call in entry.tool_calls:
                title = call_title(call) if call.name else "(malformed tool call)"
                yield start_tool_call(
                    call.id,
                    title,
                    kind=KINDS.get(call.name, "other"),
                    status="pending",
                    raw_input=call.arguments,
                )
        elif isinstance(entry, ToolResults):
            for result in entry.results:
                yield update_tool_call(
                    result.tool_call_id,
                    status="failed" if result.is_error else "completed",
                    content=[tool_content(text_block(result.as_text()))],
                    raw_output=result.as_text(),
                )
