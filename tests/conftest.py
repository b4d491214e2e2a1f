"""Shared test set-up: import the package from src/ without installing it."""

import os
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


import pytest  # noqa: E402


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject's addopts): two workers per CPU, since most tests wait on a subprocess, a
    server or a terminal more than they compute. PYTEST_XDIST_AUTO_NUM_WORKERS, when set, decides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return 2 * len(os.sched_getaffinity(0))


@pytest.fixture(autouse=True)
def _user_state_in_tmp(tmp_path_factory, monkeypatch):
    """The per-user state dir (remembered server modes, trusted workspaces) and the user config dir
    (config.json, AGENTS.md) never touch the real home in tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("userconfig")))
    monkeypatch.delenv("VLLM_BOT_TRUST_PROJECT", raising=False)


REAL_VLLM_TIER = Path(__file__).resolve().parent / "realvllm"
RAY_TIER = Path(__file__).resolve().parent / "ray"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The real-vLLM tier (tests/realvllm, minutes of CPU) and the Ray tier (tests/ray, a local Ray
    cluster, its own venv) run only when named on the command line, `python -m pytest tests/realvllm`:
    the README's plain `python -m pytest` leaves them out, and CI runs each once, as its own step."""
    if collection_path not in (REAL_VLLM_TIER, RAY_TIER):
        return None
    root = config.invocation_params.dir
    for arg in config.invocation_params.args:
        target = (root / str(arg).split("::")[0]).resolve()
        if target == collection_path or collection_path in target.parents:
            return None
    return True


@pytest.fixture
def lived_in(monkeypatch):
    """A home like a user's (tests/lived_in_home.py), this process's HOME pointing at it."""
    from lived_in_home import lived_in_home

    yield from lived_in_home(monkeypatch)
