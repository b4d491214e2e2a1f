"""Run a batch: N tasks in flight, each in its own agent process, results written as they finish.

Workers take tasks from a queue; the main thread draws the progress and waits. A task that crashes
or times out ends with its own result and the others go on. Ctrl-C (or SIGTERM) stops every agent
and command (their tasks are not recorded as finished, and their copies are removed), so running the
same command again resumes with exactly the tasks that had not finished.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import Config
from .copies import prune, repositories, uncommitted
from .processes import Processes
from .progress import Progress
from .results import ResultsFile, results_name
from .server import ServerWatch
from .settings import BatchSettings, child_env, write_child_config
from .taskrun import Context, TaskRun
from .tasks import TaskSpec


class View(Protocol):
    """The progress display (ui/batch_view.py)."""

    def note(self, text: str) -> None: ...

    def start(self) -> None: ...

    def refresh(self, snapshot: dict[str, Any]) -> None: ...

    def stop(self, snapshot: dict[str, Any]) -> None: ...


@dataclass
class Outcome:
    rows: list[dict[str, Any]]  # every finished task of this batch (this shard), earlier runs included
    interrupted: bool
    not_run: list[str] = field(default_factory=list)  # ids without a result
    server: dict[str, float | None] = field(default_factory=dict)


class Batch:
    def __init__(self, settings: BatchSettings, config: Config, specs: list[TaskSpec], view: View) -> None:
        self.settings = settings
        self.config = config
        self.specs = specs
        self.view = view
        self.procs = Processes()
        self.results = ResultsFile(settings.output_dir / results_name(settings.shard))

    def run(self) -> Outcome:
        self.settings.output_dir.mkdir(parents=True, exist_ok=True)
        earlier = self._earlier()
        todo = [spec for spec in self.specs if spec.id not in earlier]
        self._warn_uncommitted(todo)
        ctx = Context(
            self.settings,
            write_child_config(self.config, self.settings),
            child_env(self.config),
            self.procs,
            self.config,
        )
        server = self._watch()
        progress = Progress(len(self.specs), list(earlier.values()), server)
        interrupted = self._work(todo, ctx, progress)
        if server is not None:
            server.stop()
        self.results.close()
        prune(repositories({s.workspace for s in self.specs}))
        self.view.stop(progress.snapshot())
        rows = [*earlier.values(), *progress.finished]
        done = {row["id"] for row in rows}
        figures = {
            "tokens_per_second": server.tokens_per_second(overall=True) if server else None,
            "cache_hit_rate": server.cache_hit_rate() if server else None,
        }
        return Outcome(rows, interrupted, [s.id for s in self.specs if s.id not in done], figures)

    def _earlier(self) -> dict[str, dict[str, Any]]:
        """Results of earlier runs of this batch that still belong to it."""
        earlier, note = self.results.load()
        if note:
            self.view.note(note)
        specs = {spec.id: spec for spec in self.specs}
        for task_id, row in earlier.items():
            if task_id in specs and row.get("task_hash") != specs[task_id].fingerprint():
                self.view.note(
                    f"task {task_id!r} changed since its result was written; the result stands "
                    f"(remove its line from {self.results.path} to run it again)"
                )
        return {task_id: row for task_id, row in earlier.items() if task_id in specs}

    def _warn_uncommitted(self, todo: list[TaskSpec]) -> None:
        for repo in repositories({s.workspace for s in todo}):
            if uncommitted(repo):
                self.view.note(
                    f"{repo.work_tree} has uncommitted changes: tasks get a copy of its last commit only"
                )

    def _watch(self) -> ServerWatch | None:
        if not self.config.telemetry.metrics:
            return None
        watch = ServerWatch(self.config.vllm.base_url, self.config.vllm.api_key).start()
        return watch if watch.first is not None else None

    def _work(self, todo: list[TaskSpec], ctx: Context, progress: Progress) -> bool:
        """Run `todo` on the workers; True when interrupted."""
        tasks: queue.Queue[TaskSpec] = queue.Queue()
        for spec in todo:
            tasks.put(spec)
        workers = [
            threading.Thread(
                target=self._worker, args=(tasks, ctx, progress), name=f"batch-worker-{i}", daemon=True
            )
            for i in range(min(self.settings.workers, len(todo)))
        ]
        self.view.start()
        with _sigterm_as_interrupt():
            try:
                for worker in workers:
                    worker.start()
                while any(worker.is_alive() for worker in workers):
                    self.view.refresh(progress.snapshot())
                    time.sleep(0.25)
                return False
            except KeyboardInterrupt:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not orphan agents
                self.view.note("stopping: ending the running tasks (they will run again next time)")
                self.procs.stop_all()
                for worker in workers:
                    worker.join()
                return True

    def _worker(self, tasks: queue.Queue[TaskSpec], ctx: Context, progress: Progress) -> None:
        while not self.procs.stopping.is_set():
            try:
                spec = tasks.get_nowait()
            except queue.Empty:
                return
            run = TaskRun(spec, ctx)
            progress.begin(spec.id, run)
            row = None
            try:
                row = run.run()
                if row is not None:
                    self.results.append(row)
            finally:
                progress.end(spec.id, row)


class _sigterm_as_interrupt:
    """SIGTERM stops a batch like Ctrl-C does (in the main thread only; elsewhere nothing changes)."""

    def __enter__(self) -> None:
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self.previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _interrupt)
            self.previous[signal.SIGINT] = signal.getsignal(signal.SIGINT)

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
