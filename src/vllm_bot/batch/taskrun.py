"""One task of a batch, start to finish: copy the workspace, run `setup`, run the agent, keep its diff,
run `check`, keep the session and trace, remove the copy, and return the task's result row.

Everything a task leaves is in its own directory under `tasks/`: `events.jsonl` (the agent's
stream-json output), `agent.log` (its stderr: the DEBUG log), `setup.log`, `check.log`,
`changes.diff`, `sessions/` and `traces/`. A stopped batch returns None: the task is not finished.
An agent that stopped on an error while the server does not answer raises `ServerDown` (an outage is
not the task's result: outage.py); one that never got a reply is an `error`, whatever its check says.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..config import Config
from ..config.statedir import STATE_DIR_NAME
from .confine import confined, place_files
from .copies import Copy, CopyError, make_copy, remove_copy, repo_of
from .outage import ServerDown
from .processes import Exit, Processes, Stopped, run_agent, run_shell
from .settings import BatchSettings, agent_argv
from .tally import Tally
from .tasks import TaskSpec


@dataclass
class Context:
    """What every task of one batch shares."""

    settings: BatchSettings
    config_path: Path
    env: dict[str, str]
    procs: Processes
    config: Config  # the user's: the sandbox of each task's setup and check
    server_answers: Callable[[], bool] = lambda: True  # asked when an agent stopped on an error


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def blank_row(spec: TaskSpec, status: str, **extra: Any) -> dict[str, Any]:
    """A result row: every field, `extra` on top of the empty defaults."""
    row: dict[str, Any] = {
        "id": spec.id,
        "status": status,
        "passed": status == "passed",
        "exit_reason": None,
        "exit_code": None,
        "check_passed": None,
        "iterations": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cached_tokens": None,
        "wall_seconds": 0.0,
        "tool_calls": 0,
        "tool_errors": 0,
        "malformed_calls": 0,
        "unparsed_calls": 0,
        "refused_calls": 0,
        "calls_from_text": 0,
        "mode": None,
        "fell_back": False,
        "model": None,
        "error": None,
        "task_hash": spec.fingerprint(),
        "output": f"tasks/{spec.dir_name()}",
    }
    return {**row, **extra}


class TaskRun:
    def __init__(self, spec: TaskSpec, ctx: Context) -> None:
        self.spec = spec
        self.ctx = ctx
        self.dir = ctx.settings.output_dir / "tasks" / spec.dir_name()
        self.tally = Tally()  # read live by the progress display
        self.started = time.monotonic()
        self.copy: Copy | None = None

    def run(self) -> dict[str, Any] | None:
        """The result row, or None when the batch stopped before the task finished."""
        started_at = now()
        self._fresh_dir()
        try:
            row = self._steps()
        except Stopped:
            row = None
        except CopyError as e:
            row = self._row("error", error=str(e))
        finally:
            self._clean_up()
        if row is None or self.ctx.procs.stopping.is_set():
            return None
        return {**row, "started_at": started_at, "finished_at": now()}

    def _fresh_dir(self) -> None:
        """An interrupted earlier attempt leaves a directory (maybe a worktree): start clean."""
        if self.dir.exists():
            remove_copy(self.dir / "workspace", repo_of(self.spec.workspace))
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)

    def _steps(self) -> dict[str, Any]:
        s = self.ctx.settings
        self.copy = make_copy(self.spec.workspace, self.dir / "workspace", exclude=[s.output_dir])
        workspace = self.copy.workspace
        if self.spec.setup:
            setup = self._shell(self.spec.setup, workspace, self.dir / "setup.log")
            self._check_stopped()
            if setup.returncode != 0:
                how = "timed out" if setup.timed_out else f"exited {setup.returncode}"
                return self._row("setup_failed", error=f"setup {how} (see setup.log)")
        self.copy.base_tree = self.copy.snapshot(self.dir / "snapshot.index")
        agent = run_agent(
            self.ctx.procs,
            agent_argv(s, self.ctx.config_path, workspace),
            task=self.spec.task,
            env=self.ctx.env,
            cwd=self.dir,
            events=self.dir / "events.jsonl",
            log=self.dir / "agent.log",
            tally=self.tally,
            timeout=s.kill_after,
        )
        agent_seconds = time.monotonic() - self.started
        self._check_stopped()
        failed = (self.tally.result or {}).get("exit_reason") == "error"
        if failed and not self.ctx.server_answers():
            raise ServerDown()
        (self.dir / "changes.diff").write_text(self.copy.changes(self.dir / "snapshot.index"))
        check = None
        if self.spec.check and not (failed and self.tally.replies == 0):  # no reply: nothing to check
            if self.spec.check_files is not None:
                place_files(self.spec.check_files, workspace)
            check = self._shell(self.spec.check, workspace, self.dir / "check.log")
            self._check_stopped()
        return self._agent_row(agent, check, agent_seconds)

    def _shell(self, command: str, workspace: Path, log: Path) -> Exit:
        """The task's setup or check, in the sandbox (confine.py)."""
        hidden = [self.ctx.config_path, *(f for f in [self.spec.check_files] if f is not None)]
        with confined(self.ctx.config, workspace, network=self.spec.network, hidden=hidden) as box:
            timeout = self.ctx.settings.check_timeout
            return run_shell(self.ctx.procs, command, workspace, log, timeout, wrap=box.wrap, env=box.env)

    def _check_stopped(self) -> None:
        if self.ctx.procs.stopping.is_set():
            raise Stopped()

    def _agent_row(self, agent: Exit, check: Exit | None, agent_seconds: float) -> dict[str, Any]:
        result = self.tally.result
        check_passed = None if check is None else check.returncode == 0
        error: str | None
        if agent.timed_out:
            status, error = "timeout", f"killed after {self.ctx.settings.kill_after:g} s"
        elif result is None:
            status, error = "crashed", f"the agent exited {agent.returncode} without a result (see agent.log)"
        else:
            reason = result.get("exit_reason")
            status = {"time_budget": "timeout", "error": "error"}.get(str(reason), "failed")
            error = result.get("error")
        passed = check_passed if check is not None else (result is not None and result.get("exit_code") == 0)
        if check is not None and check.timed_out:
            error = (error + "; " if error else "") + "the check timed out"
        return self._row(
            "passed" if passed else status,
            error=error,
            exit_code=result.get("exit_code") if result else agent.returncode,
            exit_reason=result.get("exit_reason") if result else status,
            check_passed=check_passed,
            agent_seconds=round(agent_seconds, 3),
        )

    def _row(self, status: str, **extra: Any) -> dict[str, Any]:
        t, result = self.tally, self.tally.result or {}
        usage = result.get("usage") or {}
        return blank_row(
            self.spec,
            status,
            iterations=result.get("iterations", t.iteration),
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            cached_tokens=usage.get("cached_tokens"),
            wall_seconds=round(time.monotonic() - self.started, 3),
            tool_calls=t.calls,
            tool_errors=t.tool_errors,
            malformed_calls=t.malformed,
            unparsed_calls=t.unparsed,
            refused_calls=t.refused,
            calls_from_text=t.calls_from_text,
            mode=t.mode,
            fell_back=t.fell_back,
            model=result.get("model"),
            **extra,
        )

    def _clean_up(self) -> None:
        """Keep the agent's session and trace; remove the copy unless asked to keep it."""
        if self.copy is None:
            return
        state = self.copy.workspace / STATE_DIR_NAME
        for name in ("sessions", "traces"):
            if (state / name).is_dir():
                shutil.move(str(state / name), str(self.dir / name))
        (self.dir / "snapshot.index").unlink(missing_ok=True)
        if not self.ctx.settings.keep_workspaces or self.ctx.procs.stopping.is_set():
            remove_copy(self.copy.root, self.copy.source)
