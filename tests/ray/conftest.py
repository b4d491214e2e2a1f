"""The Ray tier: a real Ray cluster on this machine, `ray start --head` and one worker node, one slot
(CPU) each, for `batch --ray`. Started once per test session, each node in its own session and
stopped by process group at its end; the worker node is started again when a test killed it.

Run only when named (`python -m pytest tests/ray`); without Ray installed (`pip install -e
'.[ray,test]'`) the tier skips and says so, and with CI set it fails instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TEST_TIMEOUT = 600  # seconds: nodes start in ~10 s each on two idle cores, far slower on busy ones
START_TIMEOUT = 180
# A killed node is noticed after about period x threshold (Ray's default: 30 s); generous enough that
# a node on two busy cores is never taken for dead.
FAST_HEALTH_CHECKS = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "2000",
    "RAY_health_check_failure_threshold": "10",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


def ray_command() -> Path | None:
    """The `ray` script of this Python's environment, when Ray is installed in it."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return None
    script = Path(sys.executable).parent / "ray"
    return script if script.exists() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A head and a worker node on loopback; `address` is what `batch --ray` is given."""

    def __init__(self, ray: Path, root: Path) -> None:
        self.ray, self.root = ray, root
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.head: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None
        state = root / "state"
        state.mkdir()
        # the nodes' agents keep their state here, never in the real home
        self.env = {**os.environ, **FAST_HEALTH_CHECKS, "XDG_STATE_HOME": str(state)}
        self.env["XDG_CONFIG_HOME"] = str(root / "config")
        for name in ("DEBUG", "VLLM_BASE_URL", "VLLM_MODEL", "VLLM_API_KEY", "RAY_ADDRESS"):
            self.env.pop(name, None)

    def _node(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        argv = [
            str(self.ray),
            "start",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=1",
            "--disable-usage-stats",
        ]
        log = (self.root / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            [*argv, *args], start_new_session=True, stdout=log, stderr=subprocess.STDOUT, env=self.env
        )
        try:
            code = proc.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            pytest.fail(f"ray start ({name}) failed: {(self.root / f'{name}.log').read_text()[-3000:]}")
        return proc

    def start(self) -> Cluster:
        self.head = self._node(
            "head",
            "--head",
            f"--port={self.port}",
            "--include-dashboard=false",
            f"--temp-dir={self.root / 'ray'}",
        )
        self.start_worker()
        return self

    def start_worker(self) -> None:
        self.worker = self._node("worker", f"--address={self.address}")
        self.wait_for_cpus(2)

    def wait_for_cpus(self, cpus: int) -> None:
        """Until the cluster has `cpus` slots (a started node has joined, a killed one is gone)."""
        deadline = time.monotonic() + START_TIMEOUT
        probe = f"import ray; ray.init(address='{self.address}', logging_level=40); print(ray.cluster_resources().get('CPU', 0))"
        while time.monotonic() < deadline:
            out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=self.env)
            if out.returncode == 0 and out.stdout.strip() and float(out.stdout.split()[-1]) == cpus:
                return
            time.sleep(1)
        pytest.fail(f"the Ray cluster did not reach {cpus} CPUs in {START_TIMEOUT} s")

    def kill_worker(self) -> None:
        """The worker node lost: its raylet and helpers killed (its Ray workers exit with them)."""
        assert self.worker is not None
        _kill_group(self.worker.pid)
        self.worker = None

    def stop(self) -> None:
        for proc in (self.worker, self.head):
            if proc is not None:
                _kill_group(proc.pid)


def _kill_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
        time.sleep(2 if sig == signal.SIGTERM else 0)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    ray = ray_command()
    if ray is None:
        message = "Ray is not installed here: pip install -e '.[ray,test]', then python -m pytest tests/ray"
        if os.environ.get("CI"):
            pytest.fail("CI must run the Ray tier, but " + message, pytrace=False)
        pytest.skip(message)
    root = Path(tempfile.mkdtemp(prefix="vbray-"))  # short: Ray's socket paths must fit in 107 bytes
    running = Cluster(ray, root)
    try:
        yield running.start()
    finally:
        running.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def two_nodes(cluster: Cluster) -> Cluster:
    """The cluster with both nodes up (a test before may have killed the worker)."""
    if cluster.worker is None:
        cluster.start_worker()
    return cluster
