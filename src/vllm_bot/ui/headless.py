"""`-p TASK`: one task without a terminal conversation, for scripts.

stdout carries only the result: the final answer (`text`), one JSON object (`json`) or one JSON event
per line (`stream-json`); progress and errors go to stderr. Nothing asks: a call that needs approval
is refused with a message to the model unless --yes. Ctrl-C (SIGINT) stops the running command or
reply and ends the task with exit code 3.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..errors import EXIT_LIMIT, EXIT_OK, UserFacingError
from .json_out import ResultCollector, writer_for


def run_headless(session: Any, task: str, output_format: str = "text", out: TextIO | None = None) -> int:
    """Run `task` in `session` and report it on `out` (stdout) in `output_format`; the exit code."""
    out = out or sys.stdout
    collector = ResultCollector()
    writer = writer_for(output_format, out, debug=session.config.agent.debug)
    if writer is not None:  # the plain answer needs no record of every call
        session.add_consumer(collector)
        session.add_consumer(writer)
    try:
        session.start()
        session.mcp.sync(wait=True)
        task = session.task_message(task)
        with session.agent.cancel.sigint():
            outcome = session.agent.run(task)
    except UserFacingError as e:
        if writer is not None:
            writer.finish(collector.result(error=str(e), exit_code=e.exit_code))
        raise
    except KeyboardInterrupt:
        if writer is not None:
            writer.finish(
                collector.result(error="interrupted by the user", exit_code=EXIT_LIMIT, reason="interrupted")
            )
        raise
    finally:
        session.close()
    if outcome.reason == "interrupted":
        print("vllm-bot: interrupted", file=sys.stderr)
    if writer is not None:
        writer.finish(collector.result())
    elif outcome.exit_code == EXIT_OK:
        out.write(outcome.answer + "\n")
        out.flush()
    return outcome.exit_code
