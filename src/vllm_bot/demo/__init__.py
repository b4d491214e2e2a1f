"""`cli.py --demo`: the real agent, tools and UI against a scripted model server, on a throwaway copy
of a small sample project. No GPU, no vLLM, no input needed; see runner.py."""

from __future__ import annotations

from typing import Any

from .runner import run


def run_demo(args: Any) -> int:
    return run(args)
