"""The parts of the openai SDK a chat completion uses, imported without the rest of the SDK.

`import openai` runs the package's `__init__`, and it imports every type of the whole API (Responses,
evals, graders, realtime, ...): about 1 s and 11 MiB on a 2-core machine, more than everything else
the agent does before its first request. The client class, its errors, its streaming and the chat
completion types live in modules of their own that import little. `load` imports those with a
stand-in for each package whose `__init__` imports everything (`_STAND_INS`), then takes the
stand-ins away again: a later `import openai` anywhere in the process runs the real `__init__`,
which finds these same modules already loaded, so the classes stay the same objects.

Should an SDK version be laid out otherwise, `load` forgets what it half-imported and falls back to
`import openai`: slower to start, same behaviour. `Sdk.partial` says which way it went.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

_STAND_INS = ("openai", "openai.types", "openai.types.chat", "openai.lib")


@dataclass(frozen=True)
class Sdk:
    OpenAI: Any
    Timeout: Any
    Stream: Any
    ChatCompletion: Any
    ChatCompletionChunk: Any
    APIError: Any
    APIStatusError: Any
    APIConnectionError: Any
    APITimeoutError: Any
    partial: bool  # True: loaded without the package `__init__`s
    HttpClient: Any = None  # the HTTP client class the SDK makes by default (its defaults, closed on GC)

    @property
    def ChunkStream(self) -> Any:
        """The SDK's Stream of chunk dicts, reading the response to its end (chunk_stream)."""
        return chunk_stream(self.Stream)


_lock = threading.Lock()
_loaded: list[Sdk] = []
_spare: list[Any] = []  # one client built ahead by `warm`, for `client` to copy


def load() -> Sdk:
    """The SDK's chat parts, imported once per process (thread-safe: warmup.py calls it too)."""
    with _lock:
        if not _loaded:
            _loaded.append(_load())
        return _loaded[0]


def warm() -> None:
    """Load the SDK and build one client ahead: making a client is when its HTTP transport imports
    its connection machinery (httpcore2, h11) and builds a TLS context (~0.1 s on 2 cores)."""
    chat = load()
    spare = chat.OpenAI(
        **_with_http_client(chat, base_url="http://127.0.0.1/v1", api_key="EMPTY", max_retries=0)
    )
    with _lock:
        _spare.append(spare)


def client(**options: Any) -> Any:
    """An SDK client with these options: a copy of the one `warm` built (sharing its HTTP client, used
    by nobody else), else a new one."""
    with _lock:
        spare = _spare.pop() if _spare else None
    if spare is not None:
        return spare.copy(**options)
    chat = load()
    return chat.OpenAI(**_with_http_client(chat, **options))


def _with_http_client(chat: Sdk, **options: Any) -> dict[str, Any]:
    """`options` with the SDK's own kind of HTTP client, but one whose TLS context loads the trusted
    certificates at the first https connection, not now (tls.py); unchanged where that cannot be."""
    from .tls import lazy_context  # ssl: imported with the client, not with this module

    context = lazy_context()
    if "http_client" in options or chat.HttpClient is None or context is None:
        return options
    where = {"base_url": options["base_url"]} if options.get("base_url") else {}
    return {**options, "http_client": chat.HttpClient(verify=context, **where)}


def _load() -> Sdk:
    full = sys.modules.get("openai")
    if full is not None and hasattr(full, "OpenAI"):
        return _full()
    before = set(sys.modules)
    try:
        return _partial()
    except Exception:  # any other layout: start over with the plain import
        for name in [n for n in sys.modules if _is_openai(n) and n not in before]:
            del sys.modules[name]
        return _full()


def _partial() -> Sdk:
    spec = importlib.util.find_spec("openai")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("openai")
    root = Path(next(iter(spec.submodule_search_locations)))
    stand_ins = {name: _stand_in(name, root) for name in _STAND_INS}
    sys.modules.update(stand_ins)
    try:
        client = importlib.import_module("openai._client")
        streaming = importlib.import_module("openai._streaming")
        errors = importlib.import_module("openai._exceptions")
        completion = importlib.import_module("openai.types.chat.chat_completion")
        chunk = importlib.import_module("openai.types.chat.chat_completion_chunk")
        base = importlib.import_module("openai._base_client")
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return Sdk(
        client.OpenAI,
        client.Timeout,
        streaming.Stream,
        completion.ChatCompletion,
        chunk.ChatCompletionChunk,
        errors.APIError,
        errors.APIStatusError,
        errors.APIConnectionError,
        errors.APITimeoutError,
        partial=True,
        HttpClient=_http_client_class(base),
    )


def _full() -> Sdk:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    return Sdk(
        openai.OpenAI,
        openai.Timeout,
        openai.Stream,
        ChatCompletion,
        ChatCompletionChunk,
        openai.APIError,
        openai.APIStatusError,
        openai.APIConnectionError,
        openai.APITimeoutError,
        partial=False,
        HttpClient=_http_client_class(sys.modules.get("openai._base_client")),
    )


def _http_client_class(base: ModuleType | None) -> Any:
    """The class the SDK makes its HTTP client of (None: unknown in this SDK version)."""
    return getattr(base, "SyncHttpxClientWrapper", None) or getattr(base, "DefaultHttpxClient", None)


@functools.cache
def chunk_stream(stream: Any) -> Any:
    """The SDK's `Stream`, yielding chunks as the dicts it parsed (typed `object`, which the SDK
    honours: no model built per chunk), that reads the response to its end when `[DONE]` arrives.

    The SDK stops reading at `[DONE]` and closes the response with the last bytes of the chunked
    body unread, so its connection pool cannot keep the connection: every request opened a new one,
    a TCP (and over https a TLS) handshake each turn. Read to the end, the connection goes back to the
    pool. This overrides the Stream's `_iter_events` (openai 3.14 to 3.57 have it); a version without
    it never calls the override and keeps its old behaviour."""

    class ChunkStream(stream[object]):  # type: ignore[misc,valid-type]
        def _iter_events(self) -> Iterator[Any]:
            events = super()._iter_events()
            for event in events:
                if str(getattr(event, "data", "")).startswith("[DONE]"):
                    for _ in events:  # the body's end: nothing but the chunked terminator follows
                        pass
                yield event

    return ChunkStream


def _stand_in(name: str, root: Path) -> ModuleType:
    """An empty package module whose submodules are found where the real package keeps them."""
    path = str(root.joinpath(*name.split(".")[1:]))
    module = ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = [path]
    module.__path__ = [path]
    return module


def _is_openai(name: str) -> bool:
    return name == "openai" or name.startswith("openai.")
