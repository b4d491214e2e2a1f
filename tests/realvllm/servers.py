"""Real `vllm serve` processes for the tier: started from the vLLM venv with the tiny model, bounded in
time, stopped by process group id, and a raw HTTP helper to talk to them without our client.

For local iteration the three servers can be kept up between test runs:
    python3 tests/realvllm/servers.py DIR      # starts A, B and C; Ctrl-C stops them
    REALVLLM_ATTACH=DIR/servers.json pytest tests/realvllm
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVED_NAME = "realvllm-tiny"
START_TIMEOUT = 420.0  # seconds for one server to answer /health (75 s idle; far more on a busy machine)
STOP_GRACE = 15.0

# The three servers of issue 16. Every one runs the engine in eager mode: torch.compile costs ~75 s of
# CPU per server and changes nothing on the wire.
FLAGS = {
    "A": ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
    "B": [],
    "C": [
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--reasoning-parser",
        "qwen3",
        "--enable-prompt-tokens-details",  # A answers without them, C with them
    ],
}
COMMON = [
    "--dtype",
    "bfloat16",
    "--load-format",
    "dummy",
    "--enforce-eager",
    "--served-model-name",
    SERVED_NAME,
]


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A free port, never one handed out before in this process: the kernel may give a just-closed
    ephemeral port again, and two servers told the same port left one of them dead while its /health
    was answered by the other (server C's requests then reached A, which has no reasoning parser)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@dataclass
class Answer:
    """A raw HTTP answer: status, content type, and the body (parsed JSON, or SSE events, or text)."""

    status: int
    content_type: str
    text: str

    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The `data:` payloads of an SSE body, without the closing [DONE]."""
        lines = [ln[len("data: ") :] for ln in self.text.splitlines() if ln.startswith("data: ")]
        return [json.loads(ln) for ln in lines if ln != "[DONE]"]


def http(url: str, body: dict[str, Any] | None = None, timeout: float = 120.0) -> Answer:
    """GET (no body) or POST JSON to url; HTTP errors are answers too."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return Answer(r.status, r.headers.get("Content-Type", ""), r.read().decode())
    except urllib.error.HTTPError as e:
        return Answer(e.code, e.headers.get("Content-Type", ""), e.read().decode())


@dataclass
class VllmServer:
    """One `vllm serve` process group; its output goes to `log`."""

    name: str
    port: int
    log: Path
    pid: int | None = None
    started: float = field(default_factory=time.monotonic)
    ready_after: float | None = None  # seconds from start to the first healthy /health

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def chat(self, body: dict[str, Any]) -> Answer:
        return http(self.url + "/v1/chat/completions", {"model": SERVED_NAME, **body})

    def tokenize(self, text: str) -> list[int]:
        return list(http(self.url + "/tokenize", {"model": SERVED_NAME, "prompt": text}).json()["tokens"])

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        with self.log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def healthy(self) -> bool:
        try:
            return http(self.url + "/health", timeout=5).status == 200
        except OSError:
            return False

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:  # not our child (attached): ask the kernel
            try:
                os.kill(self.pid, 0)
                return True
            except ProcessLookupError:
                return False

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Block until /health answers 200; raise with the log's tail if the server died or timed out."""
        deadline = self.started + timeout
        while not self.healthy():
            if not self.alive():
                raise RuntimeError(f"vLLM server {self.name} exited while starting:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"vLLM server {self.name} not ready after {timeout:.0f} s:\n{self.tail()}")
            time.sleep(1.0)
        if self.ready_after is None:
            self.ready_after = time.monotonic() - self.started

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after STOP_GRACE seconds."""
        if self.pid is None:
            return
        for sig, wait in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + wait
            while self.alive() and time.monotonic() < end:
                time.sleep(0.2)
            if not self.alive():
                break
        self.pid = None


def start(name: str, python: Path, model_dir: Path, log_dir: Path) -> VllmServer:
    """Start server `name` (A, B or C) in its own process group; returns at once (see wait_ready)."""
    server = VllmServer(name, free_port(), log_dir / f"vllm-{name}.log")
    command = [str(python), str(HERE / "launch_vllm.py"), "serve", str(model_dir)]
    command += ["--host", "127.0.0.1", "--port", str(server.port), *COMMON, *FLAGS[name]]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    # Three servers share two cores. vLLM would pin each one's threads to core 0; unpinned, torch runs
    # two OpenMP threads per server, and their spin-waiting on a busy machine made decoding ~100x slower.
    # One thread each, placed by the kernel.
    env.update(VLLM_CPU_OMP_THREADS_BIND="nobind", OMP_NUM_THREADS="1")
    env["HF_HUB_OFFLINE"] = "1"  # the model is a local directory; never reach for a hub
    with server.log.open("wb") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: stop() ends the engine process too
        )
    server.pid = process.pid
    return server


def make_model(python: Path, out: Path) -> Path:
    """The tiny model directory (tiny_model.py), written by the vLLM venv's python."""
    subprocess.run([str(python), str(HERE / "tiny_model.py"), str(out)], check=True, capture_output=True)
    return out


def attach(state: Path) -> dict[str, VllmServer]:
    """Servers started by `python3 servers.py DIR` (they stay up: stop() is never called on them)."""
    data = json.loads(state.read_text())
    return {n: VllmServer(n, s["port"], Path(s["log"]), s["pid"]) for n, s in data.items()}


def _serve_forever(out: Path) -> None:
    from setup_vllm import venv_python

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # run the finally below: stop the servers
    out.mkdir(parents=True, exist_ok=True)
    python = venv_python()
    model = make_model(python, out / "model")
    servers = {n: start(n, python, model, out) for n in FLAGS}
    try:
        for s in servers.values():
            s.wait_ready()
            print(f"{s.name} ready at {s.url} after {s.ready_after:.0f} s", flush=True)
        state = {n: {"port": s.port, "log": str(s.log), "pid": s.pid} for n, s in servers.items()}
        (out / "servers.json").write_text(json.dumps(state, indent=2))
        print(f"REALVLLM_ATTACH={out / 'servers.json'}", flush=True)
        signal.pause()
    finally:
        for s in servers.values():
            s.stop()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    _serve_forever(Path(sys.argv[1]).resolve())
