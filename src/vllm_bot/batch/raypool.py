"""`batch --ray [ADDRESS]`: each task a Ray task, on whichever node has a free slot.

The batch here stays the driver: it keeps the queue, the results file (resumable as always), the
progress and the pause while the server is away. A task carries its workspace to the node as an
archive (parcel.py; shared once per workspace through Ray's object store, within --ray-max-archive),
unless its line says `"shared": true` (the same path on every node). On the node (node.py) the agent
and its check run as they do here, in that node's sandbox, against the configured server URL as the
node resolves it (`localhost` is each node's own server). A node lost mid-task gives its task back to
the queue; Ctrl-C cancels the Ray tasks. Ray is imported only here, and only with --ray.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UserFacingError, unreachable_message
from .node import NodeJob, NodeResult, probe, run_task
from .outage import ServerDown
from .parcel import ParcelError, pack_dir, pack_workspace, replace_dir
from .processes import GRACE
from .rayconf import INSTALL, RaySettings, task_options
from .runner import Fatal, GiveBack
from .tally import Tally
from .taskrun import Context, blank_row
from .tasks import TaskSpec


class RayPlace:
    """The connection to the cluster; `bind()` gives the batch's Place for one run."""

    def __init__(self, settings: RaySettings, note: Callable[[str], None]) -> None:
        import ray

        self.ray = ray
        self.settings = settings
        self.note = note
        if not ray.is_initialized():
            try:
                _reachable(settings.address)  # ray.init waits for minutes on an address nobody serves
                ray.init(address=settings.address, logging_level=logging.WARNING, log_to_driver=False)
            except (ConnectionError, OSError, RuntimeError, ValueError) as e:
                raise UserFacingError(
                    f"Cannot connect to the Ray cluster at {settings.address} ({e}). Start one with "
                    "`ray start --head`, or pass its address: --ray HOST:6379"
                ) from None
        self.remote_task = ray.remote(run_task)
        self.remote_probe = ray.remote(probe)

    def slots(self) -> int:
        """Tasks the cluster can hold at once with the resources each takes."""
        total = self.ray.cluster_resources()
        need = {k: v for k, v in self.settings.resources.items() if v > 0}
        if not need:
            return max(1, int(total.get("CPU", 1)))
        return max(1, min(int(total.get(name, 0) // amount) for name, amount in need.items()))

    def answers(self, config: Any, node_id: str | None = None) -> tuple[bool, str]:
        """Does the server answer from a node (that one, when it still lives)?"""
        options: dict[str, Any] = {"num_cpus": 0, "max_retries": 1}
        if node_id:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=True)
        ref = self.remote_probe.options(**options).remote(config.vllm.base_url, config.vllm.api_key)
        try:
            return tuple(self.ray.get(ref, timeout=60))  # type: ignore[return-value]
        except self.ray.exceptions.RayError as e:
            return False, f"no node ran the probe: {type(e).__name__}"

    def check_server(self, config: Any) -> None:
        ok, host = self.answers(config)
        if not ok:
            raise UserFacingError(unreachable_message(config.vllm.base_url, f"from Ray node {host}"))

    def bind(self, ctx: Context, stopping: threading.Event) -> RayTasks:
        if self.settings.workers is None:
            ctx.settings.workers = self.slots()
        self.note(f"Ray: {ctx.settings.workers} tasks in flight, each taking {self.settings.resources}")
        return RayTasks(self, ctx, stopping)


def _reachable(address: str, timeout: float = 10.0) -> None:
    """OSError unless HOST:PORT accepts a connection (other forms, `auto` and `ray://`, Ray checks)."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return
    socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()


class RayTasks:
    """The batch's Place on a cluster: workspaces packed once each, tasks run remotely."""

    def __init__(self, place: RayPlace, ctx: Context, stopping: threading.Event) -> None:
        self.place, self.ray, self.ctx, self.stopping = place, place.ray, ctx, stopping
        self.options = task_options(place.settings.resources)
        self.last_node: str | None = None  # the node that last found the server away
        self._parcels: dict[Path, Any] = {}  # a folder -> the ObjectRef of its archive
        self._lock = threading.Lock()

    def task(self, spec: TaskSpec) -> RemoteRun:
        return RemoteRun(self, spec)

    def server_answers(self) -> bool:
        return self.place.answers(self.ctx.config, self.last_node)[0]

    def stop(self) -> None:
        """Each worker cancels its own Ray task once it sees `stopping`."""

    def parcel(self, folder: Path, workspace: bool) -> Any:
        """The archive of a workspace (or a check_files folder), packed and put once per batch."""
        with self._lock:
            if folder not in self._parcels:
                limit = self.place.settings.max_archive
                data = (
                    pack_workspace(folder, [self.ctx.settings.output_dir], limit)
                    if workspace
                    else pack_dir(folder, limit, what=str(folder))
                )
                self._parcels[folder] = self.ray.put(data)
            return self._parcels[folder]


class RemoteRun:
    """One task in flight on the cluster, as the progress display and a worker see it."""

    def __init__(self, tasks: RayTasks, spec: TaskSpec) -> None:
        self.tasks, self.spec = tasks, spec
        self.started = time.monotonic()
        self.tally = Tally()  # stays empty: the agent's events are on its node

    def run(self) -> dict[str, Any] | None:
        t, spec = self.tasks, self.spec
        try:
            source = None if spec.shared else t.parcel(spec.workspace, True)
            checks = None if spec.shared or spec.check_files is None else t.parcel(spec.check_files, False)
        except ParcelError as e:
            return blank_row(spec, "error", error=str(e))
        job = NodeJob(spec, t.ctx.settings, t.ctx.config)
        ref = t.place.remote_task.options(**t.options).remote(job, source, checks)
        if not self._wait(ref):
            return None
        try:
            result: NodeResult = t.ray.get(ref)
        except t.ray.exceptions.TaskCancelledError:
            return None
        except (t.ray.exceptions.RayTaskError, t.ray.exceptions.RaySystemError) as e:
            raise Fatal(f"a Ray node could not run task {spec.id!r} (is {INSTALL} there?): {e}") from None
        except t.ray.exceptions.RayError as e:
            raise GiveBack(f"its Ray node was lost ({type(e).__name__})") from None
        if result.outage:
            t.last_node = result.node_id
            raise ServerDown()
        if result.row is None:
            return None
        replace_dir(result.files, t.ctx.settings.output_dir / "tasks" / spec.dir_name())
        return {**result.row, "task_hash": spec.fingerprint(), "node": result.node, "node_id": result.node_id}

    def _wait(self, ref: Any) -> bool:
        """Wait for the task; False when the batch stopped it (cancelled: its agent stopped, then
        its worker killed if it lingers)."""
        ray = self.tasks.ray
        while not ray.wait([ref], timeout=0.5)[0]:
            if self.tasks.stopping.is_set():
                ray.cancel(ref)
                if not ray.wait([ref], timeout=GRACE + 10)[0]:
                    ray.cancel(ref, force=True)
                return False
        return True
