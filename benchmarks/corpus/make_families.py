"""Build corpus (a), `families.yaml`: model outputs in every tool-call format vLLM ships a parser
for, written from each format's facts (docs/parsing.md), plus the family quirks the parser once
missed, and (upstream.py) cases transcribed from vLLM's own parser tests for the newer families.
Held out: tests/parsing never reads it. Run `python benchmarks/corpus/make_families.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from formats import WRITERS, Call
from scenarios import BUILTIN, SOLO, TYPED
from upstream import FAMILIES as UPSTREAM_FAMILIES
from upstream import upstream_cases
from variants import variant_cases

HERE = Path(__file__).parent

INTROS = [
    "I'll start by looking at the file that sets this up.",
    "Let me check the current state before changing anything.",
    "To answer that I need to run the tests first.",
    "Good idea. I'll make that change now.",
    "First I want to see what the build prints.",
    "Sure — checking the repository layout first.",
    "I need a bit more context, so I'm reading the relevant code.",
    "That error comes from the config loader; let me confirm.",
]
THOUGHTS = [
    "The user wants the failing test fixed. I should read the test first, then the code it covers.",
    "They asked for a deploy script. Write it, then make it executable.",
    "Which file defines the server? Probably src/server.py. Check it.",
    "I should search before editing so I don't duplicate an existing helper.",
]
# How each family wraps its reasoning when the text reaches the client unparsed.
REASONING = {
    "seed_oss": ("<seed:think>", "</seed:think>\n"),
    "mistral": ("[THINK]", "[/THINK]"),
    "mistral_v11": ("[THINK]", "[/THINK]"),
    "openai": ("<|channel|>analysis<|message|>", "<|end|>"),
    "openai_stripped": ("analysis", ""),
    "kimi_k2": ("◁think▷", "◁/think▷"),
    "gemma4": ("<|channel>thought\n", "<channel|>"),
    "ernie45": ("", "\n</think>\n\n\n"),
}
SINGLE_CALL = {"internlm2", "gigachat3", "gigachat3_token"}
WHOLE_ONLY = {"pythonic", "xlam", "llama3_json", "minicpm5"}
# The families the issue names, with the writer keys that produce each.
FAMILIES: dict[str, list[str]] = {
    "hermes": ["hermes"],
    "mistral": ["mistral", "mistral_v11"],
    "llama3_json": ["llama3_json", "llama3_python_tag"],
    "llama4_pythonic": ["llama4_pythonic"],
    "pythonic": ["pythonic"],
    "granite": ["granite", "granite31"],
    "granite-20b-fc": ["granite-20b-fc"],
    "granite4": ["granite4"],
    "internlm2": ["internlm2"],
    "jamba": ["jamba"],
    "deepseek_v3": ["deepseek_v3"],
    "deepseek_v31": ["deepseek_v31"],
    "deepseek_v32": ["deepseek_v32"],
    "kimi_k2": ["kimi_k2"],
    "glm45": ["glm45"],
    "glm47": ["glm47"],
    "qwen3_xml": ["qwen3_xml"],
    "qwen3_coder": ["qwen3_coder"],
    "seed_oss": ["seed_oss"],
    "minimax": ["minimax"],
    "minimax_m2": ["minimax_m2"],
    "hunyuan_a13b": ["hunyuan_a13b"],
    "phi4_mini": ["phi4_mini"],
    "xlam": ["xlam"],
    "step3": ["step3"],
    "openai": ["openai", "openai_stripped"],
    "longcat": ["longcat"],
    "ernie45": ["ernie45"],
    "olmo3": ["olmo3"],
    "functiongemma": ["functiongemma"],
    "gigachat3": ["gigachat3", "gigachat3_token"],
    "gemma4": ["gemma4"],
    "apertus": ["apertus"],
    "lfm2": ["lfm2"],
    "dots": ["dots"],
    "hy_v3": ["hy_v3"],
    "hy_v4": ["hy_v4"],
    "kimi_k3": ["kimi_k3"],
    "minicpm5": ["minicpm5"],
    "cohere_command": ["cohere_command"],
    "poolside_v1": ["poolside_v1"],
    "step3p5": ["step3p5"],
}


def _case(family: str, cid: str, text: str, calls: list[Call], tools: str = "default") -> dict[str, Any]:
    return {
        "id": cid,
        "family": family,
        "tools": tools,
        "text": text,
        "calls": [{"name": n, "args": a} if a is not None else {"name": n, "error": True} for n, a in calls],
    }


def _think(key: str, thought: str) -> str:
    opener, closer = REASONING.get(key, ("<think>\n", "\n</think>\n\n"))
    return f"{opener}{thought}{closer}"


def generated() -> list[dict[str, Any]]:
    cases = []
    for f_index, (family, keys) in enumerate(FAMILIES.items()):
        for k_index, key in enumerate(keys):
            write = WRITERS[key]
            seed = f_index * 3 + k_index * 5

            def pick(i: int, seed: int = seed) -> Call:
                return BUILTIN[(seed + i) % len(BUILTIN)]

            one, two, tricky = [pick(0)], [pick(1), pick(2)], [BUILTIN[(4, 9, 11)[seed % 3]]]
            cases.append(_case(family, f"{key}-whole", write(one), one))
            if key not in WHOLE_ONLY:
                intro = INTROS[seed % len(INTROS)]
                cases.append(_case(family, f"{key}-prose", f"{intro}\n\n{write(one)}", one))
            if key not in SINGLE_CALL:
                cases.append(_case(family, f"{key}-pair", write(two), two))
            thought = THOUGHTS[seed % len(THOUGHTS)]
            cases.append(_case(family, f"{key}-think", _think(key, thought) + write([pick(3)]), [pick(3)]))
            typed = [TYPED[seed % len(TYPED)]]
            cases.append(_case(family, f"{key}-typed", write(typed), typed, "typed"))
            cases.append(_case(family, f"{key}-code", write(tricky), tricky))
    return cases


def quirks() -> list[dict[str, Any]]:
    """Shapes the families really produce that the plain writers do not."""
    read = [("read", {"path": "src/main.py"})]
    exec_ls = [("exec", {"command": "ls -la src"})]
    out = [
        _case(
            "step3",
            "step3-prose-and-two",
            "Let me look at both files.\n" + WRITERS["step3"]([*read, ("read", {"path": "setup.cfg"})]),
            [*read, ("read", {"path": "setup.cfg"})],
        ),
        _case(
            "step3",
            "step3-typed-integer",
            '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="read">'
            '<steptml:parameter name="path">app.py</steptml:parameter><steptml:parameter name="offset">'
            "10</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            [("read", {"path": "app.py", "offset": 10})],
        ),
        _case(
            "kimi_k2",
            "kimi-id-without-index",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.read<|tool_call_argument_begin|>"
            '{"path": "src/main.py"}<|tool_call_end|><|tool_calls_section_end|>',
            [("read", None)],  # an error call since issue 36 (no `:N` counter: never run)
        ),
        _case(
            "kimi_k2",
            "kimi-bare-name",
            "<|tool_calls_section_begin|>\n<|tool_call_begin|>exec:0<|tool_call_argument_begin|>"
            '{"command": "ls -la src"}<|tool_call_end|>\n<|tool_calls_section_end|>',
            exec_ls,
        ),
        _case(
            "kimi_k2",
            "kimi-bare-counter-one-tool",
            "<|tool_calls_section_begin|><|tool_call_begin|>0<|tool_call_argument_begin|>"
            '{"city": "Lisbon", "unit": "celsius"}<|tool_call_end|><|tool_calls_section_end|>',
            SOLO,
            "solo",
        ),
        _case(
            "kimi_k2",
            "kimi-stripped-markers",
            'I will list the folder.\nfunctions.exec:0 {"command": "ls -la src"}',
            exec_ls,
        ),
        _case(
            "mistral",
            "mistral-junk-then-call",
            '[TOOL_CALLS] not sure which tool fits here.\n[TOOL_CALLS]read[ARGS]{"path": "src/main.py"}',
            read,
        ),
        _case(
            "mistral",
            "mistral-junk-word-then-v11",
            '[TOOL_CALLS]junk\nLet me do it properly.\n[TOOL_CALLS]exec[ARGS]{"command": "ls -la src"}',
            exec_ls,
        ),
        _case(
            "xlam",
            "xlam-after-think",
            '<think>Read it first.</think>\n[{"name": "read", "arguments": {"path": "src/main.py"}}]',
            read,
        ),
        _case(
            "xlam",
            "xlam-json-fence",
            '```json\n[{"name": "exec", "arguments": {"command": "ls -la src"}}]\n```',
            exec_ls,
        ),
        _case(
            "xlam",
            "xlam-after-tool-calls-token",
            '[TOOL_CALLS][{"name": "read", "arguments": {"path": "src/main.py"}}]',
            read,
        ),
        _case(
            "pythonic",
            "pythonic-bad-sibling-bytes",
            '[read(path="src/main.py"), write(path="x.bin", content=b"\\x00"), exec(command="ls -la src")]',
            [*read, ("write", None), *exec_ls],
        ),
        _case(
            "llama4_pythonic",
            "llama4-bad-sibling-inf",
            '<|python_start|>[read(path="src/main.py"), read(path="a.py", offset=1e999)]<|python_end|>',
            [*read, ("read", None)],
        ),
        _case(
            "qwen3_coder",
            "qwen3-malformed-parameter-tag",
            "<tool_call>\n<function=edit>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
            "<parameter=command=str_replace</parameter>\n<parameter=oldText>\nx = 1\n</parameter>\n"
            "<parameter=newText>\nx = 2\n</parameter>\n</function>\n</tool_call>",
            [("edit", {"path": "src/app.py", "oldText": "x = 1", "newText": "x = 2"})],
        ),
        _case(
            "step3p5",
            "step3p5-function-without-equals",
            "<tool_call>\n<function read>\n<parameter=path>\nsrc/main.py\n</parameter>\n</function>\n</tool_call>",
            read,
        ),
        _case(
            "llama3_json",
            "llama3-in-prose",
            'Here is the call: {"name": "read", "parameters": {"path": "src/main.py"}} Would you like more?',
            read,
        ),
        _case(
            "llama3_json",
            "llama3-semicolons-in-prose",
            'Running both: {"name": "read", "parameters": {"path": "src/main.py"}}; '
            '{"name": "exec", "parameters": {"command": "ls -la src"}} and then I will report.',
            [*read, *exec_ls],
        ),
        _case(
            "hunyuan_a13b",
            "hunyuan-after-think",
            "<think>\nRead the entry point.\n</think>\n<answer>\n<tool_calls>"
            '[{"name": "read", "arguments": {"path": "src/main.py"}}]</tool_calls>\n</answer>',
            read,
        ),
        _case(
            "ernie45",
            "ernie45-response-then-call",
            "Checking.\n</think>\n\n<response>I will read the entry point.</response>\n<tool_call>\n"
            '{"name": "read", "arguments": {"path": "src/main.py"}}\n</tool_call>\n',
            read,
        ),
        _case(
            "openai",
            "harmony-analysis-then-call",
            "<|channel|>analysis<|message|>Need to list src.<|end|><|start|>assistant<|channel|>commentary "
            'to=functions.exec <|constrain|>json<|message|>{"command":"ls -la src"}<|call|>',
            exec_ls,
        ),
        _case(
            "openai",
            "harmony-recipient-after-channel",
            "<|start|>assistant to=functions.read<|channel|>commentary json<|message|>"
            '{"path": "src/main.py"}<|call|>',
            read,
        ),
        _case(
            "gigachat3",
            "gigachat3-prose-before",
            'Сейчас посмотрю файл.\nfunction call<|role_sep|>\n{"name": "read", "arguments": {"path": "src/main.py"}}',
            read,
        ),
        _case(
            "deepseek_v32",
            "deepseek-v4-tool-calls-wrapper",
            "Reading it.\n\n" + WRITERS["deepseek_v32"](read).replace("function_calls", "tool_calls"),
            read,
        ),
        _case(
            "glm47",
            "glm47-no-arguments",
            "<tool_call>exec<arg_key>command</arg_key><arg_value>ls -la src</arg_value></tool_call>",
            exec_ls,
        ),
        _case(
            "minimax_m2",
            "minimax-m2-unquoted-names",
            "<minimax:tool_call>\n<invoke name=read>\n<parameter name=path>src/main.py</parameter>\n"
            "</invoke>\n</minimax:tool_call>",
            read,
        ),
        _case(
            "hermes",
            "hermes-unterminated-at-end",
            'Let me read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "src/main.py"}}',
            read,
        ),
        _case(
            "granite",
            "granite-whitespace",
            '<|tool_call|> [ {"name": "exec", "arguments": {"command": "ls -la src"}} ]',
            exec_ls,
        ),
    ]
    return out


def variants() -> list[dict[str, Any]]:
    """Issue 36's family variants (variants.py), after the upstream cases."""
    return [_case(family, cid, text, calls, tools) for family, cid, text, calls, tools in variant_cases()]


def main() -> None:
    # Later additions go last, so the cases before them stay byte-identical.
    cases = generated() + quirks() + upstream_cases() + variants()
    header = (
        "# Corpus (a): every vLLM tool-call family, written from the formats' facts.\n"
        "# Generated by make_families.py; held out from tests/parsing. An expected call marked\n"
        "# `error: true` is one the parser should hand back to the model as an error call.\n"
        "# The cases with ids starting `up-` are third-party data: transcribed and adapted from the\n"
        "# parser tests of vLLM (https://github.com/vllm-project/vllm), Copyright contributors to the\n"
        "# vLLM project, Apache License 2.0; see upstream.py for sources and changes.\n"
    )
    text = yaml.safe_dump(cases, allow_unicode=True, sort_keys=False, width=120)
    (HERE / "families.yaml").write_text(header + text, encoding="utf-8")
    print(f"{len(cases)} cases, {len(FAMILIES) + len(UPSTREAM_FAMILIES)} families")


if __name__ == "__main__":
    main()
