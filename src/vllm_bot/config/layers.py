"""The config's layers, each overriding the one before, and where every value came from:

built-in defaults ← the defaults file (`config.json` next to cli.py, when there is one) ← the user
config (`$XDG_CONFIG_HOME/vllm-bot/config.json`, or `--config PATH` in its place) ← the project's
`.mcp.json` and `.vllm-bot/config.json` (their safety keys only once the workspace is trusted:
trust.py) ← environment ← command-line flags.

Objects keyed by name (`mcp.servers`, `profiles`, `tools.exec_env`, ...) merge across layers by name;
an entry a later layer names replaces the earlier one whole.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cliargs import FLAG_NAMES
from ..mcp.claude import CLAUDE_KEY, MCP_JSON, McpJsonError, move_message, servers_from
from ..printable import safe_text
from .rules import ENV_KEYS, ConfigError, apply_mapping, field_types, from_env, set_key
from .settings import Config, to_dict
from .statedir import STATE_DIR_NAME
from .trust import TrustPolicy, TrustRequest, split, trusted_by_env

PROJECT_CONFIG = f"{STATE_DIR_NAME}/config.json"
DEFAULT = "default"


def defaults_file() -> Path | None:
    """`config.json` next to cli.py in a checkout (an installed package has none: a config.json two
    levels above site-packages/vllm_bot is not ours)."""
    checkout = Path(__file__).resolve().parents[3]  # src/vllm_bot/config/layers.py -> the checkout
    path = checkout / "config.json"
    return path if (checkout / "cli.py").is_file() and path.is_file() else None


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/vllm-bot` (default `~/.config/vllm-bot`), however the program was installed;
    `env` (default ours) gives the variables and HOME."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    home = Path(env.get("HOME") or Path.home())
    return (Path(base) if os.path.isabs(base) else home / ".config") / "vllm-bot"


def user_config_path() -> Path:
    return user_config_dir() / "config.json"


def load_layers(
    path: str | Path | None,
    env: Mapping[str, str] | None,
    overrides: dict[str, Any] | None,
    workspace: Path | None,
    trust: TrustPolicy | None,
) -> Config:
    """The effective config (see the module docstring); `cfg.provenance` says where each value came
    from, which files were read and which project keys were ignored."""
    cfg = Config()
    env = os.environ if env is None else env
    defaults = defaults_file()
    if defaults is not None:
        _apply_file(cfg, defaults, "defaults file")
        cfg.source = str(defaults)
    user = Path(path) if path is not None else user_config_path()
    if user.is_file():
        _apply_file(cfg, user, "--config" if path is not None else "user config")
        cfg.source = str(user)
    elif path is not None:
        raise ConfigError(f"config file {user} does not exist")
    else:
        cfg.provenance.files.append(("user config", str(user), "not found"))
    if workspace is not None:
        policy = trust or TrustPolicy(explicit=trusted_by_env(env))
        _apply_project(cfg, workspace, env, policy)
    for var, key in ENV_KEYS.items():
        if var in env:
            set_key(cfg, key, from_env(cfg, key, env[var], var), f"environment variable {var}")
            cfg.provenance.origins[key] = f"environment variable {var}"
    for key, value in (overrides or {}).items():
        if value is not None:
            set_key(cfg, key, value, "command line")
            cfg.flags.add(key)
            cfg.provenance.origins[key] = f"command line ({FLAG_NAMES.get(key, key)})"
    return cfg


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object")
    return data


def _config_data(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if CLAUDE_KEY in data:
        raise ConfigError(move_message(data, str(path)))
    return data


def _apply_file(cfg: Config, path: Path, layer: str) -> None:
    apply_layer(cfg, _config_data(path), str(path), layer)
    cfg.provenance.files.append((layer, str(path), "read"))


def apply_layer(cfg: Config, data: dict[str, Any], source: str, label: str) -> None:
    """Merge one layer's mapping (errors name `source`) and record `label` as its values' origin."""
    apply_mapping(cfg, data, source)
    _record(cfg, data, label, "")


def _record(obj: Any, data: dict[str, Any], label: str, prefix: str, cfg: Config | None = None) -> None:
    cfg = obj if cfg is None else cfg
    hints = field_types(type(obj))
    for key, value in data.items():
        dotted = prefix + key
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) and isinstance(value, dict):
            _record(current, value, label, dotted + ".", cfg)
        elif isinstance(value, dict) and typing.get_origin(hints[key]) is dict:
            for name in value:  # entries keyed by name: each has its own origin
                cfg.provenance.origins[f"{dotted}.{name}"] = label
        else:
            cfg.provenance.origins[dotted] = label


def _apply_project(cfg: Config, workspace: Path, env: Mapping[str, str], trust: TrustPolicy) -> None:
    """`.mcp.json`, then `.vllm-bot/config.json`; their safety keys only if the workspace is trusted."""
    layers: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []  # (file, path, safe, risky)
    mcp_path = workspace / MCP_JSON
    if mcp_path.is_file():
        try:
            servers, raw, warnings = servers_from(read_json(mcp_path), str(mcp_path), env)
        except McpJsonError as e:
            raise ConfigError(str(e)) from None
        cfg.provenance.warnings += warnings
        risky = {f"{CLAUDE_KEY}.{name}": raw[name] for name in servers}
        layers.append((MCP_JSON, str(mcp_path), {"mcp": {"servers": servers}}, risky))
    config_path = workspace / PROJECT_CONFIG
    if config_path.is_file():
        data = _config_data(config_path)
        risky = split(data)[1]
        layers.append((PROJECT_CONFIG, str(config_path), data, risky))
        scratch = copy.deepcopy(cfg)  # every key is checked, trusted or not: a typo is an error
        apply_mapping(scratch, data, str(config_path))
    settings = {name: risky for name, _, _, risky in layers if risky}
    state = "trusted"
    if settings:
        request = TrustRequest(workspace, settings)
        state = trust.decide(request)
        cfg.provenance.trust = state
        if state == "trusted for this run" and request.changes:
            changed = safe_text("; ".join(request.changes), keep_newlines=False)
            cfg.provenance.warnings.append(f"the project's settings apply for this run (trusted): {changed}")
    for name, path, data, risky in layers:
        if state == "not trusted" and risky:
            cfg.provenance.ignored += [safe_text(f"{key} ({name})", keep_newlines=False) for key in risky]
            data = {} if name == MCP_JSON else split(data)[0]
        note = f"{state}" if risky else "read"
        if name == MCP_JSON:
            names = [safe_text(key.removeprefix(f"{CLAUDE_KEY}."), keep_newlines=False) for key in risky]
            note = f"servers {', '.join(names)}: {state}" if names else "no servers"
        apply_layer(cfg, _in_workspace(data), path, f"project {name}")
        cfg.provenance.files.append((f"project {name}", path, note))
    if state == "not trusted":
        cfg.provenance.warnings.append(TrustRequest(workspace, settings).ignored_warning())


def _in_workspace(data: dict[str, Any]) -> dict[str, Any]:
    """A project's own stdio servers run in the workspace (`cwd` "." unless they name one); the
    user's run in our state directory unless theirs names one: started in the workspace, `npx PKG`
    or `python -m MODULE` would run a copy the model wrote there."""
    servers = (data.get("mcp") or {}).get("servers")
    if not isinstance(servers, dict):
        return data
    data = copy.deepcopy(data)
    for server in data["mcp"]["servers"].values():
        if isinstance(server, dict) and server.get("command") is not None and server.get("cwd") is None:
            server["cwd"] = "."
    return data


def origin(cfg: Config, dotted: str) -> str:
    """Where a value came from: the layer that last set it (or an enclosing key), else "default"."""
    origins = cfg.provenance.origins
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        found = origins.get(".".join(parts[:end]))
        if found is not None:
            return found
    return DEFAULT


def project_summary(cfg: Config) -> str:
    """The workspace's own settings files for the banner: `.mcp.json (servers a, b: trusted)`."""
    return ", ".join(
        f"{layer.removeprefix('project ')} ({note})"
        for layer, _, note in cfg.provenance.files
        if layer.startswith("project ")
    )


def config_rows(cfg: Config, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted key, `value  [where it came from]`) of every setting under `prefix`, the API key masked."""
    rows = []
    for key, value in _leaves(to_dict(cfg), ""):
        if key == prefix or key.startswith(prefix.rstrip(".") + ".") or not prefix:
            shown = json.dumps(value, ensure_ascii=False)
            shown = shown if len(shown) <= 70 else shown[:69] + "…"
            rows.append((key, f"{shown}  [{origin(cfg, key)}]"))
    return rows


def _leaves(data: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            found += _leaves(value, f"{prefix}{key}.")
        else:
            found.append((prefix + key, value))
    return found
