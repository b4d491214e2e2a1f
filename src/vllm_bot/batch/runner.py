"""Run a batch: N tasks in flight, each in its own agent process, results written as they finish.

Workers take tasks from a queue; the main thread draws the progress and waits. A task runs where the
batch's place says: here (`LocalPlace`: an agent process per task) or on a Ray cluster (raypool.py).
A task that crashes or times out ends with its own result and the others go on. A server outage is
no task's result: the task goes back to the queue and the queue pauses until the server answers
(outage.py); a Ray node lost mid-task gives its task back too. Ctrl-C (or SIGTERM) stops every agent
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
from ..model.client import ModelClient
from .copies import prune, repositories, uncommitted
from .outage import Outage, ServerDown, server_answers
from .processes import Processes
from .progress import Progress
from .results import ResultsFile, results_name
from .server import ServerWatch
from .settings import BatchSettings, child_env, write_child_config
from .taskrun import Context, TaskRun, blank_row
from .tasks import TaskSpec


class View(Protocol):
    """The progress display (ui/batch_view.py)."""

    def note(self, text: str) -> None: ...

    def start(self) -> None: ...

    def refresh(self, snapshot: dict[str, Any]) -> None: ...

    def stop(self, snapshot: dict[str, Any]) -> None: ...


class Task(Protocol):
    """One task in flight: read by the progress display, `run()` by a worker."""

    started: float

    @property
    def tally(self) -> Any: ...

    def run(self) -> dict[str, Any] | None: ...


class Place(Protocol):
    """Where tasks run: `task(spec)` for each; `stop()` ends the running ones (unrecorded)."""

    def task(self, spec: TaskSpec) -> Task: ...

    def server_answers(self) -> bool: ...

    def stop(self) -> None: ...


class GiveBack(Exception):
    """The task did not finish for a reason outside it (its Ray node was lost): it runs again."""


class Fatal(Exception):
    """The batch cannot go on (a Ray node cannot run our code): stop, exit 1, record nothing more."""


@dataclass
class Outcome:
    rows: list[dict[str, Any]]  # every finished task of this batch (this shard), earlier runs included
    interrupted: bool
    not_run: list[str] = field(default_factory=list)  # ids without a result
    server: dict[str, float | None] = field(default_factory=dict)
    stopped: str | None = None  # why the batch stopped early (the server stayed away): exit 1
    wall_seconds: float = 0.0  # this run's


class LocalPlace:
    """Every task here: its own agent process, in its own copy of its workspace."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def task(self, spec: TaskSpec) -> TaskRun:
        return TaskRun(spec, self.ctx)

    def server_answers(self) -> bool:
        return server_answers(self.ctx.config.vllm.base_url, self.ctx.config.vllm.api_key)

    def stop(self) -> None:
        self.ctx.procs.stop_all()


class Batch:
    def __init__(self, settings: BatchSettings, config: Config, specs: list[TaskSpec], view: View) -> None:
        self.settings = settings
        self.config = config
        self.specs = specs
        self.view = view
        self.procs = Processes()
        self.results = ResultsFile(settings.output_dir / results_name(settings.shard))
        self.ray: Any = None  # the Ray place (raypool.RayPlace), once connected
        self._earlier: dict[str, dict[str, Any]] | None = None

    def earlier(self) -> dict[str, dict[str, Any]]:
        """Results of earlier runs of this batch that still belong to it (ResultsError: unreadable)."""
        if self._earlier is None:
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
            self._earlier = {task_id: row for task_id, row in earlier.items() if task_id in specs}
        return self._earlier

    def todo(self) -> list[TaskSpec]:
        return [spec for spec in self.specs if spec.id not in self.earlier()]

    def connect(self) -> None:
        """Look at the server before anything starts (UserFacingError: exit 1): from here, or with
        --ray, from a node of the cluster (connecting to it first)."""
        if self.settings.ray is None:
            ModelClient(self.config.vllm, system_prompt=lambda text_mode, tools: "").resolve_model()
            return
        from .raypool import RayPlace  # an import cycle: raypool raises this module's Fatal and GiveBack

        self.ray = RayPlace(self.settings.ray, self.view.note)
        self.ray.check_server(self.config)

    def run(self) -> Outcome:
        started = time.monotonic()
        self.settings.output_dir.mkdir(parents=True, exist_ok=True)
        earlier = self.earlier()
        todo = self.todo()
        self._warn_uncommitted(todo)
        place = self._place()
        server = self._watch()
        progress = Progress(len(self.specs), list(earlier.values()), server)
        interrupted, stopped = self._work(todo, place, progress)
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
        not_run = [s.id for s in self.specs if s.id not in done]
        return Outcome(rows, interrupted, not_run, figures, stopped, time.monotonic() - started)

    def _place(self) -> Place:
        ctx = Context(
            self.settings,
            write_child_config(self.config, self.settings),
            child_env(self.config),
            self.procs,
            self.config,
        )
        if self.settings.ray is None:
            place: Place = LocalPlace(ctx)
        else:
            if self.ray is None:
                self.connect()
            place = self.ray.bind(ctx, self.procs.stopping)
        ctx.server_answers = place.server_answers
        return place

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

    def _work(self, todo: list[TaskSpec], place: Place, progress: Progress) -> tuple[bool, str | None]:
        """Run `todo` on the workers: (interrupted, why the batch stopped early)."""
        queue_ = Queue(todo)
        outage = Outage(place.server_answers, self.settings.outage_wait, self.view.note)
        progress.outage = outage
        work = _Work(self, place, queue_, outage, progress)
        workers = [
            threading.Thread(target=work.worker, name=f"batch-worker-{i}", daemon=True)
            for i in range(min(self.settings.workers, len(todo)))
        ]
        self.view.start()
        with _sigterm_as_interrupt():
            try:
                for worker in workers:
                    worker.start()
                while any(w.is_alive() for w in workers) and not (outage.gave_up.is_set() or work.fatal):
                    self.view.refresh(progress.snapshot())
                    time.sleep(0.25)
                stopped = work.fatal or (self._gave_up_sentence(outage) if outage.gave_up.is_set() else None)
                if stopped is not None:
                    self.view.note(f"stopping: {stopped}")
                    self._stop(place, workers)
                return False, stopped
            except KeyboardInterrupt:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not orphan agents
                self.view.note("stopping: ending the running tasks (they will run again next time)")
                self._stop(place, workers)
                return True, None

    def _stop(self, place: Place, workers: list[threading.Thread]) -> None:
        self.procs.stopping.set()
        place.stop()
        for worker in workers:
            worker.join()

    def _gave_up_sentence(self, outage: Outage) -> str:
        return (
            f"the server at {self.config.vllm.base_url} has not answered for {outage.max_wait:g} s "
            "(--outage-wait); the tasks not run stay unrun, and the same command runs them"
        )


