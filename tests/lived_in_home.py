"""A home directory like a real user's, for the tests of config, paths, the sandbox, trust and the file
tools (issue 32): a user config at its documented place, shell start-up files, ssh keys and
`authorized_keys`, cloud and registry credentials in a dozen tools' usual places, a shell history, a
git global config naming an fsmonitor and a hooks path, toolchains (`~/bin` on PATH, a conda), a tmux
server whose socket is under `~` (and one under /var/tmp), and workspaces at `~`, `~/proj` and
`~/proj/sub`.

It lives under /var/tmp, not /tmp: inside the sandbox /tmp is private, and a real home is not there.
`env` is the environment a process started "as the user" gets: HOME set, no XDG overrides (so the
user config and state dirs are at their documented places under `~`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CANARY = "canary-lived-in-4d1e"
# Credentials where a dozen tools keep them (relative to $HOME); each file holds CANARY.
CREDENTIALS = (
    ".ssh/id_rsa", ".ssh/id_ed25519", ".aws/credentials", ".config/gcloud/application_default_credentials.json",
    ".azure/accessTokens.json", ".kube/config", ".docker/config.json", ".netrc", ".git-credentials",
    ".npmrc", ".pypirc", ".terraformrc", ".config/github-copilot/hosts.json", ".codex/auth.json",
    ".yarnrc.yml", ".m2/settings.xml", ".cargo/credentials.toml", ".config/gh/hosts.yml",
    ".cache/huggingface/token", ".bash_history", ".local/share/keyrings/login.keyring",
)  # fmt: skip
STARTUP_FILES = (".bashrc", ".profile", ".zshrc", ".bash_profile", ".ssh/authorized_keys")
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]


@dataclass
class Home:
    root: Path  # $HOME
    proj: Path  # ~/proj, a git repository with one commit
    sub: Path  # ~/proj/sub
    elsewhere: Path  # a workspace outside $HOME (beside it, under /var/tmp)
    user_config: Path  # ~/.config/vllm-bot/config.json
    state_dir: Path  # ~/.local/state/vllm-bot (the trust store lives here)
    tmux_home_socket: Path  # a tmux server's socket under ~
    tmux_var_socket: Path  # a tmux server's socket under /var/tmp
    marker_dir: Path  # where the planted fsmonitor / hooks and the tests' probes leave markers
    env: dict[str, str] = field(default_factory=dict)

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write_config(self, data: dict) -> None:
        self.user_config.write_text(json.dumps(data, indent=1))


def build_home(base: Path, config: dict | None = None) -> Home:
    root = base / "home" / "user"
    markers = base / "markers"
    markers.mkdir(parents=True)
    home = Home(
        root=root,
        proj=root / "proj",
        sub=root / "proj" / "sub",
        elsewhere=base / "elsewhere" / "x",
        user_config=root / ".config" / "vllm-bot" / "config.json",
        state_dir=root / ".local" / "state" / "vllm-bot",
        tmux_home_socket=root / ".tmux-sockets" / "default",
        tmux_var_socket=base / "var-tmp-tmux" / "tmux.sock",
        marker_dir=markers,
    )
    for rel in (*CREDENTIALS, *STARTUP_FILES):
        _write(root / rel, f"{rel}: {CANARY}\n")
    home.user_config.parent.mkdir(parents=True)
    home.write_config(config or {"vllm": {"api_key": CANARY}})
    _write(home.state_dir / "trusted-workspaces.json", json.dumps({"version": 1, "workspaces": {}}))
    hook = markers / "hooks"
    _write(hook / "pre-commit", f"#!/bin/sh\ntouch {markers}/global-hook-ran\n", 0o755)
    _write(markers / "fsmonitor.sh", f"#!/bin/sh\ntouch {markers}/fsmonitor-ran\n", 0o755)
    _write(root / ".gitconfig", f"[core]\n\tfsmonitor = {markers}/fsmonitor.sh\n\thooksPath = {hook}\n")
    _write(root / ".local" / "bin" / "hello-tool", "#!/bin/sh\necho hello from a user tool\n", 0o755)
    _write(root / "bin" / "backup", "#!/bin/sh\necho backing up\n", 0o755)  # a program on PATH
    _write(root / "miniconda3" / "lib" / "python3.12" / "site-packages" / "tool.pth", "import site\n")
    _write(root / "notes.txt", "my notes\n")
    for ws in (home.proj, home.sub, home.elsewhere):
        ws.mkdir(parents=True, exist_ok=True)
        _write(ws / "notes.txt", f"notes of {ws.name}\n")
    subprocess.run([*GIT, "init", "-q", str(home.proj)], check=True)
    subprocess.run([*GIT, "-C", str(home.proj), "add", "-A"], check=True, env=_git_env(home))
    subprocess.run([*GIT, "-C", str(home.proj), "commit", "-qm", "init", "--no-verify"], check=True,
                   env=_git_env(home))  # fmt: skip
    home.env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    home.env.update(HOME=str(root), PATH=f"{root}/.local/bin:{root}/bin:{os.environ.get('PATH', '')}")
    home.env.pop("VLLM_BOT_TRUST_PROJECT", None)
    home.env.pop("DEBUG", None)
    _start_tmux(home.tmux_home_socket)
    _start_tmux(home.tmux_var_socket)
    return home


def remove_home(home: Home) -> None:
    for socket in (home.tmux_home_socket, home.tmux_var_socket):
        if shutil.which("tmux"):
            subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, check=False)
    shutil.rmtree(home.root.parents[1], ignore_errors=True)


def lived_in_home(monkeypatch, config: dict | None = None) -> Iterator[Home]:
    """The fixture's body: the home, with this process's HOME and XDG variables as a user's."""
    base = Path(tempfile.mkdtemp(prefix="vllm-bot-home-", dir="/var/tmp")).resolve()
    home = build_home(base, config)
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home.root))
    monkeypatch.setenv("PATH", home.env["PATH"])
    try:
        yield home
    finally:
        remove_home(home)


def run_cli(home: Home, cwd: Path, *args: str, timeout: float = 180, stdin: str | None = None):
    """`cli.py ARGS` as the user runs it, from `cwd`, with the user's environment."""
    cli = Path(__file__).resolve().parents[1] / "cli.py"
    return subprocess.run(
        [sys.executable, str(cli), *args], cwd=cwd, env=home.env, capture_output=True, text=True,
        timeout=timeout, input=stdin if stdin is not None else "",
    )  # fmt: skip


def _git_env(home: Home) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home.root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }


def _write(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


def _start_tmux(socket: Path) -> None:
    if not shutil.which("tmux"):
        return
    socket.parent.mkdir(parents=True, exist_ok=True)
    socket.parent.chmod(0o700)
    subprocess.run(["tmux", "-S", str(socket), "new-session", "-d", "-s", "user", "sleep 600"], check=True,
                   env={**os.environ, "TMUX": ""})  # fmt: skip
