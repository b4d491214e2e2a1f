"""`vllm-bot doctor` against the fake vLLM server over real HTTP: every outcome gives its documented
verdict, suggested flags and exit code."""

import json
import socket

import pytest
from doctor_model import ideal_model

from vllm_bot.app import main
from vllm_bot.doctor.probes import RAISED_MAX_TOKENS
from vllm_bot.model.capabilities import CapabilityCache, Remembered
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply

GAUGES = {"vllm:num_requests_running": 1, "vllm:num_requests_waiting": 0, "vllm:kv_cache_usage_perc": 0.12}
PARSER_FLAGS = ["--enable-auto-tool-choice", "--tool-call-parser"]


@pytest.fixture
def run_doctor(tmp_path, capsys, monkeypatch):
    for var in ("VLLM_BASE_URL", "VLLM_MODEL", "VLLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "config.json"
    config.write_text("{}")

    def run(server, *extra, base_url=None):
        argv = ["doctor", "--config", str(config), "--base-url", base_url or server.base_url]
        code = main([*argv, "--output-format", "json", *extra])
        report = json.loads(capsys.readouterr().out)
        assert report["exit_code"] == code
        for check in report["checks"]:  # every failure comes with a fix
            assert check["status"] in ("pass", "warn", "fail", "skip")
            assert check["status"] != "fail" or check["fix"], check
        if server is not None:
            assert server.problems == []
            for body in server.auto_replied:  # explicit user action, but minimal
                assert body["temperature"] == 0 and body["max_tokens"] <= RAISED_MAX_TOKENS
        return report, code

    return run


def by_id(report):
    return {c["id"]: c for c in report["checks"]}


def statuses(report):
    return {c["id"]: c["status"] for c in report["checks"]}


def test_native_server_passes_everything(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), metrics=GAUGES, prompt_tokens_details=True) as server:
        report, code = run_doctor(server)
        assert len(server.auto_replied) == 5  # tool call x2, parallel, long arguments, reasoning
        assert server.rejected == []
    assert code == 0 and report["mode"] == "native"
    assert set(statuses(report).values()) == {"pass", "skip"}
    assert statuses(report)["text_protocol"] == "skip"
    assert report["suggested_flags"] == [] and report["suggested_command"] == ""
    assert report["server"] == {
        "version": "0.33.0",
        "model": server.model,
        "root": server.model,
        "max_model_len": 32768,
    }
    assert report["family"] == "Qwen3-Coder" and "shipped:qwen3-coder" in report["profile"]
    assert "1 running, 0 waiting, KV cache 12% used" in by_id(report)["metrics"]["detail"]
    assert "prefix-cache hits are reported" in by_id(report)["usage"]["detail"]


def test_no_flags_400_falls_back_to_text_and_suggests_the_family_parser(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), mode="noparser") as server:
        report, code = run_doctor(server)
        assert len(server.rejected) == 2  # both tool-call requests got vLLM's 400
        remembered = CapabilityCache().get(server.base_url, server.model)
    checks = by_id(report)
    assert code == 0 and report["mode"] == "text"
    for check_id in ("tool_call", "tool_call_stream"):
        assert checks[check_id]["status"] == "fail" and checks[check_id]["data"]["kind"] == "refused"
        assert '"auto" tool choice requires' in checks[check_id]["detail"]
        assert "--enable-auto-tool-choice --tool-call-parser qwen3_coder" in checks[check_id]["fix"]
    assert checks["parallel_calls"]["status"] == checks["long_arguments"]["status"] == "skip"
    assert checks["text_protocol"]["status"] == "pass"
    assert report["suggested_flags"] == [*PARSER_FLAGS, "qwen3_coder"]
    assert report["suggested_command"].startswith(f"vllm serve {server.model} --enable-auto-tool-choice")
    assert remembered is not None and remembered.reason == "fallback"
    assert "text mode" in report["remembered"]


def test_no_flags_and_unknown_family_names_the_parsers_to_choose_from(run_doctor):
    """Issue 35, item 7: no literal `--tool-call-parser PARSER` in the command to copy."""
    with FakeVLLM(auto_reply=ideal_model(), mode="noparser", model="acme/house-model-7b") as server:
        report, code = run_doctor(server)
    assert code == 0 and report["family"] is None
    assert (
        "PARSER" not in report["suggested_command"]
        and "--tool-call-parser" not in report["suggested_command"]
    )
    assert "PARSER" not in json.dumps(report["suggested_flags"])
    assert "the --tool-call-parser of the model's family" in by_id(report)["tool_call"]["fix"]
    [note] = [n for n in report["notes"] if "parser table" in n]
    for choice in ("hermes (Qwen3", "qwen3_coder (Qwen3-Coder", "llama3_json (Llama 3.x)", "mistral ("):
        assert choice in note
    assert 'docs/doctor.md, "The parser table"' in note


