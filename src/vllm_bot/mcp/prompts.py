"""MCP prompts as slash commands: `/mcp__server__prompt ARGS` asks the server for the prompt and
sends what it returns as the user's message.

ARGS are the prompt's arguments: `name=value` pairs (quote values with spaces), or values in the
order the server declares them; a prompt with one argument takes the whole rest of the line.
"""

from __future__ import annotations

import shlex
import threading
from typing import Any

from .manager import McpError, McpManager
from .results import describe_contents
from .state import McpPrompt


class PromptUsage(ValueError):
    """The arguments do not fit the prompt; the message says how to call it."""


def usage(prompt: McpPrompt) -> str:
    """`<city> [state]`: required arguments in angle brackets, optional ones in square brackets."""
    return " ".join(f"<{a['name']}>" if a.get("required") else f"[{a['name']}]" for a in prompt.arguments)


def parse_arguments(prompt: McpPrompt, text: str) -> dict[str, str]:
    """The prompt's arguments from what the user typed after the command; raises PromptUsage."""
    names = [str(a["name"]) for a in prompt.arguments]
    text = text.strip()
    if len(names) == 1 and text and not text.startswith(f"{names[0]}="):
        values = {names[0]: text}
    else:
        try:
            words = shlex.split(text)
        except ValueError as e:
            raise PromptUsage(f"cannot read the arguments ({e})") from None
        values = {}
        positional = iter(n for n in names)
        for word in words:
            key, eq, value = word.partition("=")
            if eq and key in names:
                values[key] = value
                continue
            name = next((n for n in positional if n not in values), None)
            if name is None:
                raise PromptUsage(f"too many arguments ({word!r} is one too many)")
            values[name] = word
    missing = [str(a["name"]) for a in prompt.arguments if a.get("required") and a["name"] not in values]
    if missing:
        raise PromptUsage(f"missing {', '.join(missing)}")
    return values


def prompt_text(
    manager: McpManager, prompt: McpPrompt, arguments: dict[str, str], cancel: threading.Event | None = None
) -> str:
    """The prompt's messages as one message for the model; raises McpError."""

    async def get(_progress: Any) -> list[dict[str, Any]]:
        result = await manager.client(prompt.server).get_prompt(prompt.name, arguments or None)
        return [m.model_dump(by_alias=True, exclude_none=True, mode="json") for m in result.messages]

    messages = manager.request(prompt.server, get, cancel=cancel)
    if not messages:
        raise McpError(f"the prompt {prompt.name} of MCP server {prompt.server} is empty")
    roles = {m.get("role") for m in messages}
    parts = []
    for message in messages:
        text = _content_text(message.get("content") or {})
        parts.append(text if roles == {"user"} else f"[{message.get('role', 'user')}]\n{text}")
    return "\n\n".join(parts)


def _content_text(content: dict[str, Any]) -> str:
    kind = content.get("type")
    if kind == "text":
        return str(content.get("text", ""))
    if kind == "resource":
        return describe_contents(content.get("resource") or {})
    if kind == "resource_link":
        return f"[resource link {content.get('uri', '')}]"
    return f"[{kind or 'unknown'} content, not shown]"
