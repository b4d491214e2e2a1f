"""Writers for the raw text each tool-call family emits, used only to build the held-out corpora.

Each writer takes a list of (name, args) calls and returns what a model of that family writes,
following the family's format as vLLM's parser for it reads it (see docs/parsing.md). These are
independent of `vllm_bot.parsing`: the corpora must not be shaped by the parser they measure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Call = tuple[str, dict[str, Any]]


def _j(value: Any, compact: bool = False) -> str:
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False)


def _raw(value: Any) -> str:
    """An XML-style raw value: strings as they are, everything else as JSON."""
    return value if isinstance(value, str) else _j(value)


def _py(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if "\n" not in value else json.dumps(value, ensure_ascii=False)
    return repr(value)


def hermes(calls: list[Call]) -> str:
    return "\n".join(f"<tool_call>\n{_j({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)


def mistral_pre_v11(calls: list[Call]) -> str:
    return "[TOOL_CALLS] " + _j([{"name": n, "arguments": a} for n, a in calls])


def mistral_v11(calls: list[Call]) -> str:
    return "".join(f"[TOOL_CALLS]{n}[ARGS]{_j(a, compact=True)}" for n, a in calls)


def llama3_json(calls: list[Call]) -> str:
    return "; ".join(_j({"name": n, "parameters": a}) for n, a in calls)


def llama3_python_tag(calls: list[Call]) -> str:
    return "<|python_tag|>" + llama3_json(calls)


def _pycall(name: str, args: dict[str, Any]) -> str:
    return f"{name}(" + ", ".join(f"{k}={_py(v)}" for k, v in args.items()) + ")"


def pythonic(calls: list[Call]) -> str:
    return "[" + ", ".join(_pycall(n, a) for n, a in calls) + "]"


def llama4_pythonic(calls: list[Call]) -> str:
    return "<|python_start|>" + pythonic(calls) + "<|python_end|>"


def granite(calls: list[Call]) -> str:
    return "<|tool_call|>" + _j([{"name": n, "arguments": a} for n, a in calls])


def granite31(calls: list[Call]) -> str:
    return "<tool_call>" + _j([{"name": n, "arguments": a} for n, a in calls])


def granite_20b_fc(calls: list[Call]) -> str:
    return "\n".join(f"<function_call> {_j({'name': n, 'arguments': a})}" for n, a in calls)


def granite4(calls: list[Call]) -> str:
    return "".join(f"<tool_call>{_j({'name': n, 'arguments': a})}</tool_call>" for n, a in calls)


def internlm2(calls: list[Call]) -> str:
    n, a = calls[0]
    return f"<|action_start|><|plugin|>\n{_j({'name': n, 'parameters': a})}<|action_end|>"


def jamba(calls: list[Call]) -> str:
    return "<tool_calls>" + _j([{"name": n, "arguments": a} for n, a in calls]) + "</tool_calls>"


def hunyuan_a13b(calls: list[Call]) -> str:
    return "助手：<tool_calls>" + _j([{"name": n, "arguments": a} for n, a in calls], True) + "</tool_calls>"


def minimax_m1(calls: list[Call]) -> str:
    body = "\n".join(_j({"name": n, "arguments": a}) for n, a in calls)
    return f"<tool_calls>\n{body}\n</tool_calls>"


def deepseek_v3(calls: list[Call]) -> str:
    parts = [
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_j(a)}\n```<｜tool▁call▁end｜>"
        for n, a in calls
    ]
    return "<｜tool▁calls▁begin｜>" + "\n".join(parts) + "<｜tool▁calls▁end｜>"


def deepseek_v31(calls: list[Call]) -> str:
    parts = [f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_j(a)}<｜tool▁call▁end｜>" for n, a in calls]
    return "<｜tool▁calls▁begin｜>" + "".join(parts) + "<｜tool▁calls▁end｜>"


def deepseek_v32(calls: list[Call], wrapper: str = "function_calls") -> str:
    out = [f"<｜DSML｜{wrapper}>"]
    for n, a in calls:
        out.append(f'<｜DSML｜invoke name="{n}">')
        for k, v in a.items():
            flag = "true" if isinstance(v, str) else "false"
            out.append(f'<｜DSML｜parameter name="{k}" string="{flag}">{_raw(v)}</｜DSML｜parameter>')
        out.append("</｜DSML｜invoke>")
    out.append(f"</｜DSML｜{wrapper}>")
    return "\n".join(out)


def kimi_k2(calls: list[Call]) -> str:
    parts = [
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_j(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    ]
    return "<|tool_calls_section_begin|>" + "".join(parts) + "<|tool_calls_section_end|>"


def glm45(calls: list[Call]) -> str:
    out = []
    for n, a in calls:
        pairs = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>\n" for k, v in a.items())
        out.append(f"<tool_call>{n}\n{pairs}</tool_call>")
    return "\n".join(out)


def glm47(calls: list[Call]) -> str:
    out = []
    for n, a in calls:
        pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>" for k, v in a.items())
        out.append(f"<tool_call>{n}{pairs}</tool_call>")
    return "".join(out)


def _qwen_function(n: str, a: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>\n{_raw(v)}\n</parameter>\n" for k, v in a.items())
    return f"<function={n}>\n{params}</function>"


def qwen3_coder(calls: list[Call]) -> str:
    return "\n".join(f"<tool_call>\n{_qwen_function(n, a)}\n</tool_call>" for n, a in calls)


def qwen3_xml_bare(calls: list[Call]) -> str:
    return "\n".join(_qwen_function(n, a) for n, a in calls)


def _seed_value(value: Any) -> str:
    raw = _raw(value)
    return f"\n{raw}\n" if "\n" in raw else raw


def seed_oss(calls: list[Call]) -> str:
    out = []
    for n, a in calls:
        # like Qwen3-Coder, one newline each side of a value is layout: multi-line values get them
        params = "".join(f"<parameter={k}>{_seed_value(v)}</parameter>\n" for k, v in a.items())
        out.append(f"<seed:tool_call>\n<function={n}>\n{params}</function>\n</seed:tool_call>")
    return "\n".join(out)


def _invokes(calls: list[Call], prefix: str = "", quote: str = '"') -> str:
    out = []
    for n, a in calls:
        out.append(f"<{prefix}invoke name={quote}{n}{quote}>")
        for k, v in a.items():
            out.append(f"<{prefix}parameter name={quote}{k}{quote}>{_raw(v)}</{prefix}parameter>")
        out.append(f"</{prefix}invoke>")
    return "\n".join(out)


def minimax_m2(calls: list[Call]) -> str:
    return f"<minimax:tool_call>\n{_invokes(calls)}\n</minimax:tool_call>"


def step3(calls: list[Call]) -> str:
    parts = []
    for n, a in calls:
        params = "".join(f'<steptml:parameter name="{k}">{_raw(v)}</steptml:parameter>' for k, v in a.items())
        parts.append(
            f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{n}">{params}'
            f"</steptml:invoke><｜tool_call_end｜>"
        )
    return "<｜tool_calls_begin｜>" + "".join(parts) + "<｜tool_calls_end｜>"


def phi4_mini(calls: list[Call]) -> str:
    return "functools" + _j([{"name": n, "arguments": a} for n, a in calls])


def xlam(calls: list[Call]) -> str:
    return _j([{"name": n, "arguments": a} for n, a in calls])


def harmony(calls: list[Call]) -> str:
    return "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{_j(a)}<|call|>"
        for n, a in calls
    )


def harmony_stripped(calls: list[Call]) -> str:
    return "".join(f"assistantcommentary to=functions.{n} json{_j(a)}" for n, a in calls)


def longcat(calls: list[Call]) -> str:
    return "\n".join(
        f"<longcat_tool_call>{_j({'name': n, 'arguments': a})}</longcat_tool_call>" for n, a in calls
    )


def ernie45(calls: list[Call]) -> str:
    return "\n".join(f"<tool_call>\n{_j({'name': n, 'arguments': a})}\n</tool_call>\n" for n, a in calls)


def olmo3(calls: list[Call]) -> str:
    return "<function_calls>" + "\n".join(_pycall(n, a) for n, a in calls) + "</function_calls>"


def _gemma_value(value: Any, quote: str) -> str:
    if isinstance(value, str):
        return f"{quote}{value}{quote}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(v, quote)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v, quote) for v in value) + "]"
    return str(value)


def functiongemma(calls: list[Call]) -> str:
    return "".join(
        f"<start_function_call>call:{n}{_gemma_value(a, '<escape>')}<end_function_call>" for n, a in calls
    )


_GEMMA4_QUOTE = '<|"|>'


def gemma4(calls: list[Call]) -> str:
    return "".join(f"<|tool_call>call:{n}{_gemma_value(a, _GEMMA4_QUOTE)}<tool_call|>" for n, a in calls)


def gigachat3(calls: list[Call]) -> str:
    n, a = calls[0]
    return f"function call<|role_sep|>\n{_j({'name': n, 'arguments': a})}"


def gigachat3_token(calls: list[Call]) -> str:
    n, a = calls[0]
    return f"<|function_call|>{_j({'name': n, 'arguments': a})}"


def apertus(calls: list[Call]) -> str:
    return "<|tools_prefix|>" + _j([{n: a} for n, a in calls]) + "<|tools_suffix|>"


def lfm2(calls: list[Call]) -> str:
    return "<|tool_call_start|>" + pythonic(calls) + "<|tool_call_end|>"


def dots(calls: list[Call]) -> str:
    return f"<dots_function_call>\n{_invokes(calls)}\n</dots_function_call>"


def hy_v3(calls: list[Call]) -> str:
    parts = []
    for n, a in calls:
        pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>" for k, v in a.items())
        parts.append(f"<tool_call>{n}<tool_sep>{pairs}</tool_call>")
    return "<tool_calls>" + "".join(parts) + "</tool_calls>"


def hy_v4(calls: list[Call]) -> str:
    parts = []
    for n, a in calls:
        pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{_raw(v)}</arg_value>" for k, v in a.items())
        parts.append(f"<tool_call>{n}{pairs}</tool_call>")
    return "<tool_calls>\n" + "\n".join(parts) + "\n</tool_calls>"


def kimi_k3(calls: list[Call]) -> str:
    out = ["<|open|>tools<|sep|>"]
    for i, (n, a) in enumerate(calls, 1):
        out.append(f'<|open|>call tool="{n}" index="{i}"<|sep|>')
        for k, v in a.items():
            kind = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}.get(
                type(v), "object"
            )
            out.append(f'<|open|>argument key="{k}" type="{kind}"<|sep|>{_raw(v)}<|close|>argument<|sep|>')
        out.append("<|close|>call<|sep|>")
    out.append("<|close|>tools<|sep|>")
    return "".join(out)


def minicpm5(calls: list[Call]) -> str:
    out = []
    for n, a in calls:
        params = "".join(f'<param name="{k}">{_raw(v)}</param>' for k, v in a.items())
        out.append(f'<function name="{n}">{params}</function>')
    return "\n".join(out)


def cohere(calls: list[Call]) -> str:
    items = [{"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)]
    body = ",\n    ".join(_j(item) for item in items)
    return f"<|START_ACTION|>[\n    {body}\n]<|END_ACTION|>"


def poolside_v1(calls: list[Call]) -> str:
    return glm45(calls)


def step3p5(calls: list[Call]) -> str:
    return qwen3_coder(calls)


def tool_call_block(calls: list[Call]) -> str:
    return "\n".join(f"TOOL_CALL: {_j({'name': n, 'args': a})}" for n, a in calls)


WRITERS: dict[str, Callable[[list[Call]], str]] = {
    "hermes": hermes,
    "mistral": mistral_pre_v11,
    "mistral_v11": mistral_v11,
    "llama3_json": llama3_json,
    "llama3_python_tag": llama3_python_tag,
    "pythonic": pythonic,
    "llama4_pythonic": llama4_pythonic,
    "granite": granite,
    "granite31": granite31,
    "granite-20b-fc": granite_20b_fc,
    "granite4": granite4,
    "internlm2": internlm2,
    "jamba": jamba,
    "hunyuan_a13b": hunyuan_a13b,
    "minimax": minimax_m1,
    "deepseek_v3": deepseek_v3,
    "deepseek_v31": deepseek_v31,
    "deepseek_v32": deepseek_v32,
    "kimi_k2": kimi_k2,
    "glm45": glm45,
    "glm47": glm47,
    "qwen3_coder": qwen3_coder,
    "qwen3_xml": qwen3_xml_bare,
    "seed_oss": seed_oss,
    "minimax_m2": minimax_m2,
    "step3": step3,
    "phi4_mini": phi4_mini,
    "xlam": xlam,
    "openai": harmony,
    "openai_stripped": harmony_stripped,
    "longcat": longcat,
    "ernie45": ernie45,
    "olmo3": olmo3,
    "functiongemma": functiongemma,
    "gemma4": gemma4,
    "gigachat3": gigachat3,
    "gigachat3_token": gigachat3_token,
    "apertus": apertus,
    "lfm2": lfm2,
    "dots": dots,
    "hy_v3": hy_v3,
    "hy_v4": hy_v4,
    "kimi_k3": kimi_k3,
    "minicpm5": minicpm5,
    "cohere_command": cohere,
    "poolside_v1": poolside_v1,
    "step3p5": step3p5,
    "tool_call_block": tool_call_block,
}
