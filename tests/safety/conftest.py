"""The sandbox tests' shared fixtures: one sentinel layout (sandbox_helpers.make_layout) and one
default sandbox over it per module. A module that needs another layout defines its own."""

from __future__ import annotations

import pytest
from sandbox_helpers import STATUS, Layout, make_layout, remove_layout

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox


@pytest.fixture(scope="module")
def layout():
    layout = make_layout()
    yield layout
    remove_layout(layout)


@pytest.fixture(scope="module")
def sandbox(layout: Layout):
    with Sandbox(layout.ws, SandboxConfig(), STATUS, home=layout.home) as sandbox:
        sandbox.mount_args()  # creates .vllm-bot and the mount points before any "before" snapshot
        yield sandbox
