"""Import the heavy libraries in the background while the session starts, so the prompt (or the
first request) does not wait for them: the openai SDK alone takes 0.4-1 s to import.

Only modules the main thread does not import while the warm-up runs are listed, so the two threads
never wait on each other's half-imported modules; when the main thread needs one, Python's import
lock simply waits for the warm-up to finish it.
"""

from __future__ import annotations

import importlib
import threading

HEAVY = ("openai",)


def start(modules: tuple[str, ...] = HEAVY) -> threading.Thread:
    def warm() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError:
                pass  # the real import later reports it where it matters

    thread = threading.Thread(target=warm, name="vllm-bot-warmup", daemon=True)
    thread.start()
    return thread
