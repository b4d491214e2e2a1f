"""Import the openai SDK in the background while the session starts, so the prompt (or the first
request) does not wait for it: even the chat parts alone (sdk.py) take about 0.5 s on a 2-core
machine. It also builds the client that the first request's client copies (sdk.warm). Imports hold
the GIL, so this gains only what the main thread spends waiting meanwhile (the /v1/models request,
git, the sandbox probe); sdk.load's lock makes a main thread that needs the SDK sooner simply wait
for the warm-up to finish it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .sdk import warm


def start(loader: Callable[[], None] = warm) -> threading.Thread:
    def run() -> None:
        try:
            loader()
        except ImportError:
            pass  # the real import later reports it where it matters

    thread = threading.Thread(target=run, name="vllm-bot-warmup", daemon=True)
    thread.start()
    return thread
