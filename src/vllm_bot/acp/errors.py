"""Our errors as JSON-RPC errors: the same one line the terminal prints (`vllm-bot: ...`, with its fix),
and a code the editor can act on. `data.exitCode` is the exit code the command line would have used."""

from __future__ import annotations

import logging

from acp import RequestError

from ..cliargs import UsageError
from ..config import ConfigError
from ..errors import EXIT_USAGE, UserFacingError
from ..history.sessions import SessionNotFound
from ..prompts import PromptError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  # ACP: a session or file that does not exist

log = logging.getLogger("vllm_bot.acp")


class InputError(ValueError):
    """A request asks for what this agent does not offer (the message says what it does offer)."""


def request_error(e: BaseException) -> RequestError:
    """The JSON-RPC error for an error of ours (anything else is a bug: logged, reported as internal)."""
    if isinstance(e, RequestError):
        return e
    if isinstance(e, (UsageError, ConfigError, PromptError, InputError)):
        return RequestError(INVALID_PARAMS, f"vllm-bot: {e}", {"exitCode": EXIT_USAGE})
    if isinstance(e, UserFacingError):
        code = RESOURCE_NOT_FOUND if isinstance(e, SessionNotFound) else INTERNAL_ERROR
        return RequestError(code, f"vllm-bot: {e}", {"exitCode": e.exit_code})
    log.error("internal error", exc_info=e)
    return RequestError(INTERNAL_ERROR, f"vllm-bot: internal error: {type(e).__name__}: {e}")


def invalid(message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, f"vllm-bot: {message}", {"exitCode": EXIT_USAGE})


def no_session(session_id: str) -> RequestError:
    return RequestError(
        RESOURCE_NOT_FOUND,
        f"vllm-bot: no session {session_id!r} in this connection: call session/new (or session/load) first",
    )


def busy(session_id: str) -> RequestError:
    return RequestError(
        INVALID_PARAMS,
        f"vllm-bot: session {session_id!r} is already working on a prompt; send session/cancel to stop it",
    )
