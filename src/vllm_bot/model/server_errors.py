"""Map openai SDK exceptions to what the client does next: fall back to text mode, compact the
context, retry (a server that answered before and faltered), or stop with one clear sentence."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import ModelServerError, ServerUnreachable, unreachable_message, untrusted_message
from .retry import TransientServerError
from .watchdog import StreamStalled

FALLBACK_MARKERS = ("--enable-auto-tool-choice", "requires --tool-call-parser")
CONTEXT_MARKERS = ("maximum context length", "is too large", "cannot be greater than")


class ToolChoiceUnsupported(Exception):
    """vLLM's 400 for `tools` on a server started without --enable-auto-tool-choice/--tool-call-parser."""

    def __init__(self, message: str) -> None:
        self.message = message


class ContextLengthExceeded(Exception):
    """vLLM's 400 for a prompt (plus max_tokens) longer than the model's window."""

    def __init__(self, message: str) -> None:
        self.message = message


def incomplete_reply(base_url: str) -> TransientServerError:
    return TransientServerError(
        f"The reply from {base_url} ended before it was complete; nothing was executed."
    )


def no_answer(url: str, answered_before: bool, timed_out: bool, why: str) -> ModelServerError:
    """A request that got no answer at all: worth a retry from a server that answered before, else
    the user's error (unreachable, or a TLS certificate this machine does not trust)."""
    if answered_before:
        return TransientServerError(f"Lost the connection to the server at {url}.")
    detail = "timed out" if timed_out else "connection failed"
    return ServerUnreachable(untrusted_message(url, why) or unreachable_message(url, detail))


def rejected_key(url: str) -> ModelServerError:
    return ModelServerError(
        f"The server at {url} rejected the API key (401). Set vllm.api_key, VLLM_API_KEY or "
        "--api-key to the key vLLM was started with (--api-key)."
    )


@contextlib.contextmanager
def translate_errors(client: Any, native: bool = False) -> Iterator[None]:
    import openai  # here: importing the session's modules loads no SDK (tests/test_ui_architecture.py)

    url = client.config.base_url
    try:
        yield
    except StreamStalled as e:
        raise TransientServerError(f"The server at {url} stalled: {e}") from None
    except openai.APIStatusError as e:
        _record(client, e)
        client.answered = True
        raise _status_error(e, url, native) from None
    except openai.APIConnectionError as e:
        _record(client, e)
        timed_out = isinstance(e, openai.APITimeoutError)
        raise no_answer(url, client.answered, timed_out, chain_text(e)) from None
    except openai.APIError as e:  # an error object inside a 200 stream
        _record(client, e)
        raise TransientServerError(
            f"The server at {url} reported an error during the reply: {e.message}."
        ) from None


def _status_error(e: Any, url: str, native: bool) -> Exception:
    message = _status_message(e)
    status = e.status_code
    if status == 400 and native and any(m in message for m in FALLBACK_MARKERS):
        return ToolChoiceUnsupported(message)
    if status == 400 and any(m in message for m in CONTEXT_MARKERS):
        return ContextLengthExceeded(message)
    if status == 401:
        return rejected_key(url)
    if status == 429 or status >= 500:
        return TransientServerError(f"The server at {url} answered {status}: {message}.", _retry_after(e))
    return ModelServerError(f"The server at {url} answered {status}: {message}")


def _retry_after(e: Any) -> float | None:
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff


def _status_message(e: Any) -> str:
    body = e.body
    if isinstance(body, dict):
        return str(body.get("message") or body)
    if isinstance(body, str):
        return body
    return str(e.message)


def _record(client: Any, e: Exception) -> None:
    if client.trace is not None:
        client.trace.record("error", {"type": type(e).__name__, "message": str(e)})


def chain_text(error: BaseException) -> str:
    """The text of an error and of every error it was raised from (the SDK wraps the transport's)."""
    parts: list[str] = []
    seen: BaseException | None = error
    while seen is not None and len(parts) < 10:
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(parts)