def test_leaked_hermes_is_recovered_and_named(run_doctor):
    with FakeVLLM(
        auto_reply=ideal_model(), mode="leak", leak_format="hermes", model="Qwen/Qwen2.5-Coder-32B-Instruct"
    ) as server:
        report, code = run_doctor(server)
        assert CapabilityCache().get(server.base_url, server.model).formats == ["hermes"]
    check = by_id(report)["tool_call_stream"]
    assert check["status"] == "fail" and check["data"] == {
        "kind": "leaked",
        "formats": ["hermes"],
        "recovered": True,
    }
    assert "in hermes format" in check["detail"] and "the agent recovers them" in check["detail"]
    assert report["suggested_flags"] == [*PARSER_FLAGS, "hermes"]
    assert code == 0 and report["mode"] == "text"


def test_qwen3_coder_writing_xml_gets_qwen3_coder(run_doctor):
    """The issue's example: a Qwen3-Coder model answering in XML while the server's parser does not read it."""
    with FakeVLLM(auto_reply=ideal_model(), mode="leak", leak_format="qwen3_xml") as server:
        report, code = run_doctor(server)
    check = by_id(report)["tool_call"]
    assert check["data"]["kind"] == "leaked" and check["data"]["formats"] == ["qwen3_xml"]
    assert "--tool-call-parser qwen3_coder" in check["fix"]
    assert report["suggested_flags"] == [*PARSER_FLAGS, "qwen3_coder"]
    assert code == 0  # the text protocol still works


def test_hermes_family_model_writing_xml_is_told_apart(run_doctor):
    with FakeVLLM(
        auto_reply=ideal_model(), mode="leak", leak_format="qwen3_xml", model="Qwen/Qwen3-32B"
    ) as server:
        report, _ = run_doctor(server)
    detail = by_id(report)["tool_call"]["detail"]
    assert "the table expects hermes for Qwen3, but the model writes qwen3_xml" in detail
    assert report["suggested_flags"] == [*PARSER_FLAGS, "qwen3_coder"]


def test_leaked_mistral_is_named(run_doctor):
    with FakeVLLM(
        auto_reply=ideal_model(), mode="leak", leak_format="mistral", model="mistralai/Devstral-Small-2505"
    ) as server:
        report, code = run_doctor(server)
    check = by_id(report)["tool_call_stream"]
    assert check["data"]["kind"] == "leaked" and check["data"]["formats"] == ["mistral"]
    assert report["suggested_flags"] == [*PARSER_FLAGS, "mistral"]
    assert "--tokenizer-mode mistral" in " ".join(report["notes"])
    assert code == 0


@pytest.mark.parametrize(
    "leak_format, model",
    [("qwen3_xml", "Qwen/Qwen3-Coder-30B-A3B-Instruct"), ("mistral", "mistralai/Devstral-Small-2505")],
)
def test_leaked_xml_and_mistral_calls_are_recovered(run_doctor, leak_format, model):
    with FakeVLLM(auto_reply=ideal_model(), mode="leak", leak_format=leak_format, model=model) as server:
        report, _ = run_doctor(server)
    assert by_id(report)["tool_call_stream"]["data"]["recovered"] is True
    assert "the agent recovers them" in by_id(report)["tool_call_stream"]["detail"]


def test_broken_streamed_arguments(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(quirks={"drop_fragment"})) as server:
        report, code = run_doctor(server)
        assert len(server.auto_replied) == 6  # the long call once more, not streamed, to blame the stream
        assert server.auto_replied[-2]["stream"] is False
    check = by_id(report)["long_arguments"]
    assert check["status"] == "fail" and "streaming corrupted" in check["detail"]
    assert check["data"]["streamed"] in ("invalid", "changed") and check["data"]["non_streamed"] == "intact"
    assert "upgrade vLLM" in check["fix"]
    assert code == 0 and report["mode"] == "native"  # the agent still works; the model repeats the call


def test_duplicated_argument_tail_is_repaired_with_a_warning(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(quirks={"dup_tail"})) as server:
        report, code = run_doctor(server)
    check = by_id(report)["long_arguments"]
    assert (
        check["status"] == "warn"
        and "repaired" in check["detail"]
        and check["data"]["streamed"] == "repaired"
    )
    assert code == 0


