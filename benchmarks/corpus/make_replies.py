"""Build corpus (b), `replies.yaml`: replies of the kind our agent gets from local models — prose,
Markdown, code, reasoning and calls in the formats it meets most — plus no-call replies that talk
about calls. Held out: tests/parsing never reads it. Run `python benchmarks/corpus/make_replies.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from formats import WRITERS, Call
from scenarios import BUILTIN, TYPED

HERE = Path(__file__).parent

# Reply shapes; {a} and {b} are calls written in the reply's format.
SHAPES = [
    "I'll start with the entry point.\n{a}",
    "Let me check what the tests say before touching anything.\n\n{a}\n\nOnce I see the output I'll decide on the fix.",
    "## Plan\n\n1. Look at the current code\n2. Make the change\n3. Run the tests\n\nStarting with step 1:\n\n{a}",
    "Two things to check first:\n{a}\n{b}",
    "The failing assertion is in `parse_args()`, so I'll open the module that defines it.\n{a}",
    "This is the part that looks wrong:\n\n```python\nif retries > 3:\n    raise TimeoutError()\n```\n\nI'll confirm by reading the file.\n\n{a}",
    "設定ファイルを確認します。\n{a}\n確認が終わったら修正します。",
    "<think>\nThe user wants this fixed quickly. Reading the code first is the safest path.\n</think>\n\n{a}",
    "Sure! Here's what I'll do:\n- read the current implementation\n- then update it\n\n{a}\n\n{b}",
    "Good catch — the default is wrong. Fixing it now:\n{a}\nAfter this I'll run the suite again.",
    "Done with the first part. Next:\n\n{a}",
    "**Step 2.** Apply the change.\n\n{a}",
    "I couldn't find the helper in `utils/`, so I'll search for it.\n{a}",
    "Okay.\n{a}",
    "The build failed with `ModuleNotFoundError: No module named 'yaml'`. Let me look at the requirements and the CI script.\n\n{a}\n{b}",
]
FORMATS = [
    "tool_call_block",
    "tool_call_block",
    "hermes",
    "qwen3_coder",
    "glm45",
    "mistral_v11",
    "kimi_k2",
    "openai",
    "granite4",
    "seed_oss",
    "deepseek_v31",
    "minimax_m2",
]
LINE_FORMATS = {"tool_call_block", "hermes", "qwen3_coder", "glm45", "granite4", "seed_oss"}


def _case(cid: str, text: str, calls: list[Call], family: str, tools: str = "default") -> dict[str, Any]:
    return {
        "id": cid,
        "family": family,
        "tools": tools,
        "text": text,
        "calls": [{"name": n, "args": a} if a is not None else {"name": n, "error": True} for n, a in calls],
    }


def generated() -> list[dict[str, Any]]:
    cases = []
    n = 0
    for s_index, shape in enumerate(SHAPES):
        for f_index in range(10):
            fmt = FORMATS[(s_index * 7 + f_index) % len(FORMATS)]
            a = BUILTIN[(s_index * 5 + f_index * 3) % len(BUILTIN)]
            b = BUILTIN[(s_index * 5 + f_index * 3 + 7) % len(BUILTIN)]
            calls = [a, b] if "{b}" in shape else [a]
            if "{b}" in shape and fmt not in LINE_FORMATS:
                fmt = "hermes"
            write = WRITERS[fmt]
            text = shape.replace("{a}", write([a])).replace("{b}", write([b]))
            cases.append(_case(f"reply-{n:03d}-{fmt}", text, calls, fmt))
            n += 1
    return cases


READ: list[Call] = [("read", {"path": "src/app.py"})]
LS: list[Call] = [("exec", {"command": "ls -la"})]


def with_calls() -> list[dict[str, Any]]:
    """Hand-written replies with calls the parser used to miss or mangle."""
    return [
        _case(
            "prose-bare-json",
            'Here is the result: {"name": "read", "parameters": {"path": "src/app.py"}} Would you like more?',
            READ,
            "llama3_json",
        ),
        _case(
            "prose-bare-json-arguments",
            'I will now call {"name": "exec", "arguments": {"command": "ls -la"}} to see the files.',
            LS,
            "llama3_json",
        ),
        _case(
            "prose-semicolon-list",
            'Sure, running both: {"name": "read", "parameters": {"path": "src/app.py"}}; '
            '{"name": "exec", "parameters": {"command": "ls -la"}}',
            [*READ, *LS],
            "llama3_json",
        ),
        _case(
            "xlam-after-think",
            "<think>\nThe user wants the listing.\n</think>\n\n"
            '[{"name": "exec", "arguments": {"command": "ls -la"}}]',
            LS,
            "xlam",
        ),
        _case(
            "xlam-after-lone-close",
            'Listing is what they want.</think>[{"name": "exec", "arguments": {"command": "ls -la"}}, '
            '{"name": "read", "arguments": {"path": "src/app.py"}}]',
            [*LS, *READ],
            "xlam",
        ),
        _case(
            "bold-tool-call-json",
            '**TOOL_CALL:**\n{"name": "read", "args": {"path": "src/app.py"}}',
            READ,
            "tool_call_block",
        ),
        _case(
            "bold-tool-call-same-line",
            'Reading it now.\n\n**TOOL_CALL:** {"name": "exec", "args": {"command": "ls -la"}}',
            LS,
            "tool_call_block",
        ),
        _case(
            "bold-tool-call-fence",
            '**TOOL_CALL:**\n```json\n{"name": "read", "args": {"path": "src/app.py"}}\n```',
            READ,
            "tool_call_block",
        ),
        _case(
            "langchain-fence",
            'Thought: I need the file list.\n```json\n{"action": "exec", "action_input": {"command": "ls -la"}}\n```',
            LS,
            "langchain",
        ),
        _case(
            "langchain-bare",
            '{"action": "read", "action_input": {"path": "src/app.py"}}',
            READ,
            "langchain",
        ),
        _case(
            "langchain-prose",
            'Action:\n{\n  "action": "exec",\n  "action_input": {"command": "ls -la"}\n}',
            LS,
            "langchain",
        ),
        _case(
            "kimi-no-index",
            "Let me look.\n<|tool_calls_section_begin|><|tool_call_begin|>functions.read<|tool_call_argument_begin|>"
            '{"path": "src/app.py"}<|tool_call_end|><|tool_calls_section_end|>',
            [("read", None)],  # an error call since issue 36 (no `:N` counter: never run)
            "kimi_k2",
        ),
        _case(
            "kimi-two-no-prefix",
            "<|tool_calls_section_begin|><|tool_call_begin|>read:0<|tool_call_argument_begin|>"
            '{"path": "src/app.py"}<|tool_call_end|><|tool_call_begin|>exec:1<|tool_call_argument_begin|>'
            '{"command": "ls -la"}<|tool_call_end|><|tool_calls_section_end|>',
            [*READ, *LS],
            "kimi_k2",
        ),
        _case(
            "qwen-typed-timeout",
            "<tool_call>\n<function=exec>\n<parameter=command>\nmake test\n</parameter>\n"
            "<parameter=timeout>\n300\n</parameter>\n</function>\n</tool_call>",
            [("exec", {"command": "make test", "timeout": 300})],
            "qwen3_coder",
        ),
        _case(
            "qwen-typed-custom",
            "<tool_call>\n<function=search_issues>\n<parameter=query>\nflaky test\n</parameter>\n"
            "<parameter=limit>\n10\n</parameter>\n<parameter=min_score>\n0.5\n</parameter>\n"
            '<parameter=include_closed>\ntrue\n</parameter>\n<parameter=labels>\n["ci", "flaky"]\n'
            '</parameter>\n<parameter=filters>\n{"repo": "api"}\n</parameter>\n</function>\n</tool_call>',
            [
                (
                    "search_issues",
                    {
                        "query": "flaky test",
                        "limit": 10,
                        "min_score": 0.5,
                        "include_closed": True,
                        "labels": ["ci", "flaky"],
                        "filters": {"repo": "api"},
                    },
                )
            ],
            "qwen3_coder",
            "typed",
        ),
        _case(
            "openhands-malformed-tag",
            "I'll fix the constant.\n<function=edit>\n<parameter=path>src/app.py</parameter>\n"
            "<parameter=command=str_replace</parameter>\n<parameter=oldText>DEBUG = True</parameter>\n"
            "<parameter=newText>DEBUG = False</parameter>\n</function>",
            [("edit", {"path": "src/app.py", "oldText": "DEBUG = True", "newText": "DEBUG = False"})],
            "qwen3_xml",
        ),
        _case(
            "mistral-junk-then-valid",
            '[TOOL_CALLS] not a call, just thinking aloud.\n[TOOL_CALLS]read[ARGS]{"path": "src/app.py"}',
            READ,
            "mistral",
        ),
        _case(
            "mistral-junk-then-array",
            '[TOOL_CALLS]junk\n[TOOL_CALLS][{"name": "exec", "arguments": {"command": "ls -la"}}]',
            LS,
            "mistral",
        ),
        _case(
            "pythonic-bad-quote-sibling",
            '[read(path="src/app.py"), exec(command="echo "hi""), exec(command="ls -la")]',
            [*READ, ("exec", None), *LS],
            "pythonic",
        ),
        _case(
            "step3-in-reply",
            "I'll open it.\n<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
            '<steptml:invoke name="read"><steptml:parameter name="path">src/app.py</steptml:parameter>'
            "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            READ,
            "step3",
        ),
        _case(
            "harmony-stripped-analysis",
            'analysisNeed to list files.assistantcommentary to=functions.exec json{"command": "ls -la"}',
            LS,
            "openai",
        ),
        _case(
            "hermes-write-with-close-tag",
            "<tool_call>\n"
            + json.dumps(
                {
                    "name": "write",
                    "arguments": {"path": "docs/format.md", "content": "Calls end with </tool_call>.\n"},
                }
            )
            + "\n</tool_call>",
            [("write", {"path": "docs/format.md", "content": "Calls end with </tool_call>.\n"})],
            "hermes",
        ),
        _case(
            "toolcall-pythonic",
            'TOOL_CALL: read(path="src/app.py")',
            READ,
            "tool_call_block",
        ),
        _case(
            "json-fence-call",
            'Listing:\n```json\n{"name": "exec", "arguments": {"command": "ls -la"}}\n```',
            LS,
            "json_fence",
        ),
        _case(
            "glm-typed",
            "<tool_call>search_issues\n<arg_key>query</arg_key>\n<arg_value>slow query</arg_value>\n"
            "<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n<arg_key>include_closed</arg_key>\n"
            "<arg_value>false</arg_value>\n</tool_call>",
            [("search_issues", {"query": "slow query", "limit": 3, "include_closed": False})],
            "glm45",
            "typed",
        ),
        _case(
            "typed-json-schedule",
            "<tool_call>\n" + json.dumps({"name": TYPED[1][0], "arguments": TYPED[1][1]}) + "\n</tool_call>",
            [TYPED[1]],
            "hermes",
            "typed",
        ),
    ]


def no_calls() -> list[dict[str, Any]]:
    """Replies that talk about calls without making one: none may become a call or an error call."""
    texts = {
        "explain-format-fence": "To call a tool, write this:\n```\n<tool_call>\n"
        '{"name": "<function-name>", "arguments": <args-json-object>}\n</tool_call>\n```\n'
        "and wait for the result.",
        "explain-format-bare-placeholders": "Use this format for every call:\n<tool_call>\n"
        '{"name": "<tool-name>", "arguments": {"<param>": "<value>"}}\n</tool_call>',
        "schema-listing-fence": "These are the tools I have:\n```json\n"
        '{"type": "function", "function": {"name": "read", "parameters": {"type": "object", '
        '"properties": {"path": {"type": "string"}}, "required": ["path"]}}}\n```',
        "schema-listing-bare": '{"type": "function", "function": {"name": "exec", "description": "Run a command", '
        '"parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}',
        "schema-name-parameters": 'The read tool is declared as {"name": "read", "parameters": {"type": "object", '
        '"properties": {"path": {"type": "string"}}}} in the tool list.',
        "toolcall-none-needed": "TOOL_CALL: none needed, the answer is 42.",
        "toolcall-not-required": "TOOL_CALL: not required — the diff is already applied.",
        "toolcall-parenthesized-none": "TOOL_CALL: (none)\n\nThe function returns early when the list is empty.",
        "mention-tool-call-tags": "When I need a tool I wrap the JSON in <tool_call> tags; for this question "
        "no tool is needed. The answer is that `sorted()` returns a new list.",
        "mention-closing-tag": "Every call ends with </tool_call>, and the server stops generation there.",
        "mention-mistral-token": "Mistral models prefix calls with [TOOL_CALLS] and then a JSON list, so the "
        "parser looks for that token.",
        "mention-qwen-function-tag": "The <function=NAME> tag starts a Qwen call and parameters follow as "
        "<parameter=KEY> tags.",
        "mention-harmony-recipient": "gpt-oss puts to=functions.read in the message header to address a tool.",
        "mention-kimi-ids": "Kimi writes functions.NAME:IDX before the arguments of each call.",
        "package-json-fence": '```json\n{"name": "my-app", "version": "1.2.0", "scripts": {"test": "jest"}}\n```',
        "python-fence-dict": '```python\ncall = {"name": "exec", "arguments": {"command": cmd}}\n'
        "client.send(call)\n```",
        "inline-code-example": 'You can run it yourself with `{"name": "exec", "arguments": {"command": "make"}}`.',
        "table-of-tools": '| tool | example |\n|---|---|\n| read | `read(path="a.py")` |\n'
        '| exec | `{"command": "ls"}` |',
        "blockquote-example": '> TOOL_CALL: {"name": "read", "args": {"path": "a.py"}}\n\nThat line in the '
        "docs shows the format; nothing to run here.",
        "done-summary": "Done. I ran the tests (all 42 passed) and wrote the notes to notes/todo.md. "
        "No further tool calls are needed.",
        "explain-pythonic": "Llama 3.2 writes calls as a Python list such as [get_weather(city='Paris')] "
        "when it decides to use a tool.",
        "explain-tool-call-colon": "In text mode I answer with TOOL_CALL: followed by a JSON object that "
        "has name and args keys.",
        "bold-toolcall-none": "**TOOL_CALL:** none — I can answer directly: use `git rebase -i`.",
        "explain-hermes-inline": 'The Hermes format is <tool_call>{"name": ..., "arguments": ...}</tool_call>, '
        "one block per call.",
        "langchain-unknown-action": '```json\n{"action": "Final Answer", "action_input": "The build is green."}\n```',
    }
    return [_case(f"nocall-{cid}", text, [], "none") for cid, text in texts.items()]


def main() -> None:
    cases = generated() + with_calls() + no_calls()
    header = (
        "# Corpus (b): replies of our own, with and without calls, including no-call replies that\n"
        "# talk about calls. Generated by make_replies.py; held out from tests/parsing.\n"
    )
    text = yaml.safe_dump(cases, allow_unicode=True, sort_keys=False, width=120)
    (HERE / "replies.yaml").write_text(header + text, encoding="utf-8")
    print(f"{len(cases)} replies, {sum(1 for c in cases if not c['calls'])} without calls")


if __name__ == "__main__":
    main()
