"""The probe and status line, wrap() in every mode, and the child environment allowlist."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sandbox_helpers import CANARY, STATUS, needs_bwrap

from vllm_bot.config import SandboxConfig, load_config
from vllm_bot.safety.sandbox import Sandbox, SandboxStatus, SandboxUnavailable, probe, safe_environment

NO_USERNS = "bwrap: No permissions to creating new namespace, likely because the kernel does not allow it"


def fake_bwrap(tmp_path: Path, body: str) -> str:
    """A stand-in bwrap binary: a real executable with scripted behaviour (what a broken host does)."""
    path = tmp_path / f"bwrap-{abs(hash(body))}"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_mode_off_warns_and_wraps_nothing(tmp_path: Path):
    status = probe(SandboxConfig(mode="off"))
    assert not status.active and "UNSANDBOXED" in (status.warning or "")
    assert status.describe().startswith("sandbox: OFF")
    assert Sandbox(tmp_path, SandboxConfig(mode="off"), status).wrap(["ls"]) == ["ls"]


def test_missing_bwrap_in_auto_mode_runs_unsandboxed_and_says_so(tmp_path: Path):
    config = SandboxConfig(bwrap=str(tmp_path / "no-such-bwrap"))
    status = probe(config)
    assert not status.active
    assert "not installed" in status.describe() and "apt-get install bubblewrap" in status.describe()
    assert "every command needs approval" in (status.warning or "")
    assert Sandbox(tmp_path, config, status).wrap(["ls", "-la"]) == ["ls", "-la"]


def test_missing_bwrap_in_bwrap_mode_refuses_with_the_fix(tmp_path: Path):
    config = SandboxConfig(mode="bwrap", bwrap=str(tmp_path / "no-such-bwrap"))
    status = probe(config)
    assert "commands are refused" in (status.warning or "")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        Sandbox(tmp_path, config, status).wrap(["ls"])


def test_bwrap_that_cannot_create_namespaces_is_reported(tmp_path: Path):
    config = SandboxConfig(bwrap=fake_bwrap(tmp_path, f"echo '{NO_USERNS}' >&2; exit 1"))
    status = probe(config)
    assert not status.active
    assert NO_USERNS in status.describe() and "docs/sandbox.md" in status.describe()
    with pytest.raises(SandboxUnavailable, match="No permissions to creating new namespace"):
        Sandbox(tmp_path, SandboxConfig(mode="bwrap", bwrap=config.bwrap), probe(config)).wrap(["ls"])


def test_a_hanging_bwrap_does_not_hang_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("vllm_bot.safety.sandbox.status.TRIAL_TIMEOUT", 0.5)
    status = probe(SandboxConfig(bwrap=fake_bwrap(tmp_path, "sleep 30")))
    assert not status.active and "timed out" in (status.warning or "")


@needs_bwrap
def test_old_bwrap_without_disable_userns_still_works(tmp_path: Path):
    real = shutil.which("bwrap")
    script = f'for a in "$@"; do [ "$a" = --disable-userns ] && {{ echo "bwrap: Unknown option $a" >&2; exit 1; }}; done\nexec {real} "$@"'
    status = probe(SandboxConfig(bwrap=fake_bwrap(tmp_path, script)))
    assert status.active and "--disable-userns" not in status.flags and "--cap-drop" in status.flags
    assert "no capabilities" in status.describe() and "nested" not in status.describe()


@needs_bwrap
def test_active_status_lists_the_layers():
    assert STATUS.active and STATUS.warning is None
    text = STATUS.describe()
    for layer in ("read-only outside the workspace", "network off", ".git read-only", "secrets", "allowlist"):
        assert layer in text
    assert probe(SandboxConfig()) is not None  # cached: a second probe runs no new trial


@needs_bwrap
def test_wrap_builds_a_bwrap_command_line(tmp_path: Path):
    with Sandbox(tmp_path, SandboxConfig(), STATUS, home=tmp_path / "home") as sandbox:
        argv = sandbox.wrap(["bash", "-c", "ls"])
        assert argv[argv.index("--seccomp") + 1] == "9"  # opened by the launcher in front of bwrap
        argv = argv[argv.index(STATUS.bwrap) :]
        assert argv[-4:] == ["--", "bash", "-c", "ls"]
        assert "--unshare-net" in argv and "--die-with-parent" in argv and "--new-session" in argv
        assert argv[argv.index("--cap-drop") + 1] == "ALL"
        assert ["--bind", str(tmp_path), str(tmp_path)] == argv[argv.index(str(tmp_path)) - 1 :][:3]
        assert sandbox.tmpdir == "/tmp"


def test_inactive_status_from_the_app_is_honoured(tmp_path: Path):
    status = SandboxStatus("auto", False, [], "no bwrap")
    assert Sandbox(tmp_path, SandboxConfig(), status).wrap(["x"]) == ["x"]
    assert Sandbox(tmp_path, SandboxConfig(), status).tmpdir is None
    refused = SandboxStatus("bwrap", False, [], "no bwrap")
    with pytest.raises(SandboxUnavailable):
        Sandbox(tmp_path, SandboxConfig(mode="bwrap"), refused).wrap(["x"])


@needs_bwrap
def test_refuses_the_root_directory_as_workspace():
    with pytest.raises(SandboxUnavailable, match="refusing"):
        Sandbox(Path("/"), SandboxConfig(), STATUS).wrap(["ls"])


def test_config_section(tmp_path: Path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"sandbox": {"mode": "bwrap", "network": True, "hidden_paths": ["~/.x"]}}))
    config = load_config(path, env={}).sandbox
    assert (config.mode, config.network, config.hidden_paths) == ("bwrap", True, ["~/.x"])
    assert SandboxConfig().mode == "auto" and SandboxConfig().network is False


# -- safe_environment ----------------------------------------------------------------------------
def test_environment_is_an_allowlist():
    environ = {
        "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm",
        "VIRTUAL_ENV": "/w/.venv", "XDG_CONFIG_HOME": "/home/u/.config", "TZ": "UTC",
        "VLLM_API_KEY": CANARY, "OPENAI_API_KEY": "sk-1", "AWS_ACCESS_KEY_ID": "AKIA", "GITHUB_TOKEN": "ghp",
        "DB_PASSWORD": "pw", "MY_SECRET": "s", "LC_TOKEN": "t", "SSH_AUTH_SOCK": "/tmp/ssh/agent",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus", "DISPLAY": ":0", "XDG_RUNTIME_DIR": "/run/1",
        "LD_PRELOAD": "/x.so", "BASH_ENV": "/x.sh", "PROMPT_COMMAND": "id", "PYTHONSTARTUP": "/x.py",
        "GIT_CONFIG_PARAMETERS": "'core.pager=sh'", "SOMETHING_ELSE": "1", "PIP_INDEX_URL": "https://u:p@h/s",
        "HTTPS_PROXY": "http://proxy:3128", "EDITOR": "vim", "PAGER": "less",
    }  # fmt: skip
    env = safe_environment(environ)
    assert env == {
        "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm",
        "VIRTUAL_ENV": "/w/.venv", "XDG_CONFIG_HOME": "/home/u/.config", "TZ": "UTC",
        "HTTPS_PROXY": "http://proxy:3128",
    }  # fmt: skip


def test_environment_drops_values_containing_a_known_secret():
    environ = {"PATH": "/bin", "PYTHONPATH": f"/x:{CANARY}", "LANG": "C", "TERM": "EMPTY"}
    env = safe_environment(environ, extra_secrets=[CANARY, "EMPTY", ""])
    assert env == {"PATH": "/bin", "LANG": "C", "TERM": "EMPTY"}  # "EMPTY" is the no-key placeholder


def test_environment_defaults_and_tmpdir():
    assert safe_environment({}) == {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    assert safe_environment({"TMPDIR": "/tmp/u1"}, tmpdir="/tmp")["TMPDIR"] == "/tmp"
    assert safe_environment({"TMPDIR": "/tmp/u1"})["TMPDIR"] == "/tmp/u1"


@needs_bwrap
def test_gaps_name_network_mcp_and_missing_layers_plainly():
    status = probe(SandboxConfig(network=True))
    gaps = status.gaps(["docs", "search"])
    assert "download and run code" in gaps[0] and "sandbox.network" in gaps[0]
    assert "MCP servers (docs, search) run OUTSIDE the sandbox" in gaps[1]
    assert gaps[2:] == [f"missing layer - {layer}" for layer in status.missing]
    assert "download and run code" in status.describe()  # /sandbox's first line says it too
    assert probe(SandboxConfig()).gaps([]) == [f"missing layer - {g}" for g in probe(SandboxConfig()).missing]


def test_gaps_when_the_sandbox_is_off_still_name_mcp():
    status = probe(SandboxConfig(mode="off"))
    assert any("MCP servers (x) run OUTSIDE" in gap for gap in status.gaps(["x"]))
