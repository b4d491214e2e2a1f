"""Shared pieces for the sandbox tests: the probe-based skip, a sentinel layout and tree manifests."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import vllm_bot
from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox, probe, safe_environment

STATUS = probe(SandboxConfig())
needs_bwrap = pytest.mark.skipif(
    not STATUS.active, reason=f"bubblewrap cannot run on this machine: {STATUS.warning}"
)
_PACKAGE = Path(vllm_bot.__file__).resolve().parent
# An unprivileged uid's sandbox mounts the agent's own package (hidden eval data in it) by its path: a
# checkout in a folder other users cannot enter (`mktemp -d` makes one, mode 700) fails there.
needs_package_others_can_enter = pytest.mark.skipif(
    not all(os.stat(p).st_mode & 0o001 for p in _PACKAGE.parents if p != Path("/")),
    reason=f"the agent's package {_PACKAGE} is in a folder other users cannot enter",
)
CANARY = "canary-3f9c1d7e-secret"
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]


def agents_own_in_tmp() -> set[str]:
    """The names in /tmp a sandboxed command sees besides its own files: the top folder of the agent's
    interpreter and package where they live under /tmp (a checkout there), shown read-only so batch's
    and eval's checks can run `{python}` (safety/boundary.py's show-list)."""
    own = set()
    for path in (sys.prefix, sys.base_prefix, str(Path(vllm_bot.__file__).resolve().parent)):
        real = Path(path).resolve()
        if real.is_relative_to("/tmp") and real != Path("/tmp"):
            own.add(real.relative_to("/tmp").parts[0])
    return own


def visible_base() -> Path:
    """A scratch directory the sandbox can see: /tmp becomes private inside it, /var/tmp does not."""
    for candidate in ("/var/tmp", str(Path.home())):
        if os.access(candidate, os.W_OK):
            return Path(tempfile.mkdtemp(prefix="vllm-bot-test-", dir=candidate)).resolve()
    pytest.skip("no writable directory outside /tmp for the sentinel tree")


def manifest(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under root with its type, mode, and bytes / link target / mtime."""
    entries: dict[str, tuple[object, ...]] = {}
    if not root.exists() and not root.is_symlink():
        return {".": ("missing",)}
    for path in [root, *sorted(root.rglob("*"))]:
        st = path.lstat()
        rel = str(path.relative_to(root))
        if stat.S_ISLNK(st.st_mode):
            entries[rel] = ("link", os.readlink(path))
        elif stat.S_ISDIR(st.st_mode):
            entries[rel] = ("dir", stat.S_IMODE(st.st_mode))
        else:
            entries[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes(), st.st_mtime_ns)
    return entries


@dataclass
class Layout:
    base: Path
    ws: Path
    outside: Path
    home: Path

    def watched(self) -> dict[str, dict[str, tuple[object, ...]]]:
        """Manifests of everything a command must not change."""
        git = self.ws / ".git"
        return {
            "outside": manifest(self.outside),
            "home": manifest(self.home),
            "hooks": manifest(git / "hooks"),
            "config": manifest(git / "config"),
            "modules": manifest(git / "modules"),
            "state": manifest(self.ws / ".vllm-bot"),
        }


def make_layout(git: bool = True) -> Layout:
    base = visible_base()
    layout = Layout(base, base / "ws", base / "outside", base / "home")
    layout.outside.mkdir()
    (layout.outside / "file.txt").write_text("sentinel\n")
    (layout.outside / "nested").mkdir()
    (layout.outside / "nested" / "deep.bin").write_bytes(bytes(range(256)))
    (layout.outside / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (layout.outside / "run.sh").chmod(0o755)
    (layout.outside / "link").symlink_to("file.txt")
    home = layout.home
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {CANARY}\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {CANARY}\n")
    (home / ".netrc").write_text(f"machine example.com password {CANARY}\n")
    (home / ".bashrc").write_text("# bashrc\n")
    (home / ".profile").write_text("# profile\n")
    (home / ".gitconfig").write_text("[user]\n\tname = Sentinel\n")
    layout.ws.mkdir()
    (layout.ws / "README.md").write_text("# project\n")
    if git:
        subprocess.run([*GIT, "init", "-q", str(layout.ws)], check=True)
        hook = layout.ws / ".git" / "hooks" / "post-checkout"
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
        subprocess.run([*GIT, "-C", str(layout.ws), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(layout.ws), "commit", "-qm", "init"], check=True)
    return layout


def remove_layout(layout: Layout) -> None:
    shutil.rmtree(layout.base, ignore_errors=True)


def child_env(layout: Layout, sandbox: Sandbox, **extra: str) -> dict[str, str]:
    environ = {**os.environ, "HOME": str(layout.home), "VLLM_API_KEY": CANARY, **extra}
    return safe_environment(environ, extra_secrets=[CANARY], tmpdir=sandbox.tmpdir)


def run(sandbox: Sandbox, command: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 30):
    argv = sandbox.wrap(["bash", "-c", command])
    return subprocess.run(
        argv, cwd=cwd or sandbox.workspace, env=env, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


class Listener:
    """A TCP and a UDP socket on 127.0.0.1 outside the sandbox that count what reaches them."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp.settimeout(0.1)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.1)
        self.port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]
        self.connections = 0
        self.datagrams = 0
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
                self.connections += 1
                conn.settimeout(0.5)
                try:
                    self.received += conn.recv(65536)
                except OSError:
                    pass
                conn.close()
            except OSError:
                pass
            try:
                data, _ = self.udp.recvfrom(65536)
                self.datagrams += 1
                self.received += data
            except OSError:
                pass

    def settle(self, seconds: float = 0.3) -> None:
        """Give late connections a short deadline to arrive before counting."""
        time.sleep(seconds)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.tcp.close()
        self.udp.close()
