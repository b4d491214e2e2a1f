"""Corpus (a)'s cases for the family variants of issue 36, written from each format's facts (vLLM's
step3, pythonic, kimi_k2 and mistral parsers and docs/parsing.md), never from `vllm_bot.parsing`:
Step-3 calls without the `function<｜tool_sep｜>` prefix or with the name on the separator's line,
several in one block, values whose whitespace is data; pythonic lists with one member that cannot
be read; Kimi-K2 call ids without their `:N` counter, and bare counters; Mistral (before v11)
lists after a stray word. Held out like the rest: tests/parsing never reads them.
"""

from __future__ import annotations

from typing import Any

from formats import Call

# A call the parser should hand back to the model as an error call: (name, None).
Expected = list[tuple[str, dict[str, Any] | None]]
# (family, id, text, expected calls, tool set of scenarios.TOOL_SETS or "default")
Case = tuple[str, str, str, Expected, str]

_BEGIN, _END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
_CALL, _CALL_END, _SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"


def _invoke(name: str, params: dict[str, str]) -> str:
    inner = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in params.items())
    return f'<steptml:invoke name="{name}">{inner}</steptml:invoke>'


def _step3(*bodies: str, between: str = "") -> str:
    return _BEGIN + between.join(f"{_CALL}{b}{_CALL_END}" for b in bodies) + _END


def _kimi(*calls: tuple[str, str]) -> str:
    parts = "".join(
        f"<|tool_call_begin|>{cid}<|tool_call_argument_begin|>{args}<|tool_call_end|>" for cid, args in calls
    )
    return f"<|tool_calls_section_begin|>{parts}<|tool_calls_section_end|>"


READ: Call = ("read", {"path": "src/main.py"})
LS: Call = ("exec", {"command": "ls -la src"})


def step3_cases() -> list[Case]:
    """Step-3's variants."""
    edit = {"path": "src/calc.py", "oldText": "    return a - b\n", "newText": "    return a + b\n"}
    command = 'printf "%s\\n" "say \\"hi\\"" > C:\\\\tmp\\\\out.txt'
    return [
        (
            "step3",
            "step3-no-prefix-prose-before",
            "I'll read the test first.\n\n"
            + _step3(_invoke("read", {"path": "tests/test_api.py", "offset": "120"})),
            [("read", {"path": "tests/test_api.py", "offset": 120})],
            "default",
        ),
        (
            "step3",
            "step3-no-prefix-two-calls-separator-between",
            "Checking both.\n"
            + _step3(
                _invoke("read", {"path": "src/main.py"}),
                _invoke("exec", {"command": "ls -la src"}),
                between=_SEP,
            )
            + "\nThen I'll report back.",
            [READ, LS],
            "default",
        ),
        (
            "step3",
            "step3-name-line-typed-whitespace",
            _step3(
                "function"
                + _SEP
                + "search_issues\n"
                + _invoke(
                    "search_issues",
                    {
                        "query": " login timeout ",
                        "limit": " 20 ",
                        "min_score": "\n0.75\n",
                        "include_closed": " false ",
                    },
                )
            ),
            [
                (
                    "search_issues",
                    {"query": " login timeout ", "limit": 20, "min_score": 0.75, "include_closed": False},
                )
            ],
            "typed",
        ),
        (
            "step3",
            "step3-name-line-indented-strings-kept",
            _step3("function" + _SEP + "edit\n" + _invoke("edit", edit)),
            [("edit", edit)],
            "default",
        ),
        (
            "step3",
            "step3-no-prefix-escapes-survive",
            _step3(_invoke("exec", {"command": command})),
            [("exec", {"command": command})],
            "default",
        ),
        (
            "step3",
            "step3-two-invokes-one-call",
            _step3(
                "function"
                + _SEP
                + _invoke("read", {"path": "src/main.py"})
                + _invoke("exec", {"command": "ls -la src"})
            ),
            [READ, LS],
            "default",
        ),
        (
            "step3",
            "step3-think-then-no-prefix",
            "<think>\nThe weather tool takes a city.\n</think>\n\n"
            + _step3(_invoke("get_weather", {"city": "Lisbon", "unit": "celsius"})),
            [("get_weather", {"city": "Lisbon", "unit": "celsius"})],
            "solo",
        ),
    ]


