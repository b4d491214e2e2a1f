"""Shared test set-up: import the package from src/ without installing it."""

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _user_state_in_tmp(tmp_path_factory, monkeypatch):
    """The per-user state dir (remembered server modes) never touches the real home in tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