class Queue:
    """The tasks left: taken by workers, given back after an outage or a lost node."""

    def __init__(self, todo: list[TaskSpec]) -> None:
        self._tasks: queue.Queue[TaskSpec] = queue.Queue()
        for spec in todo:
            self._tasks.put(spec)
        self._out = 0  # taken and not yet finished or given back
        self._lock = threading.Lock()

    def take(self) -> TaskSpec | None:
        """The next task; None when none is left and none is out (a given-back one may come)."""
        while True:
            with self._lock:
                try:
                    spec = self._tasks.get_nowait()
                except queue.Empty:
                    if self._out == 0:
                        return None
                else:
                    self._out += 1
                    return spec
            time.sleep(0.2)

    def done(self, spec: TaskSpec, give_back: bool = False) -> None:
        with self._lock:
            self._out -= 1
            if give_back:
                self._tasks.put(spec)


MAX_GIVEN_BACK = 3  # a task whose node is lost this often is recorded as crashed (it may be the cause)


class _Work:
    """What the workers share: the place, the queue, the pause, and a fatal error if one came."""

    def __init__(self, batch: Batch, place: Place, tasks: Queue, outage: Outage, progress: Progress) -> None:
        self.batch, self.place, self.tasks, self.outage, self.progress = batch, place, tasks, outage, progress
        self.stopping = batch.procs.stopping
        self.fatal: str | None = None
        self.given_back: dict[str, int] = {}

    def worker(self) -> None:
        while self.outage.wait(self.stopping) and not self.fatal:
            spec = self.tasks.take()
            if spec is None:
                return
            give_back = False
            try:
                give_back = self._one(spec)
            finally:
                self.tasks.done(spec, give_back and not self.stopping.is_set())

    def _one(self, spec: TaskSpec) -> bool:
        """Run one task and record its result; True when it goes back to the queue."""
        run = self.place.task(spec)
        self.progress.begin(spec.id, run)
        row, give_back = None, False
        try:
            row, give_back = self._attempt(spec, run)
        finally:
            self.progress.end(spec.id, row)
        if row is not None:
            self.batch.results.append(row)
        return give_back

    def _attempt(self, spec: TaskSpec, run: Task) -> tuple[dict[str, Any] | None, bool]:
        """(the row to record, give the task back?)"""
        try:
            row = run.run()
        except ServerDown:
            self.outage.report(self.stopping)
            return None, True
        except GiveBack as e:
            times = self.given_back[spec.id] = self.given_back.get(spec.id, 0) + 1
            if times >= MAX_GIVEN_BACK:
                return blank_row(spec, "crashed", error=f"{e} ({times} times)"), False
            self.batch.view.note(f"task {spec.id!r}: {e}; it goes back to the queue")
            return None, True
        except Fatal as e:
            self.fatal = str(e)
            return None, True
        if row is not None and row.get("exit_reason") == "error" and self.outage.overlapped(run.started):
            return None, True  # it failed while the server was away (and back before it could tell)
        return row, False


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