def pythonic_cases() -> list[Case]:
    """Pythonic lists with one member that cannot be read."""
    porto = ("get_weather", {"city": "Porto", "unit": "celsius"})
    return [
        (
            "pythonic",
            "pythonic-unknown-bytes-member",
            "[lookup(key=b'\\x01'), get_weather(city='Porto', unit='celsius')]",
            [("lookup", None), porto],
            "solo",
        ),
        (
            "pythonic",
            "pythonic-non-finite-member-last",
            "[get_weather(city='Porto', unit='celsius'), convert(x=1e999)]",
            [porto, ("convert", None)],
            "solo",
        ),
        (
            "pythonic",
            "pythonic-odd-quote-last",
            "[read(path='src/main.py'), exec(command='it's fine')]",
            [READ, ("exec", None)],
            "default",
        ),
        (
            "llama4_pythonic",
            "llama4-odd-quote-first",
            "<|python_start|>[exec(command='can't'), read(path=\"src/main.py\")]<|python_end|>",
            [("exec", None), READ],
            "default",
        ),
        (
            "lfm2",
            "lfm2-odd-quote-middle",
            "<|tool_call_start|>[read(path=\"src/main.py\"), write(path='a', content='won't'), "
            'exec(command="ls -la src")]<|tool_call_end|>',
            [READ, ("write", None), LS],
            "default",
        ),
        (
            "pythonic",
            "pythonic-unreadable-unknown-names",
            "[f(a='x 'y' 'z), g(b='p 'q' 'r)]",
            [],
            "solo",
        ),
    ]


def kimi_cases() -> list[Case]:
    """Kimi-K2 call ids."""
    weather = '{"city": "Lisbon", "unit": "celsius"}'
    return [
        (
            "kimi_k2",
            "kimi-id-without-counter-then-valid",
            _kimi(
                ("functions.read", '{"path": "src/main.py"}'),
                ("functions.exec:1", '{"command": "ls -la src"}'),
            ),
            [("read", None), LS],
            "default",
        ),
        (
            "kimi_k2",
            "kimi-dot-counter-then-valid",
            "Reading it.\n"
            + _kimi(
                ("functions.invalid.0", '{"path": "x"}'), ("functions.read:1", '{"path": "src/main.py"}')
            ),
            [("invalid.0", None), READ],
            "default",
        ),
        (
            "kimi_k2",
            "kimi-solo-name-without-counter",
            _kimi(("functions.get_weather", weather)),
            [("get_weather", None)],
            "solo",
        ),
        (
            "kimi_k2",
            "kimi-solo-bare-counters",
            "Both cities.\n" + _kimi((" 0 ", weather), ("1", '{"city": "Porto"}')),
            [("get_weather", {"city": "Lisbon", "unit": "celsius"}), ("get_weather", {"city": "Porto"})],
            "solo",
        ),
        (
            "kimi_k2",
            "kimi-bare-counter-several-tools",
            _kimi(("0", '{"path": "src/main.py"}')),
            [("0", None)],
            "default",
        ),
    ]


def mistral_cases() -> list[Case]:
    """Mistral before v11: a stray word or blank lines before the list."""
    return [
        (
            "mistral",
            "mistral-stray-word-list",
            '[TOOL_CALLS] sure [{"name": "read", "arguments": {"path": "src/main.py"}}]',
            [READ],
            "default",
        ),
        (
            "mistral",
            "mistral-label-newline-two",
            'On it.\n[TOOL_CALLS] tool calls:\n[{"name": "read", "arguments": {"path": "src/main.py"}}, '
            '{"name": "exec", "arguments": {"command": "ls -la src"}}]',
            [READ, LS],
            "default",
        ),
        (
            "mistral",
            "mistral-blank-lines-before-list",
            '[TOOL_CALLS]\n\n  [{"name": "exec", "arguments": {"command": "ls -la src"}}]',
            [LS],
            "default",
        ),
        (
            "mistral",
            "mistral-stray-word-unknown-tool",
            '[TOOL_CALLS] ok [{"name": "deploy", "arguments": {"env": "prod"}}]',
            [("deploy", None)],
            "default",
        ),
        ("mistral", "mistral-words-only", "[TOOL_CALLS] not json at all", [], "default"),
    ]


def variant_cases() -> list[Case]:
    return step3_cases() + pythonic_cases() + kimi_cases() + mistral_cases()
