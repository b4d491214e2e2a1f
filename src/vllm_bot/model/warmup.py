"""Import the openai SDK in the background while the session starts, so the prompt (or the first
request) does not wait for it: even the chat parts alone (sdk.py) take about 0.5 s on a 2-core
machine. It also builds the client that the first request's client copies (sdk.warm). Imports hold
the GIL, so this gains only what the main thread spends waiting meanwhile (the /v1/models request,
git, the sandbox probe); sdk.load's lock makes a main thread that needs the SDK sooner simply wait
for the warm-up to finish it.

Start-up also makes some 50,000 objects that live as long as the process (modules, classes, the
SDK's types), and the cyclic garbage collector scanned them over and over while they were made:
~110 collections, ~25 ms before the first request. So `start` turns the collector off, and once the
SDK is in (the last of the start-up's imports) moves everything made so far to the permanent
generation (gc.freeze: never scanned again; the few hundred objects of cyclic garbage start-up
leaves stay with it) and turns the collector back on.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

from .sdk import warm


def start(loader: Callable[[], None] = warm) -> threading.Thread:
    gc.disable()

    def run() -> None:
        try:
            loader()
        except ImportError:
            pass  # the real import later reports it where it matters
        finally:
            gc.freeze()
            gc.enable()

    thread = threading.Thread(target=run, name="vllm-bot-warmup", daemon=True)
    thread.start()
    return thread
