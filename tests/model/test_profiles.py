"""Model profiles: the shipped table, matching rules, layering, and their effect on real requests."""

import json

import pytest

from vllm_bot.calls import text_result
from vllm_bot.config import ConfigError, ProfileConfig, VllmConfig, load_config
from vllm_bot.conversation import Conversation
from vllm_bot.events import ignore
from vllm_bot.model.client import ModelClient
from vllm_bot.model.profiles import first_match, pattern_matches, resolve, shipped_profiles
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

SHIPPED_TABLE = [
    # (served name, root) -> shipped profile
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", None, "qwen3-coder"),
    ("coder", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder"),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", None, "qwen3-thinking"),
    ("Qwen/QwQ-32B", None, "qwen3-thinking"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", None, "qwen3-instruct"),
    ("Qwen/Qwen3-8B", None, "qwen3"),
    ("my-alias", "/models/Qwen3-32B-AWQ", "qwen3"),
    ("Qwen/Qwen3.5-35B-A3B", None, "qwen3"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", None, "qwen2.5"),
    ("Qwen/Qwen2.5-7B-Instruct", None, "qwen2.5"),
    ("meta-llama/Llama-3.1-8B-Instruct", None, "llama-3"),
    ("meta-llama/Meta-Llama-3-70B-Instruct", None, "llama-3"),
    ("llama", "/srv/models/llama-3.3-70b-instruct-awq", "llama-3"),
    ("mistralai/Devstral-Small-2505", None, "devstral"),
    ("mistralai/Magistral-Small-2506", None, "magistral"),
    ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", None, "mistral"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", None, "mistral"),
    ("openai/gpt-oss-20b", None, "gpt-oss"),
    ("gpt", "openai/gpt-oss-120b", "gpt-oss"),
    ("zai-org/GLM-4.5-Air", None, "glm"),
    ("zai-org/GLM-4.7", None, "glm"),
    ("deepseek-ai/DeepSeek-R1-0528", None, "deepseek-r1"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", None, "deepseek-r1"),
    ("deepseek-ai/DeepSeek-V3.1", None, "deepseek-v3"),
    ("moonshotai/Kimi-K2-Instruct", None, "kimi-k2"),
    ("google/gemma-3-27b-it", None, None),
    ("my-finetune", "/data/checkpoints/step-1000", None),
]


@pytest.mark.parametrize("served, root, expected", SHIPPED_TABLE)
def test_shipped_profile_table(served, root, expected):
    found = first_match(shipped_profiles(), [served, root])
    assert (found[0] if found else None) == expected


def test_every_shipped_profile_is_reachable_and_sane():
    shipped = shipped_profiles()
    covered = {row[2] for row in SHIPPED_TABLE}
    assert set(shipped) <= covered, f"untested shipped profiles: {set(shipped) - covered}"
    for name, p in shipped.items():
        assert p.match, name
        assert p.tool_call_mode in ("native", "text")
        assert p.temperature is None or 0 <= p.temperature <= 2


@pytest.mark.parametrize(
    "pattern, name, hit",
    [
        ("*qwen3-coder*", "Qwen/Qwen3-Coder-30B", True),
        ("qwen3*", "Qwen/Qwen3-8B", True),  # the part after the last "/" is tried too
        ("qwen3*", "Qwen/Qwen2.5-7B", False),
        ("Qwen/*", "qwen/anything", True),  # case-insensitive
        ("re:^my-(7|13)b$", "my-13b", True),
        ("re:^my-(7|13)b$", "my-13b-instruct", False),
        ("re:coder", "Qwen/Qwen3-CODER", True),
    ],
)
def test_pattern_rules(pattern, name, hit):
    assert pattern_matches(pattern, name) is hit


def test_user_profile_overrides_shipped_field_by_field():
    user = {"mine": ProfileConfig(match=["*qwen3-coder*"], temperature=0.2, extra_body={"top_k": 40})}
    p = resolve(["Qwen/Qwen3-Coder-30B-A3B-Instruct"], user)
    assert p.names == ["user:mine", "shipped:qwen3-coder"]
    assert p.temperature == 0.2 and p.origin["temperature"] == "user:mine"
    assert p.top_p == 0.8 and p.origin["top_p"] == "shipped:qwen3-coder"  # inherited
    assert p.extra_body == {"top_k": 40, "repetition_penalty": 1.05}  # dicts merge key by key


def test_user_profile_named_like_shipped_inherits_its_patterns():
    p = resolve(["openai/gpt-oss-20b"], {"gpt-oss": ProfileConfig(tool_call_mode="text")})
    assert p.tool_call_mode == "text" and p.origin["tool_call_mode"] == "user:gpt-oss"
    assert p.keep_reasoning is True  # still from the shipped entry


def test_first_user_match_wins_and_unmatched_user_profiles_are_ignored():
    user = {
        "other": ProfileConfig(match=["*llama*"], temperature=0.9),
        "first": ProfileConfig(match=["re:finetune"], temperature=0.1, stop=["</answer>"]),
        "second": ProfileConfig(match=["my-*"], temperature=0.5),
        "nameless": ProfileConfig(temperature=1.5),  # no patterns, no shipped namesake: never matches
    }
    p = resolve(["my-finetune"], user)
    assert p.names == ["user:first"] and p.temperature == 0.1 and p.stop == ["</answer>"]


def test_no_match_is_defaults():
    p = resolve(["something/unknown"], {})
    assert p.names == [] and p.temperature is None and p.request_params() == {}


def test_bad_regex_is_a_config_error_naming_the_profile():
    with pytest.raises(ConfigError, match="profile 'broken'"):
        resolve(["x"], {"broken": ProfileConfig(match=["re:(unclosed"])})


def test_profiles_in_config_json_are_checked_strictly(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"profiles": {"mine": {"match": ["my-*"], "temprature": 0.1}}}))
    with pytest.raises(ConfigError, match=r"profiles\.mine\.temprature"):
        load_config(path, env={})
    path.write_text(json.dumps({"profiles": {"mine": {"tool_call_mode": "json"}}}))
    with pytest.raises(ConfigError, match="tool_call_mode"):
        load_config(path, env={})
    path.write_text(
        json.dumps(
            {"profiles": {"mine": {"match": ["my-*"], "temperature": 0, "chat_template_kwargs": {"x": 1}}}}
        )
    )
    cfg = load_config(path, env={})
    assert cfg.profiles["mine"].temperature == 0.0 and cfg.profiles["mine"].chat_template_kwargs == {"x": 1}


