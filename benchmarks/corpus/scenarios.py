"""The calls the corpora are made of: realistic work for the built-in tools and for a tool set
with typed parameters (integer, number, boolean, array, object), plus a one-tool set."""

from __future__ import annotations

from typing import Any

from upstream import TOOL_SETS as UPSTREAM_TOOL_SETS

Call = tuple[str, dict[str, Any]]


def _tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TYPED_TOOLS = [
    _tool(
        "search_issues",
        {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "min_score": {"type": "number"},
            "include_closed": {"type": "boolean"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "filters": {"type": "object"},
        },
        ["query"],
    ),
    _tool(
        "schedule_job",
        {
            "name": {"type": "string"},
            "delay_minutes": {"type": "integer"},
            "retry": {"type": "boolean"},
            "env": {"type": "object"},
            "args": {"type": "array"},
        },
        ["name"],
    ),
]
SOLO_TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}}, ["city"]),
]
# The upstream cases (upstream.py) offer the tools their vLLM tests offer.
TOOL_SETS = {"typed": TYPED_TOOLS, "solo": SOLO_TOOLS, **UPSTREAM_TOOL_SETS}

BUILTIN: list[Call] = [
    ("read", {"path": "src/app/config.py"}),
    ("read", {"path": "tests/test_api.py", "offset": 120, "limit": 40}),
    ("exec", {"command": "pytest -q tests/test_parser.py -k unicode"}),
    ("exec", {"command": 'grep -rn "TODO" src/ | head -20', "timeout": 30}),
    (
        "write",
        {
            "path": "scripts/deploy.sh",
            "content": '#!/usr/bin/env bash\nset -euo pipefail\necho "deploying $1"\nrsync -a dist/ "$HOST:/srv/app/"\n',
        },
    ),
    ("edit", {"path": "src/server.py", "oldText": "app.run(debug=True)", "newText": "app.run(debug=False)"}),
    (
        "edit",
        {
            "path": "src/models/user.py",
            "oldText": "from typing import List",
            "newText": "",
            "replace_all": True,
        },
    ),
    ("exec", {"command": "git log --oneline -5 && git status --short"}),
    ("read", {"path": "docs/設計メモ.md"}),
    (
        "write",
        {
            "path": "src/utils/slug.py",
            "content": 'import re\n\n\ndef slugify(text: str) -> str:\n    """Lower-case words joined by dashes."""\n    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")\n',
        },
    ),
    ("exec", {"command": "npm run build -- --mode production", "timeout": 600}),
    (
        "edit",
        {
            "path": "package.json",
            "oldText": '"test": "jest"',
            "newText": '"test": "jest --coverage"',
        },
    ),
    ("read", {"path": "README.md", "limit": 80}),
    ("exec", {"command": "ls -la ~/.config && cat /etc/os-release"}),
    ("write", {"path": "notes/todo.md", "content": "- [ ] fix login redirect\n- [x] bump deps\n"}),
    ("edit", {"path": "Makefile", "oldText": "\tpython -m pytest", "newText": "\tpython -m pytest -x"}),
]

TYPED: list[Call] = [
    (
        "search_issues",
        {
            "query": "login timeout",
            "limit": 20,
            "min_score": 0.75,
            "include_closed": False,
            "labels": ["bug", "auth"],
            "filters": {"author": "mira", "since": "2026-01-01"},
        },
    ),
    (
        "schedule_job",
        {
            "name": "nightly-backup",
            "delay_minutes": 90,
            "retry": True,
            "env": {"TZ": "UTC"},
            "args": ["--full", 3],
        },
    ),
    ("search_issues", {"query": "crash on start", "limit": 5, "include_closed": True}),
]
SOLO: list[Call] = [("get_weather", {"city": "Lisbon", "unit": "celsius"})]
