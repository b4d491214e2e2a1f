"""A task on a Ray node (`batch --ray`): the same TaskRun as here, in a scratch folder of the node.

The node unpacks the workspace it was sent (or uses the task's path on shared storage), runs the
task's agent, setup and check with its own sandbox and its own view of the model server, and sends
back the result row and the task's directory. A cancel (`ray.cancel`: KeyboardInterrupt here) stops
the agent and its commands as Ctrl-C does in a batch; the agent dies with this worker in any case
(processes.py). Imported on the nodes: nothing in it imports Ray.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from .outage import ServerDown, server_answers
from .parcel import pack_dir, unpack, unpack_workspace
from .processes import Processes
from .settings import BatchSettings, child_env, write_child_config
from .taskrun import Context, TaskRun
from .tasks import TaskSpec

RESULT_LIMIT = 2**31  # bytes of a task's directory sent back (its logs and trace)
SCRATCH = "vllm-bot-task-"  # + the worker's pid: the task's folder on the node


@dataclass
class NodeJob:
    spec: TaskSpec  # the driver's paths: used as they are for a task on shared storage
    settings: BatchSettings
    config: Config


@dataclass
class NodeResult:
    node: str  # the host the task ran on
    node_id: str  # Ray's id of that node
    row: dict[str, Any] | None = None  # None: stopped, or the server was away (`outage`)
    files: bytes = b""  # the task's directory, packed
    outage: bool = False


def here() -> tuple[str, str]:
    """(host name, Ray node id) of this worker."""
    try:
        import ray

        node_id = ray.get_runtime_context().get_node_id()
    except (ImportError, AttributeError, RuntimeError):
        node_id = ""
    return socket.gethostname(), node_id


def probe(base_url: str, api_key: str | None) -> tuple[bool, str]:
    """Does the server answer from this node? (answers, host name)"""
    return server_answers(base_url, api_key), socket.gethostname()


def scratch() -> Path:
    """A new scratch folder for a task, named for this worker's pid; those of workers that died (a
    node lost, a task cancelled by force) are removed first."""
    for old in Path(tempfile.gettempdir()).glob(f"{SCRATCH}*"):
        pid = old.name[len(SCRATCH) :].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH}{os.getpid()}-"))


def run_task(job: NodeJob, source: bytes | None, check_files: bytes | None) -> NodeResult:
    host, node_id = here()
    root = scratch()
    try:
        spec = job.spec
        if source is not None:
            spec = dataclasses.replace(spec, workspace=unpack_workspace(source, root / "source"))
        if check_files is not None:
            unpack(check_files, root / "check_files")
            spec = dataclasses.replace(spec, check_files=root / "check_files")
        settings = dataclasses.replace(job.settings, output_dir=root / "out", ray=None)
        settings.output_dir.mkdir()
        vllm = job.config.vllm
        procs = Processes()
        ctx = Context(
            settings,
            write_child_config(job.config, settings),
            child_env(job.config),
            procs,
            job.config,
            lambda: server_answers(vllm.base_url, vllm.api_key),
        )
        run = TaskRun(spec, ctx)
        outcome = _run_stoppable(run, procs)
        if outcome is None or outcome == "outage":
            return NodeResult(host, node_id, outage=outcome == "outage")
        files = pack_dir(run.dir, RESULT_LIMIT, skip={"workspace"})
        return NodeResult(host, node_id, outcome, files)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_stoppable(run: TaskRun, procs: Processes) -> Any:
    """The row, "outage", or None when cancelled; the task runs in a thread so a cancel can stop it."""
    box: list[Any] = []

    def attempt() -> None:
        try:
            box.append(run.run())
        except ServerDown:
            box.append("outage")
        except BaseException as e:  # re-raised below, in the task's own thread: Ray reports it
            box.append(e)

    thread = threading.Thread(target=attempt, name="batch-task", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt:
        procs.stop_all()
        thread.join()
        return None
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
