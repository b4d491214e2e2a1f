"""Remembered tool-call mode per server+model (user state dir) and the starting-mode precedence."""

import json
import os

import pytest

from vllm_bot.config import load_config
from vllm_bot.conversation import Conversation
from vllm_bot.events import Notice
from vllm_bot.model.capabilities import CapabilityCache, ModeMemory, Remembered, configure, start_mode
from vllm_bot.model.client import ModelClient
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply
from vllm_bot.tools.definitions import TOOL_DEFINITIONS
from vllm_bot.ui import fanout


class Recorder(list):
    def __call__(self, event):
        self.append(event)

    def of(self, kind):
        return [e for e in self if isinstance(e, kind)]


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "vllm-bot"


def make_config(tmp_path, server, profiles=None, **overrides):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"profiles": profiles or {}}))
    return load_config(path, env={}, overrides={"vllm.base_url": server.base_url, **overrides})


def start_session(config):
    """What Session.start does: connect, then profile + remembered mode; the memory listens to events."""
    events = Recorder()
    client = ModelClient(config.vllm, system_prompt=lambda text_mode, defs: f"text_mode={text_mode}")
    cache = CapabilityCache()
    emit = fanout([events, ModeMemory(cache, client, events)])
    client.resolve_model()
    configure(client, config, cache, emit)
    return client, emit, events


def ask(client, emit):
    conv = Conversation()
    conv.add_user("do it")
    return client.complete(conv, TOOL_DEFINITIONS, emit)


def test_cache_round_trip_lives_in_xdg_state_home(state):
    cache = CapabilityCache()
    assert cache.get("http://h:8000/v1", "m") is None
    cache.remember("http://h:8000/v1/", "m", Remembered("text", "fallback", "refused"))
    assert cache.path == state / "servers.json" and cache.path.is_file()
    got = cache.get("http://h:8000/v1", "m")  # the trailing slash does not matter
    assert got is not None and got.reason == "fallback" and got.since
    assert cache.get("http://h:8000/v1", "other-model") is None
    assert cache.forget("http://h:8000/v1", "m") is True and cache.forget("http://h:8000/v1", "m") is False
    assert cache.get("http://h:8000/v1", "m") is None


def test_damaged_cache_file_is_treated_as_empty(state):
    state.mkdir(parents=True)
    (state / "servers.json").write_text("{not json")
    cache = CapabilityCache()
    assert cache.get("u", "m") is None
    cache.remember("u", "m", Remembered("text", "leak", formats=["hermes"]))
    assert cache.get("u", "m").formats == ["hermes"]


@pytest.mark.parametrize(
    "enabled, forced, user, shipped, memo, expected",
    [
        (False, False, "native", "native", None, (False, "config")),
        (True, True, "text", None, Remembered("text", "fallback"), (True, "flag")),
        (True, False, "native", None, Remembered("text", "fallback"), (True, "user profile")),
        (True, False, "text", None, None, (False, "user profile")),
        (True, False, None, "native", Remembered("text", "leak"), (False, "remembered")),
        (True, False, None, "text", None, (False, "shipped profile")),
        (True, False, None, None, None, (True, "default")),
    ],
)
def test_start_mode_precedence(enabled, forced, user, shipped, memo, expected):
    assert start_mode(enabled, forced, user, shipped, memo) == expected


def test_fallback_is_remembered_and_the_next_session_starts_in_text_mode(tmp_path, state):
    script = [Reply(calls=[Call("read", {"path": "a"})]), Reply(content="done")]
    with FakeVLLM(script, mode="noparser") as server:
        config = make_config(tmp_path, server)
        client, emit, _ = start_session(config)
        assert client.function_calling is True
        ask(client, emit)
        assert len(server.rejected) == 1 and client.function_calling is False
        remembered = CapabilityCache().get(server.base_url, server.model)
        assert remembered is not None and remembered.reason == "fallback"
        assert "--enable-auto-tool-choice" in remembered.detail

        client2, emit2, events2 = start_session(config)  # the next session
        assert client2.function_calling is False
        ask(client2, emit2)
        server.assert_done()
        assert len(server.rejected) == 1  # no second failed request
        assert "tools" not in server.requests[-1]
    notes = events2.of(Notice)
    assert notes and "text mode" in notes[0].message and "doctor" in notes[0].message


def test_leaked_format_is_remembered_with_its_format(tmp_path, state):
    script = [Reply(calls=[Call("read", {"path": "a.py"})]), Reply(content="ok")]
    with FakeVLLM(script, mode="leak", leak_format="hermes") as server:
        config = make_config(tmp_path, server)
        client, emit, _ = start_session(config)
        turn = ask(client, emit)
        assert [c.name for c in turn.tool_calls] == ["read"]  # recovered in this session
        remembered = CapabilityCache().get(server.base_url, server.model)
        assert remembered is not None and remembered.reason == "leak" and remembered.formats == ["hermes"]
        client2, emit2, _ = start_session(config)
        ask(client2, emit2)
        assert client2.function_calling is False and "tools" not in server.requests[-1]


def test_flag_and_user_profile_override_the_memory(tmp_path, state):
    with FakeVLLM([]) as server:
        CapabilityCache().remember(server.base_url, server.model, Remembered("text", "fallback"))
        forced = make_config(tmp_path, server, **{"vllm.enable_function_calling": True})
        assert start_session(forced)[0].function_calling is True
        mine = {"mine": {"match": ["*coder*"], "tool_call_mode": "native"}}
        assert start_session(make_config(tmp_path, server, mine))[0].function_calling is True
        assert start_session(make_config(tmp_path, server))[0].function_calling is False


def test_unwritable_state_dir_is_a_warning_not_a_crash(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # a file where a directory should be
    with FakeVLLM([Reply(content="ok")], mode="noparser") as server:
        client, emit, events = start_session(make_config(tmp_path, server))
        ask(client, emit)
    assert any("could not remember" in n.message for n in events.of(Notice))
    assert not os.path.isdir(blocker)
