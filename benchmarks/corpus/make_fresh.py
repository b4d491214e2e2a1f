"""Build corpus (c), `fresh.yaml`: written after the parser was tuned on corpora (a) and (b), so
its first score said how well those fixes generalize (docs/parsing.md has it; the two classes of
miss it found were fixed after). Held out from the tests.
Run `python benchmarks/corpus/make_fresh.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent


def _c(
    cid: str, family: str, text: str, calls: list[tuple[str, Any]], tools: str = "default"
) -> dict[str, Any]:
    want = [{"name": n, "args": a} if a is not None else {"name": n, "error": True} for n, a in calls]
    return {"id": cid, "family": family, "tools": tools, "text": text, "calls": want}


CASES = [
    _c(
        "hermes-two-inline",
        "hermes",
        'Ok.<tool_call>{"name":"read","arguments":{"path":"a/b.c"}}</tool_call><tool_call>{"name":"exec","arguments":{"command":"make"}}</tool_call>',
        [("read", {"path": "a/b.c"}), ("exec", {"command": "make"})],
    ),
    _c(
        "qwen-crlf",
        "qwen3_coder",
        "<tool_call>\r\n<function=exec>\r\n<parameter=command>\r\nnode -v\r\n</parameter>\r\n</function>\r\n</tool_call>",
        [("exec", {"command": "node -v"})],
    ),
    _c(
        "glm-value-with-angle",
        "glm47",
        "<tool_call>write<arg_key>path</arg_key><arg_value>t.html</arg_value><arg_key>content</arg_key><arg_value><p>a &lt; b</p></arg_value></tool_call>",
        [("write", {"path": "t.html", "content": "<p>a &lt; b</p>"})],
    ),
    _c(
        "mistral-v11-call-id",
        "mistral",
        '[TOOL_CALLS]exec[CALL_ID]a1B2c3D4e[ARGS]{"command": "whoami"}',
        [("exec", {"command": "whoami"})],
    ),
    _c(
        "mistral-two-v11",
        "mistral",
        '[TOOL_CALLS]read[ARGS]{"path": "x"}[TOOL_CALLS]read[ARGS]{"path": "y"}',
        [("read", {"path": "x"}), ("read", {"path": "y"})],
    ),
    _c(
        "mistral-junk-between",
        "mistral",
        '[TOOL_CALLS] let me think\n\nOK now: [TOOL_CALLS][{"name": "read", "arguments": {"path": "q.txt"}}]',
        [("read", {"path": "q.txt"})],
    ),
    _c(
        "llama-python-tag-prose",
        "llama3_json",
        'Checking.<|python_tag|>{"name": "exec", "parameters": {"command": "free -m"}}',
        [("exec", {"command": "free -m"})],
    ),
    _c(
        "llama-json-in-sentence-end",
        "llama3_json",
        'I am calling {"name": "read", "parameters": {"path": "/etc/hosts"}}.',
        [("read", {"path": "/etc/hosts"})],
    ),
    _c(
        "pythonic-nested-list-arg",
        "pythonic",
        '[exec(command="ls", timeout=5), read(path="a.txt", limit=3)]',
        [("exec", {"command": "ls", "timeout": 5}), ("read", {"path": "a.txt", "limit": 3})],
    ),
    _c(
        "pythonic-bad-middle",
        "pythonic",
        '[read(path="1"), read(path=open("x")), read(path="3")]',
        [("read", {"path": "1"}), ("read", None), ("read", {"path": "3"})],
    ),
    _c(
        "llama4-prose-then-list",
        "llama4_pythonic",
        'Sure.\n<|python_start|>[exec(command="id")]<|python_end|>',
        [("exec", {"command": "id"})],
    ),
    _c(
        "deepseek-v31-prose",
        "deepseek_v31",
        'Reading.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"path": "k.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        [("read", {"path": "k.py"})],
    ),
    _c(
        "deepseek-v3-two",
        "deepseek_v3",
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>exec\n```json\n{"command": "uname -a"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>read\n```json\n{"path": "/proc/cpuinfo", "limit": 20}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("exec", {"command": "uname -a"}), ("read", {"path": "/proc/cpuinfo", "limit": 20})],
    ),
    _c(
        "kimi-spaces-newlines",
        "kimi_k2",
        '<|tool_calls_section_begin|>\n<|tool_call_begin|> functions.exec:0 <|tool_call_argument_begin|> {"command": "date"} <|tool_call_end|>\n<|tool_calls_section_end|>',
        [("exec", {"command": "date"})],
    ),
    _c(
        "kimi-k3-two",
        "kimi_k3",
        '<|open|>tools<|sep|><|open|>call tool="read" index="1"<|sep|><|open|>argument key="path" type="string"<|sep|>m.go<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool="exec" index="2"<|sep|><|open|>argument key="command" type="string"<|sep|>go test ./...<|close|>argument<|sep|><|open|>argument key="timeout" type="integer"<|sep|>300<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
        [("read", {"path": "m.go"}), ("exec", {"command": "go test ./...", "timeout": 300})],
    ),
    _c(
        "step3-after-think",
        "step3",
        '<think>Read config.</think><｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="read"><steptml:parameter name="path">conf/app.yaml</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        [("read", {"path": "conf/app.yaml"})],
    ),
    _c(
        "minimax-m2-multi-invoke",
        "minimax_m2",
        '<minimax:tool_call>\n<invoke name="read">\n<parameter name="path">a</parameter>\n</invoke>\n<invoke name="read">\n<parameter name="path">b</parameter>\n</invoke>\n</minimax:tool_call>',
        [("read", {"path": "a"}), ("read", {"path": "b"})],
    ),
    _c(
        "seed-after-seed-think",
        "seed_oss",
        "<seed:think>Run it.</seed:think><seed:tool_call>\n<function=exec>\n<parameter=command>python3 -V</parameter>\n</function>\n</seed:tool_call>",
        [("exec", {"command": "python3 -V"})],
    ),
    _c(
        "harmony-final-after-call",
        "openai",
        '<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path":"z.md"}<|call|>',
        [("read", {"path": "z.md"})],
    ),
    _c(
        "granite-20b-two",
        "granite-20b-fc",
        '<function_call> {"name": "exec", "arguments": {"command": "ls"}}\n<function_call> {"name": "exec", "arguments": {"command": "pwd"}}',
        [("exec", {"command": "ls"}), ("exec", {"command": "pwd"})],
    ),
    _c(
        "internlm-arguments-key",
        "internlm2",
        'Let me run it.<|action_start|><|plugin|>\n{"name": "exec", "arguments": {"command": "env"}}<|action_end|>',
        [("exec", {"command": "env"})],
    ),
    _c(
        "phi4-two",
        "phi4_mini",
        'functools[{"name": "read", "arguments": {"path": "p"}}, {"name": "read", "arguments": {"path": "q"}}]',
        [("read", {"path": "p"}), ("read", {"path": "q"})],
    ),
    _c(
        "functiongemma-typed",
        "functiongemma",
        "<start_function_call>call:exec{command:<escape>sleep 2<escape>,timeout:10}<end_function_call>",
        [("exec", {"command": "sleep 2", "timeout": 10})],
    ),
    _c(
        "olmo3-two-lines",
        "olmo3",
        '<function_calls>read(path="x.rs")\nexec(command="cargo check")</function_calls>',
        [("read", {"path": "x.rs"}), ("exec", {"command": "cargo check"})],
    ),
    _c(
        "cohere-prose",
        "cohere_command",
        'I will check.\n<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "exec", "parameters": {"command": "df"}}]<|END_ACTION|>',
        [("exec", {"command": "df"})],
    ),
    _c(
        "hy-v4-typed",
        "hy_v4",
        '<tool_calls><tool_call>search_issues<arg_key>query</arg_key><arg_value>oom</arg_value><arg_key>labels</arg_key><arg_value>["mem"]</arg_value><arg_key>min_score</arg_key><arg_value>0.9</arg_value></tool_call></tool_calls>',
        [("search_issues", {"query": "oom", "labels": ["mem"], "min_score": 0.9})],
        "typed",
    ),
    _c(
        "minicpm-cdata-free",
        "minicpm5",
        '<function name="exec"><param name="command"> npm ci </param><param name="timeout">120</param></function>',
        [("exec", {"command": "npm ci", "timeout": 120})],
    ),
    _c(
        "openhands-two-broken",
        "qwen3_xml",
        "<function=edit>\n<parameter=path>a.c</parameter>\n<parameter=command=str_replace</parameter>\n<parameter=old_str=x</parameter>\n<parameter=oldText>int x;</parameter>\n<parameter=newText>long x;</parameter>\n</function>",
        [("edit", {"path": "a.c", "oldText": "int x;", "newText": "long x;"})],
    ),
    _c(
        "langchain-json-fence-read",
        "langchain",
        'Action:\n```json\n{\n  "action": "read",\n  "action_input": {"path": "setup.py"}\n}\n```',
        [("read", {"path": "setup.py"})],
    ),
    _c(
        "bold-underscore-marker",
        "tool_call_block",
        '__TOOL_CALL:__ {"name": "exec", "args": {"command": "ls"}}',
        [("exec", {"command": "ls"})],
    ),
    _c(
        "toolcall-two-with-prose",
        "tool_call_block",
        'First:\nTOOL_CALL: {"name": "read", "args": {"path": "a"}}\nThen:\nTOOL_CALL: {"name": "read", "args": {"path": "b"}}',
        [("read", {"path": "a"}), ("read", {"path": "b"})],
    ),
    _c(
        "xlam-fence-two",
        "xlam",
        '```json\n[{"name": "exec", "arguments": {"command": "a"}}, {"name": "exec", "arguments": {"command": "b"}}]\n```',
        [("exec", {"command": "a"}), ("exec", {"command": "b"})],
    ),
]
NO_CALLS = {
    "explain-xml-format": "Qwen3-Coder writes <tool_call><function=...><parameter=...> blocks instead of JSON.",
    "example-after-colon-fence": 'Example:\n```\n{"name": "tool_name", "arguments": {"arg": "value"}}\n```',
    "schema-array-bare": '[{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]',
    "toolcall-none-lowercase": "tool_call: none. The answer is in the README.",
    "toolcall-no-call-needed": "TOOL_CALL: no call needed — it is already fixed.",
    "mention-python-tag": "Llama 3 emits <|python_tag|> before its JSON call.",
    "mention-action-tokens": "InternLM wraps calls in <|action_start|><|plugin|> ... <|action_end|>.",
    "json-config-in-prose": 'Set {"name": "prod", "replicas": 3} in values.yaml.',
    "quoted-call": '> <tool_call>{"name": "exec", "arguments": {"command": "rm -rf /"}}</tool_call>\n\nNever run that.',
    "diff-with-call": '```diff\n-TOOL_CALL: {"name": "read", "args": {"path": "a"}}\n+TOOL_CALL: {"name": "read", "args": {"path": "b"}}\n```',
    "for-example-object": 'For example {"name": "exec", "arguments": {"command": "ls"}} would list files.',
    "function-calls-word": "The function_calls section of the log shows three calls.",
}


def main() -> None:
    cases = CASES + [_c(f"nocall-{k}", "none", v, []) for k, v in NO_CALLS.items()]
    header = "# Corpus (c): written after tuning on (a) and (b). Made by make_fresh.py.\n"
    text = yaml.safe_dump(cases, allow_unicode=True, sort_keys=False, width=120)
    (HERE / "fresh.yaml").write_text(header + text, encoding="utf-8")
    print(f"{len(cases)} cases, {len(NO_CALLS)} without calls")


if __name__ == "__main__":
    main()
