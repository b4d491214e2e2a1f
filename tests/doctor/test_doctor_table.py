"""The parser table (resources/parsers.yaml) as data: families, leaked formats, suggestions."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bot.calls import ToolCall
from vllm_bot.doctor.knowledge import knowledge
from vllm_bot.doctor.probes import LONG_TEXT, first_difference, same_calls
from vllm_bot.parsing import extract_tool_calls
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

# Registered names in vLLM 0.6 - 0.33 (shared/reference/vllm-protocol.md, sections 4.2 and 7).
VLLM_TOOL_PARSERS = set(
    [
        "hermes",
        "mistral",
        "granite-20b-fc",
        "granite",
        "internlm",
        "jamba",
        "llama3_json",
        "pythonic",
        "llama4_json",
        "phi4_mini_json",
        "deepseek_v3",
        "llama4_pythonic",
        "minimax",
        "xlam",
        "glm45",
        "hunyuan_a13b",
        "kimi_k2",
        "qwen3_coder",
        "step3",
        "deepseek_v31",
        "openai",
        "seed_oss",
        "longcat",
        "qwen3_xml",
        "ernie45",
        "minimax_m2",
        "olmo3",
        "deepseek_v32",
        "gigachat3",
        "functiongemma",
        "glm47",
        "step3p5",
        "granite4",
        "gemma4",
        "deepseek_v4",
        "hy_v3",
        "mimo",
        "cohere_command3",
        "cohere_command4",
        "lfm2",
        "poolside_v1",
        "apertus",
        "minicpm5",
        "minimax_m3",
        "inkling",
        "kimi_k3",
        "dots",
        "ling3",
        "muse_glimmer",
        "hy_v4",
        "deepseek_v41",
        "k2_horizon",
        "hf",
        "plamo3",
        "qwen3_json",
        "beam",
        "muse",
        "musespark1x",
        "step5",
    ]
)
VLLM_REASONING_PARSERS = set(
    [
        "deepseek_r1",
        "granite",
        "glm45",
        "hunyuan_a13b",
        "mistral",
        "openai_gptoss",
        "qwen3",
        "step3",
        "deepseek_v3",
        "ernie45",
        "kimi_k2",
        "minimax_m2",
        "minimax_m2_append_think",
        "olmo3",
        "seed_oss",
    ]
)

FAMILIES = [
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", None, "Qwen3-Coder", "qwen3_coder", None),
    ("coder", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "Qwen3-Coder", "qwen3_coder", None),
    ("Qwen/Qwen3.5-35B-A3B", None, "Qwen3.5+", "qwen3_coder", "qwen3"),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", None, "Qwen3 Thinking-2507", "hermes", "deepseek_r1"),
    ("Qwen/QwQ-32B", None, "QwQ", "hermes", "deepseek_r1"),
    ("Qwen/Qwen3-8B", None, "Qwen3", "hermes", "qwen3"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", None, "Qwen2.5", "hermes", None),
    ("NousResearch/Hermes-3-Llama-3.1-8B", None, "Hermes", "hermes", None),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", None, "Llama 4", "llama4_pythonic", None),
    ("meta-llama/Llama-3.3-70B-Instruct", None, "Llama 3.x", "llama3_json", None),
    ("mistralai/Magistral-Small-2506", None, "Magistral", "mistral", "mistral"),
    ("mistralai/Devstral-Small-2507", None, "Mistral / Devstral", "mistral", None),
    ("openai/gpt-oss-120b", None, "gpt-oss", "openai", "openai_gptoss"),
    ("zai-org/GLM-4.7", None, "GLM-4.7 / GLM-5", "glm47", "glm45"),
    ("zai-org/GLM-4.5-Air", None, "GLM-4.5 / GLM-4.6", "glm45", "glm45"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", None, "DeepSeek-V3.2", "deepseek_v32", "deepseek_v3"),
    ("deepseek-ai/DeepSeek-V3.1", None, "DeepSeek-V3.1", "deepseek_v31", "deepseek_v3"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", None, "DeepSeek-R1 distills", "hermes", "deepseek_r1"),
    ("deepseek-ai/DeepSeek-R1-0528", None, "DeepSeek-R1", "deepseek_v3", "deepseek_r1"),
    ("deepseek-ai/DeepSeek-V3-0324", None, "DeepSeek-V3", "deepseek_v3", None),
    ("moonshotai/Kimi-K2-Instruct", None, "Kimi K2", "kimi_k2", "kimi_k2"),
    ("MiniMaxAI/MiniMax-M2", None, "MiniMax-M2", "minimax_m2", "minimax_m2_append_think"),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct", None, "Seed-OSS", "seed_oss", "seed_oss"),
    ("ibm-granite/granite-4.0-h-small", None, "Granite 4", "granite4", None),
    ("ibm-granite/granite-3.3-8b-instruct", None, "Granite 3", "granite", "granite"),
    ("internlm/internlm2_5-7b-chat", None, "InternLM", "internlm", None),
    ("Salesforce/Llama-xLAM-2-8b-fc-r", None, "xLAM", "xlam", None),
    ("google/gemma-3-27b-it", None, None, None, None),
]

LEAKS = [
    ('<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n</tool_call>', "hermes"),
    (
        "Sure.\n<tool_call>\n<function=read>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>",
        "qwen3_xml",
    ),
    ("<function=exec>\n<parameter=command>\nls\n</parameter>\n</function>", "qwen3_xml"),
    ("<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n</tool_call>", "glm"),
    ('[TOOL_CALLS][{"name": "read", "arguments": {"path": "a.py"}}]', "mistral"),
    ('[TOOL_CALLS]read[ARGS]{"path": "a.py"}', "mistral"),
    ('<|python_tag|>{"name": "read", "parameters": {"path": "a.py"}}', "llama3_json"),
    ('{"name": "read", "parameters": {"path": "a.py"}}', "llama3_json"),
    ('[read(path="a.py"), exec(command="ls")]', "pythonic"),
    (
        '<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path":"a.py"}<|call|>',
        "harmony",
    ),
    ('analysisNeed to read.assistantcommentary to=functions.read json{"path":"a.py"}', "harmony"),
    (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"path":"a.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "deepseek",
    ),
    (
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path":"a.py"}<|tool_call_end|><|tool_calls_section_end|>',
        "kimi",
    ),
    (
        '<minimax:tool_call>\n<invoke name="read">\n<parameter name="path">a.py</parameter>\n</invoke>\n</minimax:tool_call>',
        "minimax",
    ),
    ('TOOL_CALL: {"name": "read", "args": {"path": "a.py"}}', "tool_call_block"),
    (
        '<dots_function_call>\n<invoke name="read">\n<parameter name="path">a.py</parameter>\n</invoke>\n</dots_function_call>',
        "dots",
    ),
    (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read">\n<｜DSML｜parameter name="path" string="true">a.py</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
        "deepseek_dsml",
    ),
    (
        "<seed:tool_call>\n<function=read>\n<parameter=path>a.py</parameter>\n</function>\n</seed:tool_call>",
        "seed_oss",
    ),
    ('<longcat_tool_call>{"name": "read", "arguments": {"path": "a.py"}}</longcat_tool_call>', "longcat"),
    ('<|tool_call|>[{"name": "read", "arguments": {"path": "a.py"}}]', "granite"),
    ('<tool_call>[{"name": "read", "arguments": {"path": "a.py"}}]', "granite"),
    ('<function_call> {"name": "read", "arguments": {"path": "a.py"}}', "granite_20b"),
    ('<tool_calls>[{"name": "read", "arguments": {"path": "a.py"}}]</tool_calls>', "jamba"),
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="read"><steptml:parameter name="path">a.py</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        "step3",
    ),
    (
        '<|action_start|><|plugin|>\n{"name": "read", "parameters": {"path": "a.py"}}<|action_end|>',
        "internlm",
    ),
    ('<|function_call|>{"name": "read", "arguments": {"path": "a.py"}}', "gigachat"),
    ('functools[{"name": "read", "arguments": {"path": "a.py"}}]', "phi4"),
    ('<|tools_prefix|>[{"read": {"path": "a.py"}}]<|tools_suffix|>', "apertus"),
    ('<|tool_call_start|>[read(path="a.py")]<|tool_call_end|>', "lfm2"),
    ("<start_function_call>call:read{path:<escape>a.py<escape>}<end_function_call>", "functiongemma"),
    ('<|tool_call>call:read{path:<|"|>a.py<|"|>}<tool_call|>', "gemma4"),
    ('<function_calls>read(path="a.py")\nexec(command="ls")</function_calls>', "olmo3"),
    ('[{"name": "read", "arguments": {"path": "a.py"}}]', "json_array"),
    ('```json\n{"name": "read", "arguments": {"path": "a.py"}}\n```', "json_fence"),
    (
        '<function_calls>\n<invoke name="read">\n<parameter name="path">a.py</parameter>\n</invoke>\n</function_calls>',
        "function_calls",
    ),
]

NOT_LEAKS = [
    "I read the file; the function `read(path)` returns its lines.",
    'The JSON looks like {"name": "x"} with no arguments.',
    "Use [brackets] and call foo later.",
    "",
]


@pytest.mark.parametrize("served, root, family, tool_parser, reasoning_parser", FAMILIES)
def test_family_table(served, root, family, tool_parser, reasoning_parser):
    found = knowledge().family_for([served, root])
    assert (found.name if found else None) == family
    if found:
        assert (found.tool_call_parser, found.reasoning_parser) == (tool_parser, reasoning_parser)


def test_every_family_is_tested_and_names_real_vllm_parsers():
    k = knowledge()
    assert {f.name for f in k.families} <= {row[2] for row in FAMILIES}
    for family in k.families:
        assert family.tool_call_parser in VLLM_TOOL_PARSERS, family
        assert family.reasoning_parser in VLLM_REASONING_PARSERS | {None}, family
    for fmt in k.formats:
        assert set(fmt.parsers) <= VLLM_TOOL_PARSERS, fmt.name
    for fmt in k.reasoning_formats:
        assert fmt.parser in VLLM_REASONING_PARSERS, fmt.name


@pytest.mark.parametrize("text, fmt", LEAKS)
def test_leaked_format_markers(text, fmt):
    assert knowledge().leaked_formats(text, [])[0] == fmt


@pytest.mark.parametrize("text, fmt", LEAKS)
def test_reply_parser_format_names_map_to_the_table(text, fmt):
    """The names vllm_bot.parsing reports are table names or aliases, so suggestions follow them."""
    extraction = extract_tool_calls(text, TOOL_DEFINITIONS)
    assert extraction.calls, "the reply parser should recover this call"
    for name in extraction.formats:
        assert knowledge().leak_format(name) is not None, f"parser format {name!r} is not in parsers.yaml"
    assert knowledge().leaked_formats(text, extraction.formats)[0] == fmt


def test_every_format_has_a_leak_example():
    assert {f.name for f in knowledge().formats} == {fmt for _, fmt in LEAKS}


@pytest.mark.parametrize("text", NOT_LEAKS)
def test_prose_is_not_a_leak(text):
    assert knowledge().leaked_formats(text, []) == []


def test_reported_format_names_are_normalized_and_deduplicated():
    k = knowledge()
    text = "<tool_call>\n<function=read>\n</function>\n</tool_call>"
    assert k.leaked_formats(text, ["qwen3_coder", "native"]) == ["qwen3_xml"]
    assert k.leaked_formats("", ["some_new_format"]) == ["some_new_format"]


@pytest.mark.parametrize(
    "fmt, served, parser",
    [
        ("qwen3_xml", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),  # the family's own
        ("qwen3_xml", "Qwen/Qwen3-8B", "qwen3_coder"),  # what the model writes beats the family
        ("hermes", "Qwen/Qwen3-8B", "hermes"),
        ("hermes", "acme/unknown", "hermes"),
        ("glm", "zai-org/GLM-4.7", "glm47"),  # the family's parser is among the format's readers
        ("glm", "acme/unknown", "glm45"),
        ("tool_call_block", "Qwen/Qwen3-8B", "hermes"),  # no server parser reads it: the family's
        (None, "Qwen/Qwen3-8B", "hermes"),
        (None, "acme/unknown", None),
        ("some_new_format", "meta-llama/Llama-3.1-8B-Instruct", "llama3_json"),
    ],
)
def test_tool_parser_suggestion(fmt, served, parser):
    k = knowledge()
    assert k.tool_parser_for(fmt, k.family_for([served])) == parser


@pytest.mark.parametrize(
    "text, served, parser",
    [
        ("<think>hm</think>42", "acme/unknown", "qwen3"),
        ("hm</think>42", "acme/unknown", "deepseek_r1"),
        ("<think>hm</think>42", "Qwen/QwQ-32B", "deepseek_r1"),  # the family knows better
        ("<seed:think>hm</seed:think>42", "acme/unknown", "seed_oss"),
        ("[THINK]hm[/THINK]42", "acme/unknown", "mistral"),
        ("<|channel|>analysis<|message|>hm<|end|>", "acme/unknown", "openai_gptoss"),
    ],
)
def test_reasoning_parser_suggestion(text, served, parser):
    k = knowledge()
    assert k.reasoning_leak(text) is not None
    assert k.reasoning_parser_for(text, k.family_for([served])) == parser


def test_plain_answer_is_no_reasoning_leak():
    assert knowledge().reasoning_leak("The answer is 42.") is None


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_format_detection_never_raises(text):
    k = knowledge()
    assert isinstance(k.leaked_formats(text, []), list)
    k.reasoning_leak(text)


def call(name, **args):
    return ToolCall("id", name, args)


def test_same_calls_rules():
    expected = [("read", {"path": "README.md"}), ("exec", {"command": "ls"})]
    assert same_calls([call("exec", command="ls"), call("read", path="./README.md", limit=5)], expected)
    assert not same_calls([call("read", path="README.md")], expected)
    assert not same_calls([call("read", path="README.md"), call("read", path="README.md")], expected)
    assert same_calls(
        [call("write", path="p", content=LONG_TEXT.rstrip("\n"))],
        [("write", {"path": "p", "content": LONG_TEXT})],
    )
    assert not same_calls(
        [call("write", path="p", content=LONG_TEXT.replace("\\", ""))],
        [("write", {"path": "p", "content": LONG_TEXT})],
    )


def test_first_difference_names_the_line():
    assert first_difference("a\nb\nc", "a\nB\nc") == "line 2 is 'b', expected 'B'"
    assert first_difference("a", "a\nb") == "1 characters, expected 3"
