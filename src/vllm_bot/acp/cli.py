"""`vllm-bot acp`: vLLM Bot as an Agent Client Protocol agent for editors (Zed, JetBrains, Neovim),
on stdin and stdout. stdout carries protocol messages only; logs go to stderr (and the DEBUG trace).

The ACP SDK is an optional extra (`vllm-bot[acp]`); without it the command says how to install it.
Exit codes: 0 the editor closed the connection, 1 runtime failure (the SDK missing), 2 usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..cliargs import function_calling_flags, program_name, server_flags
from ..errors import UserFacingError
from .stdio import LineTransport, claim_stdio
from .worker import Worker


class SdkMissing(UserFacingError):
    """The optional ACP SDK is not installed."""


def command() -> tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]:
    """The sub-command entry for app.SUBCOMMANDS."""
    return add_arguments, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Serve the Agent Client Protocol on stdin/stdout, for an editor to run vLLM Bot as its agent "
        "(Zed agent_servers, JetBrains acp.json, Neovim CodeCompanion: see docs/acp.md). Each editor "
        "session works in the folder the editor opens; commands still run in the sandbox."
    )
    parser.epilog = "exit codes: 0 the editor closed the connection, 1 runtime failure, 2 usage error"
    server_flags(parser)
    function_calling_flags(parser)
    parser.add_argument(
        "--debug", action="store_true", default=None, help="log each step (stderr) and keep a trace"
    )
    parser.add_argument(
        "--max-iterations", type=int, metavar="N", help="stop after N model requests per prompt"
    )
    parser.add_argument(
        "--allow-home",
        action="store_true",
        help="accept your home directory (or a folder above it) as a session's folder",
    )


def require_sdk() -> None:
    try:
        import acp  # noqa: F401
    except ImportError:
        raise SdkMissing(
            f"`{program_name()} acp` needs the Agent Client Protocol SDK, an optional extra: "
            "pip install 'vllm-bot[acp]' (from a checkout: pip install -e '.[acp]')"
        ) from None


def run(args: argparse.Namespace) -> int:
    require_sdk()

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.debug else logging.WARNING,
        format="vllm-bot acp: %(levelname)s %(name)s: %(message)s",
    )
    read_fd, write_fd = claim_stdio()
    serve(args, read_fd, write_fd)
    return 0


def serve(args: argparse.Namespace, read_fd: int, write_fd: int) -> None:
    """The protocol in a thread of its own; the sessions' work on this (the main) thread."""
    from .server import AcpAgent

    worker = Worker()
    agent = AcpAgent(args, worker)
    failure: list[BaseException] = []

    def protocol() -> None:
        try:
            asyncio.run(_listen(agent, read_fd, write_fd))
        except BaseException as e:  # reported on the main thread
            failure.append(e)
        finally:
            agent.stop_tasks()  # the editor is gone: Ctrl-C for what still runs
            worker.stop()

    thread = threading.Thread(target=protocol, name="acp-protocol", daemon=True)
    thread.start()
    try:
        worker.serve()
    finally:
        for session in agent.sessions.values():
            session.close()
    thread.join(timeout=5)
    if failure:
        raise failure[0]


async def _listen(agent: Any, read_fd: int, write_fd: int) -> None:
    import acp

    transport = LineTransport(read_fd, write_fd)
    await acp.run_agent(agent, transport)
