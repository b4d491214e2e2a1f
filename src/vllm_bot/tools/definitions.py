"""TOOL_DEFINITIONS: the single source of truth for the built-in tools (OpenAI tool format).

The function-calling payload, the text-mode listing in the system prompt, argument validation and
`/tools` help are all derived from this list. Descriptions are short on purpose: every token is
sent with every request to a model with a small context window.
"""

from __future__ import annotations

from typing import Any

from .shapes import typed_signature


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _tool(
        "read",
        "Read a text file with numbered lines, or list a directory.",
        {
            "path": {"type": "string", "description": "File or directory, relative to the workspace."},
            "offset": {"type": "integer", "description": "First line to show (1-based).", "minimum": 1},
            "limit": {"type": "integer", "description": "Number of lines (default 2000).", "minimum": 1},
        },
        ["path"],
    ),
    _tool(
        "write",
        "Create or overwrite a file with the given content.",
        {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "content": {"type": "string", "description": "The complete new file content."},
        },
        ["path", "content"],
    ),
    _tool(
        "edit",
        "Replace exact text in a file. oldText must match the file exactly, including indentation, "
        "and be unique unless replace_all is true.",
        {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "oldText": {"type": "string", "description": "Exact text to find."},
            "newText": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
        },
        ["path", "oldText", "newText"],
    ),
    _tool(
        "exec",
        "Run a shell command in the workspace and return its output and exit code.",
        {
            "command": {"type": "string", "description": "The shell command."},
            "timeout": {"type": "integer", "description": "Seconds before it is killed.", "minimum": 1},
        },
        ["command"],
    ),
]


# Ways of working on a large task (issue 37), offered by the session when config and mode say so (off,
# they cost no tokens): the task list, plan mode's way out, and read-only sub-agents.
STEP = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
    },
    "required": ["text", "status"],
    "additionalProperties": False,
}
UPDATE_PLAN = _tool(
    "update_plan",
    "Keep a short task list for a task of 3 or more steps; send the whole list each time it changes.",
    {"steps": {"type": "array", "items": STEP, "description": "Every step, at most one in_progress."}},
    ["steps"],
)
PRESENT_PLAN = _tool(
    "present_plan",
    "Plan mode: show the user your plan (Markdown) for approval. Nothing may change before they approve.",
    {"plan": {"type": "string", "description": "The plan: what to change, where and how to check it."}},
    ["plan"],
)
DELEGATE = _tool(
    "delegate",
    "Send a read-only sub-agent to explore (read files, run commands) and answer a question; you get "
    "only its short answer. Use it for searches that would fill your context.",
    {
        "task": {"type": "string", "description": "What to find out, and what the answer must contain."},
        "files": {"type": "array", "items": {"type": "string"}, "description": "Where to start looking."},
    },
    ["task"],
)


def tool_names(definitions: list[dict[str, Any]]) -> list[str]:
    return [d["function"]["name"] for d in definitions]


def find_definition(definitions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for d in definitions:
        if d["function"]["name"] == name:
            return d
    return None


def signature(definition: dict[str, Any], *, typed: bool = True) -> str:
    """`read(path: string, offset?: integer)`: the compact form used in the text-mode prompt and help,
    with types, enums and nested shapes (shapes.py); `typed=False`: `read(path, offset?)`."""
    if typed:
        return typed_signature(definition)
    fn = definition["function"]
    params = fn.get("parameters") or {}
    required = set(params.get("required") or [])
    parts = [p if p in required else p + "?" for p in (params.get("properties") or {})]
    return f"{fn['name']}({', '.join(parts)})"
