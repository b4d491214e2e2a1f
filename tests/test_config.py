import dataclasses
import json
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from vllm_bot.config import ConfigError, load_config, to_dict

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path, data) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_defaults(tmp_path):
    cfg = load_config(write(tmp_path, {}), env={})
    assert cfg.vllm.base_url == "http://localhost:8000/v1"
    assert cfg.vllm.api_key == "EMPTY"
    assert cfg.vllm.model == "auto"
    assert cfg.vllm.enable_function_calling is True
    assert cfg.vllm.tool_choice == "auto"
    assert cfg.agent.max_iterations > 0


def test_layers_file_then_env_then_flags(tmp_path):
    path = write(
        tmp_path, {"vllm": {"base_url": "http://file:1/v1", "model": "file-model", "temperature": 0}}
    )
    cfg = load_config(
        path,
        env={"VLLM_MODEL": "env-model", "VLLM_BASE_URL": "http://env:2/v1"},
        overrides={"vllm.base_url": "http://flag:3/v1", "vllm.model": None},
    )
    assert cfg.vllm.base_url == "http://flag:3/v1"  # flag beats env beats file
    assert cfg.vllm.model == "env-model"  # env beats file; a None flag is "not given"
    assert cfg.vllm.temperature == 0.0 and isinstance(cfg.vllm.temperature, float)


def test_debug_env(tmp_path):
    assert load_config(write(tmp_path, {}), env={"DEBUG": "1"}).agent.debug is True
    assert load_config(write(tmp_path, {}), env={"DEBUG": "0"}).agent.debug is False
    with pytest.raises(ConfigError, match="DEBUG"):
        load_config(write(tmp_path, {}), env={"DEBUG": "maybe"})


def test_unknown_key_names_key_and_file(tmp_path):
    path = write(tmp_path, {"vllm": {"temprature": 0.2}})
    with pytest.raises(ConfigError) as e:
        load_config(path, env={})
    assert "vllm.temprature" in str(e.value) and str(path) in str(e.value)
    assert "did you mean 'vllm.temperature'" in str(e.value)


def test_unknown_section(tmp_path):
    with pytest.raises(ConfigError, match="unknown key 'vlm'"):
        load_config(write(tmp_path, {"vlm": {}}), env={})


@pytest.mark.parametrize(
    "data, key",
    [
        ({"vllm": {"timeout": "slow"}}, "vllm.timeout"),
        ({"vllm": {"enable_function_calling": "yes"}}, "vllm.enable_function_calling"),
        ({"agent": {"max_iterations": 2.5}}, "agent.max_iterations"),
        ({"agent": {"max_iterations": True}}, "agent.max_iterations"),
        ({"agent": {"approval": "sometimes"}}, "agent.approval"),
        ({"vllm": "http://x"}, "vllm"),
        ({"tools": {"allowed_paths": "/tmp"}}, "tools.allowed_paths"),
        ({"tools": {"allowed_paths": [1]}}, "tools.allowed_paths[0]"),
    ],
)
def test_wrong_types_name_the_key(tmp_path, data, key):
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as e:
        load_config(path, env={})
    assert f"'{key}'" in str(e.value) and str(path) in str(e.value)