def test_model_that_copies_text_badly_is_not_blamed_on_the_server(run_doctor):
    def sloppy(body):
        reply = ideal_model()(body)
        for call in reply.calls:
            if call.name == "write":
                call.arguments = {
                    **call.arguments,
                    "content": call.arguments["content"].replace("\t", "    "),
                }
        return reply

    with FakeVLLM(auto_reply=sloppy) as server:
        report, _ = run_doctor(server)
    check = by_id(report)["long_arguments"]
    assert check["status"] == "warn" and "did not copy" in check["detail"] and "line 10" in check["detail"]
    assert check["data"] == {"streamed": "changed", "non_streamed": "changed"}


def test_no_tokenize(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), tokenize=False) as server:
        report, code = run_doctor(server)
    assert statuses(report)["tokenize"] == "warn" and "404" in by_id(report)["tokenize"]["detail"]
    assert code == 0


@pytest.mark.parametrize(
    "model, parser",
    [("Qwen/Qwen3-8B", "qwen3"), ("Qwen/QwQ-32B", "deepseek_r1"), ("acme/thinker", "qwen3")],
)
def test_think_in_content_suggests_a_reasoning_parser(run_doctor, model, parser):
    with FakeVLLM(auto_reply=ideal_model(), think_in_content=True, model=model) as server:
        report, code = run_doctor(server)
    check = by_id(report)["reasoning"]
    assert check["status"] == "warn" and "inside the reply text" in check["detail"]
    assert check["fix"] == f"restart vLLM with --reasoning-parser {parser}"
    assert report["suggested_flags"] == ["--reasoning-parser", parser]
    assert code == 0


@pytest.mark.parametrize(
    "field, shown", [("reasoning", "`reasoning`"), ("both", "`reasoning` and `reasoning_content`")]
)
def test_reasoning_field_is_separate(run_doctor, field, shown):
    with FakeVLLM(auto_reply=ideal_model(), reasoning_field=field) as server:
        report, _ = run_doctor(server)
    check = by_id(report)["reasoning"]
    assert check["status"] == "pass" and check["detail"].endswith(shown)


def test_usage_not_honoured(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), include_usage=False) as server:
        report, code = run_doctor(server)
    check = by_id(report)["usage"]
    assert check["status"] == "warn" and "--enable-force-include-usage" in check["fix"]
    assert code == 0


def test_model_without_parallel_calls_is_a_warning(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(calls_per_reply=1)) as server:
        report, code = run_doctor(server)
    check = by_id(report)["parallel_calls"]
    assert check["status"] == "warn" and check["data"] == {"calls": 1}
    assert code == 0


def test_model_that_never_calls_cannot_work(run_doctor):
    with FakeVLLM(auto_reply=lambda body: Reply(content="I am sorry, I cannot use tools.")) as server:
        report, code = run_doctor(server)
    checks = by_id(report)
    assert checks["tool_call"]["data"]["kind"] == "no_call" and checks["tool_call"]["status"] == "fail"
    assert checks["text_protocol"]["status"] == "fail"
    assert code == 1 and report["mode"] is None
    assert report["verdict"].startswith("the agent cannot work with this server")


def test_unreachable_server(run_doctor):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    report, code = run_doctor(None, base_url=url)
    assert code == 1 and [c["id"] for c in report["checks"]] == [
        "reachable",
        "sandbox",
    ]  # the machine's own row stays
    assert report["checks"][0]["status"] == "fail" and "vllm serve" in report["checks"][0]["fix"]


def test_unknown_model_and_wrong_key(run_doctor):
    with FakeVLLM(auto_reply=ideal_model()) as server:
        report, code = run_doctor(server, "--model", "nope")
        assert server.auto_replied == []
    assert (
        code == 1
        and by_id(report)["models"]["status"] == "fail"
        and server.model in by_id(report)["models"]["detail"]
    )
    with FakeVLLM(auto_reply=ideal_model(), api_key="right") as server:
        report, code = run_doctor(server, "--api-key", "wrong")
    assert code == 1 and "API key" in by_id(report)["models"]["detail"]


def test_dead_engine_and_old_version(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), health_status=503, version="0.8.5") as server:
        report, _ = run_doctor(server)
    assert statuses(report)["health"] == "fail" and "restart" in by_id(report)["health"]["fix"]
    assert statuses(report)["version"] == "warn" and "0.8.5" in by_id(report)["version"]["detail"]


