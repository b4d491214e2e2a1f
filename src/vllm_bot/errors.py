"""Errors for the user (they stop a task with one clear sentence and the fix), with exit codes.

Errors for the model never use these: they become `ToolResult`s of kind "error".
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3


class UserFacingError(Exception):
    """Stops the task; `str(err)` is the message shown to the user."""

    exit_code = EXIT_RUNTIME


class ModelServerError(UserFacingError):
    """The model server failed in a way we cannot recover from in this turn."""


class ServerUnreachable(ModelServerError):
    """The server has never answered since start: fail fast with the URL and how to start vLLM."""


class ContextOverflow(ModelServerError):
    """The conversation no longer fits the model's context window even after compaction."""

    exit_code = EXIT_LIMIT


def unreachable_message(base_url: str, detail: str = "") -> str:
    extra = f" ({detail})" if detail else ""
    return (
        f"Cannot reach the vLLM server at {base_url}{extra}. Start one with "
        "`vllm serve MODEL --enable-auto-tool-choice --tool-call-parser PARSER`, "
        "or point vLLM Bot at it with --base-url / VLLM_BASE_URL."
    )


def untrusted_message(base_url: str, error: str) -> str | None:
    """The message for a connection refused because the server's TLS certificate is not trusted
    (`error`: the connection error's text); None for any other error."""
    marker = "certificate verify failed"
    if marker not in error.lower():
        return None
    why = error.lower().split(marker, 1)[1].split("(_ssl", 1)[0].strip(" :")
    return (
        f"The vLLM server at {base_url} presented a TLS certificate this machine does not trust"
        f"{f' ({why})' if why else ''}. If the certificate is yours, point SSL_CERT_FILE at it or at "
        "the CA that signed it; on a network you trust, use http:// instead."
    )