def test_invalid_json_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(write(tmp_path, "{nope"), env={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.json", env={})


def test_api_key_redacted_in_dump(tmp_path):
    cfg = load_config(write(tmp_path, {"vllm": {"api_key": "sk-secret"}}), env={})
    assert "sk-secret" not in json.dumps(to_dict(cfg))


def test_cli_config_error_exits_2(tmp_path):
    path = write(tmp_path, {"agent": {"max_iteration": 3}})
    proc = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "--config", str(path), "-p", "hi"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "agent.max_iteration" in proc.stderr and str(path) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shipped_config_json_is_valid():
    cfg = load_config(ROOT / "config.json", env={})
    assert cfg.vllm.enable_function_calling is True


@pytest.mark.parametrize(
    "data, key, says",
    [
        ({"vllm": {"tool_choice": "bogus"}}, "vllm.tool_choice", "a tool name (read, write, edit, exec)"),
        ({"vllm": {"tool_choice": "mcp__github"}}, "vllm.tool_choice", "mcp__SERVER__TOOL"),
        ({"vllm": {"tool_choice": "Auto"}}, "vllm.tool_choice", 'got "Auto"'),
        ({"agent": {"max_iterations": 0}}, "agent.max_iterations", "must be at least 1, got 0"),
        ({"agent": {"max_iterations": -3}}, "agent.max_iterations", "must be at least 1, got -3"),
        ({"vllm": {"timeout": 0}}, "vllm.timeout", "must be greater than 0"),
        ({"vllm": {"timeout": -5.5}}, "vllm.timeout", "got -5.5"),
        ({"vllm": {"max_tokens": -1}}, "vllm.max_tokens", "must be at least 1, got -1"),
        ({"vllm": {"max_tokens": 0}}, "vllm.max_tokens", "must be at least 1"),
        ({"vllm": {"temperature": -0.1}}, "vllm.temperature", "must be 0 or more, got -0.1"),
        ({"vllm": {"retry_attempts": 0}}, "vllm.retry_attempts", "at least 1"),
        ({"agent": {"time_budget": 0}}, "agent.time_budget", "greater than 0"),
        ({"agent": {"loop_stop_after": 0}}, "agent.loop_stop_after", "must be at least 1, got 0"),
        ({"agent": {"loop_warn_after": 0}}, "agent.loop_warn_after", "must be at least 1, got 0"),
        ({"context": {"compact_threshold": 5}}, "context.compact_threshold", "at most 1, got 5.0"),
        ({"context": {"compact_threshold": 0}}, "context.compact_threshold", "greater than 0"),
        ({"context": {"keep_recent_turns": -1}}, "context.keep_recent_turns", "0 or more"),
        ({"tools": {"read_max_lines": 0}}, "tools.read_max_lines", "must be at least 1, got 0"),
        ({"tools": {"exec_timeout": 0}}, "tools.exec_timeout", "at least 1"),
        ({"tools": {"exec_kill_grace": -1}}, "tools.exec_kill_grace", "0 or more"),
        ({"ui": {"refresh_per_second": 0}}, "ui.refresh_per_second", "greater than 0, got 0.0"),
        ({"ui": {"output_lines": -2}}, "ui.output_lines", "0 or more"),
        ({"mcp": {"timeout": 0}}, "mcp.timeout", "greater than 0"),
        ({"mcp": {"startup_timeout": -1}}, "mcp.startup_timeout", "greater than 0"),
        ({"git": {"max_file_mb": -1}}, "git.max_file_mb", "0 or more"),
        ({"git": {"keep_sessions": -1}}, "git.keep_sessions", "0 or more"),
        ({"telemetry": {"slow_first_token": 0}}, "telemetry.slow_first_token", "greater than 0"),
        ({"profiles": {"p": {"top_p": 1.5}}}, "profiles.p.top_p", "at most 1, got 1.5"),
        ({"profiles": {"p": {"temperature": -1}}}, "profiles.p.temperature", "0 or more"),
        ({"profiles": {"p": {"context_window": 0}}}, "profiles.p.context_window", "at least 1"),
    ],
)
def test_values_that_make_no_sense_name_the_key_and_file(tmp_path, data, key, says):
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as e:
        load_config(path, env={})
    assert str(e.value).startswith(f"{path}: '{key}' must be") and says in str(e.value)


@pytest.mark.parametrize(
    "vllm",
    [
        {"tool_choice": "auto"},
        {"tool_choice": "none"},
        {"tool_choice": "required"},
        {"tool_choice": "exec"},
        {"tool_choice": "mcp__github__create_issue"},
        {"temperature": 0, "max_tokens": 1, "timeout": 0.5},
        {"temperature": None, "max_tokens": None},
    ],
)
def test_values_at_the_edges_are_accepted(tmp_path, vllm):
    cfg = load_config(write(tmp_path, {"vllm": vllm, "agent": {"max_iterations": 1}}), env={})
    assert cfg.agent.max_iterations == 1
    for key, value in vllm.items():
        assert getattr(cfg.vllm, key) == value


def test_flag_values_are_checked_like_file_values(tmp_path):
    with pytest.raises(
        ConfigError, match=r"^command line: 'agent.max_iterations' must be at least 1, got 0$"
    ):
        load_config(write(tmp_path, {}), env={}, overrides={"agent.max_iterations": 0})


def cli(*args):
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, timeout=60
    )


def test_cli_rejects_max_iterations_below_1_with_exit_2(tmp_path):
    proc = cli("--config", str(write(tmp_path, {})), "--max-iterations", "0", "-p", "hi")
    assert proc.returncode == 2
    assert "'agent.max_iterations' must be at least 1, got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_rejects_an_unknown_tool_choice_with_exit_2(tmp_path):
    path = write(tmp_path, {"vllm": {"tool_choice": "bogus"}})
    proc = cli("--config", str(path), "-p", "hi")
    assert proc.returncode == 2
    assert f"{path}: 'vllm.tool_choice' must be auto, none, required" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "section, small, big",
    [("agent", "loop_warn_after", "loop_stop_after"), ("tools", "exec_timeout", "exec_max_timeout")],
)
def test_a_value_above_its_limit_names_both_keys_in_any_order(tmp_path, section, small, big):
    for data in ({small: 9, big: 4}, {big: 4, small: 9}):
        path = write(tmp_path, {section: data})
        with pytest.raises(ConfigError) as e:
            load_config(path, env={})
        assert str(e.value) == f"{path}: '{section}.{small}' (9) must not be above '{section}.{big}' (4)"
    cfg = load_config(write(tmp_path, {section: {small: 4, big: 4}}), env={})
    assert getattr(cfg, section).__dict__[small] == getattr(cfg, section).__dict__[big] == 4