def test_native_success_forgets_a_remembered_fallback(run_doctor):
    with FakeVLLM(auto_reply=ideal_model()) as server:
        CapabilityCache().remember(server.base_url, server.model, Remembered("text", "fallback"))
        report, _ = run_doctor(server)
        assert CapabilityCache().get(server.base_url, server.model) is None
    assert report["remembered"].startswith("forgot")


def test_profile_settings_reach_the_probes_but_temperature_is_zero(run_doctor, tmp_path):
    with FakeVLLM(auto_reply=ideal_model()) as server:
        run_doctor(server)
        body = server.auto_replied[0]
    assert body["top_p"] == 0.8 and body["top_k"] == 20 and body["temperature"] == 0


def test_unknown_context_window_is_a_warning(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), max_model_len=None) as server:
        report, code = run_doctor(server)
    check = by_id(report)["context"]
    assert (
        check["status"] == "warn" and "assumes" in check["detail"] and "vllm.context_window" in check["fix"]
    )
    assert code == 0


def test_small_context_window_is_a_warning(run_doctor):
    with FakeVLLM(auto_reply=ideal_model(), max_model_len=8192) as server:
        report, _ = run_doctor(server)
    check = by_id(report)["context"]
    assert check["status"] == "warn" and check["detail"].startswith("8192 tokens (max_model_len)")
    assert "--max-model-len" in check["fix"]


def thinking_off_profile(tmp_path):
    profile = {"match": ["*qwen3*"], "chat_template_kwargs": {"enable_thinking": False}}
    (tmp_path / "config.json").write_text(json.dumps({"profiles": {"no-thinking": profile}}))


def test_thinking_off_profile_on_a_server_with_a_reasoning_parser_asks_for_no_restart(run_doctor, tmp_path):
    """The model still reasons in its text; with thinking off vLLM leaves it there. With thinking on
    the server splits it off, so restarting it with --reasoning-parser would change nothing."""
    thinking_off_profile(tmp_path)
    with FakeVLLM(auto_reply=ideal_model(), model="Qwen/Qwen3-8B") as server:
        report, code = run_doctor(server)
        kwargs = [b.get("chat_template_kwargs") for b in server.auto_replied if "tools" not in b]
    check = by_id(report)["reasoning"]
    assert check["status"] == "warn" and "its --reasoning-parser works" in check["detail"]
    assert "--reasoning-parser" not in check["fix"] and report["suggested_flags"] == []
    assert kwargs[-2:] == [{"enable_thinking": False}, None]  # the profile's probe, then one with thinking on
    assert code == 0


def test_thinking_off_profile_on_a_server_without_a_reasoning_parser_is_told_to_add_one(run_doctor, tmp_path):
    thinking_off_profile(tmp_path)
    with FakeVLLM(auto_reply=ideal_model(), model="Qwen/Qwen3-8B", think_in_content=True) as server:
        report, _ = run_doctor(server)
    check = by_id(report)["reasoning"]
    assert "the server has no reasoning parser" in check["detail"]
    assert check["fix"] == "restart vLLM with --reasoning-parser qwen3"
    assert report["suggested_flags"] == ["--reasoning-parser", "qwen3"]


def chatty_model(reasoning):
    """Tool probes get a reply that runs past max_tokens, in reasoning or in plain text."""
    ideal = ideal_model()

    def respond(body):
        if body.get("tools"):
            if reasoning:  # past the probes' budget, even once it is raised
                return Reply(reasoning="I wonder which tool fits best. " * 1000)
            return Reply(content="Reading files is a fine idea in general. " * 200)
        return ideal(body)

    return respond


@pytest.mark.parametrize("reasoning", [False, True])
def test_a_tool_call_cut_by_max_tokens_is_inconclusive_and_the_fix_fits_what_used_the_tokens(
    run_doctor, reasoning
):
    with FakeVLLM(auto_reply=chatty_model(reasoning)) as server:
        report, _ = run_doctor(server)
    check = by_id(report)["tool_call"]
    assert (
        check["status"] == "warn"
        and check["data"]["kind"] == "truncated"
        and "inconclusive" in check["detail"]
    )
    if reasoning:
        assert "hit max_tokens=4096 (raised once from 512) in reasoning before any call" in check["detail"]
        assert "a budget above 4,096 tokens would do" in check["fix"] and "thinking off" in check["fix"]
    else:
        assert "hit max_tokens=512 in text before any call" in check["detail"]
        assert "thinking off" not in check["fix"]