def _ask(server, config, profile):
    client = ModelClient(config, system_prompt=lambda text_mode, defs: "SYSTEM")
    client.resolve_model()
    client.profile = profile
    conv = Conversation()
    conv.add_user("hi")
    client.complete(conv, TOOL_DEFINITIONS, ignore)
    return client, server.requests[-1]


def test_client_sends_profile_settings_over_http():
    user = {
        "mine": ProfileConfig(
            match=["*qwen3-coder*"],
            stop=["<|im_end|>"],
            chat_template_kwargs={"enable_thinking": False},
            context_window=16384,
        )
    }
    with FakeVLLM([Reply(content="hello")]) as server:
        profile = resolve([server.model], user)
        client, body = _ask(server, VllmConfig(base_url=server.base_url, timeout=10), profile)
    assert body["temperature"] == 0.7 and body["top_p"] == 0.8
    assert body["top_k"] == 20 and body["repetition_penalty"] == 1.05  # extra_body goes top-level
    assert body["stop"] == ["<|im_end|>"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert client.context_window == 16384  # the profile beats max_model_len


def test_explicit_config_beats_the_profile():
    with FakeVLLM([Reply(content="hello")], max_model_len=8192) as server:
        profile = resolve([server.model], {})
        config = VllmConfig(base_url=server.base_url, timeout=10, temperature=0.0, context_window=4096)
        client, body = _ask(server, config, profile)
    assert body["temperature"] == 0.0
    assert client.context_window == 4096


def test_keep_reasoning_sends_the_current_tasks_reasoning_back():
    script = [
        Reply(reasoning="I should list the files.", calls=[Call("exec", {"command": "ls"})]),
        Reply(content="Two files."),
        Reply(reasoning="Now read one.", calls=[Call("read", {"path": "a.py"})]),
        Reply(content="Done."),
    ]
    with FakeVLLM(script, model="openai/gpt-oss-20b") as server:
        client = ModelClient(VllmConfig(base_url=server.base_url, timeout=10), system_prompt=lambda t, d: "S")
        client.resolve_model()
        client.profile = resolve([server.model], {})
        assert client.profile.keep_reasoning is True
        conv = Conversation()
        for task in ("list", "read"):
            conv.add_user(task)
            while True:
                turn = client.complete(conv, TOOL_DEFINITIONS, ignore)
                conv.add_turn(turn)
                if not turn.tool_calls:
                    break
                conv.add_results([text_result(c, "ok") for c in turn.tool_calls], turn.via)
        server.assert_done()
        second, fourth = server.requests[1], server.requests[3]
    calling = [m for m in second["messages"] if m.get("tool_calls")]
    assert calling[0]["reasoning"] == calling[0]["reasoning_content"] == "I should list the files."
    earlier, current = [m for m in fourth["messages"] if m.get("tool_calls")]
    assert "reasoning" not in earlier  # a finished task's reasoning is not replayed
    assert current["reasoning_content"] == "Now read one."


def test_reasoning_is_not_sent_back_without_the_profile_setting():
    script = [Reply(reasoning="think", calls=[Call("exec", {"command": "ls"})]), Reply(content="ok")]
    with FakeVLLM(script) as server:
        client = ModelClient(VllmConfig(base_url=server.base_url, timeout=10), system_prompt=lambda t, d: "S")
        client.resolve_model()
        client.profile = resolve([server.model], {})
        conv = Conversation()
        conv.add_user("go")
        turn = client.complete(conv, TOOL_DEFINITIONS, ignore)
        conv.add_turn(turn)
        conv.add_results([text_result(c, "ok") for c in turn.tool_calls], turn.via)
        client.complete(conv, TOOL_DEFINITIONS, ignore)
        assert all("reasoning" not in m for m in server.requests[1]["messages"])


def test_every_profile_setting_reaches_the_effective_profile():
    from dataclasses import fields

    from vllm_bot.model.profiles import SETTINGS, Profile

    assert "match" not in SETTINGS and "temperature" in SETTINGS
    assert set(SETTINGS) <= {f.name for f in fields(Profile)}
    layer = ProfileConfig(match=["m"], top_p=0.5, stop=["x"], extra_body={"top_k": 5})
    profile = resolve(["m"], user={"mine": layer}, shipped={})
    assert (profile.top_p, profile.stop, profile.extra_body) == (0.5, ["x"], {"top_k": 5})
    assert profile.origin == {"top_p": "user:mine", "stop": "user:mine", "extra_body": "user:mine"}