def _sections(tp, seen):
    """Every config dataclass reachable from `tp` (sections, MCP servers, profiles)."""
    if tp in seen:
        return
    seen.add(tp)
    for f in dataclasses.fields(tp):
        hint = typing.get_type_hints(tp)[f.name]
        for arg in (hint, *typing.get_args(hint)):
            if dataclasses.is_dataclass(arg):
                _sections(arg, seen)


def test_every_numeric_field_declares_its_range():
    from vllm_bot.config import Config
    from vllm_bot.config.rules import RULE

    seen: set = set()
    _sections(Config, seen)
    assert len(seen) >= 12
    missing = []
    for tp in seen:
        hints = typing.get_type_hints(tp)
        for f in dataclasses.fields(tp):
            kinds = {hints[f.name], *typing.get_args(hints[f.name])}
            if kinds & {int, float} and RULE not in f.metadata:
                missing.append(f"{tp.__name__}.{f.name}")
    assert missing == []


def test_cli_rejects_loop_stop_after_0_with_exit_2(tmp_path):
    path = write(tmp_path, {"agent": {"loop_stop_after": 0}})
    proc = cli("--config", str(path), "-p", "hi")
    assert proc.returncode == 2
    assert f"{path}: 'agent.loop_stop_after' must be at least 1, got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_defaults_file_is_the_checkouts_beside_cli_py_and_an_installed_package_has_none(tmp_path):
    from vllm_bot.config.layers import defaults_file

    assert defaults_file() == ROOT / "config.json"  # the tests run from the checkout
    # The package as installed: lib/python3.X/site-packages/vllm_bot, no cli.py anywhere above it. A
    # config.json two levels up is not a checkout's.
    site = tmp_path / "lib" / "python3" / "site-packages"
    shutil.copytree(
        ROOT / "src" / "vllm_bot", site / "vllm_bot", ignore=shutil.ignore_patterns("__pycache__")
    )
    (site.parent / "config.json").write_text('{"nonsense": 1}')
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    code = "import vllm_bot.config.layers as c; print(c.__file__); print(c.defaults_file())"
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert shown.returncode == 0, shown.stderr
    module, path = shown.stdout.split()
    assert module == str(site / "vllm_bot" / "config" / "layers.py")
    assert path == "None"


@dataclasses.dataclass
class _Item:
    name: str = ""
    size: "int | None" = None


def test_each_class_has_its_annotations_evaluated_once(monkeypatch):
    """Coercing many entries of one dataclass (the shipped profiles at start-up) evaluates its
    annotations once, not once per entry (issue 22)."""
    from vllm_bot.config import coerce

    evaluated = []
    real = typing.get_type_hints
    monkeypatch.setattr(typing, "get_type_hints", lambda cls: evaluated.append(cls) or real(cls))
    items = coerce({"a": {"name": "x"}, "b": {"size": 2}, "c": {}}, dict[str, _Item], "items", "test")
    assert (items["a"].name, items["b"].size, items["c"]) == ("x", 2, _Item())
    assert evaluated == [_Item]
