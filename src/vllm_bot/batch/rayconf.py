"""The flags of `batch --ray` and what they settle: where the cluster is, what one task takes on a
node, how large a workspace may travel. Ray itself is imported only to check it is installed."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from typing import Any

from ..cliargs import UsageError

INSTALL = "pip install 'vllm-bot[ray]'"


@dataclass
class RaySettings:
    address: str  # as ray.init takes it: "auto", "HOST:PORT", "ray://HOST:10001"
    resources: dict[str, float] = field(default_factory=lambda: {"CPU": 1.0})  # per task
    max_archive: int = 200_000_000  # bytes of files a task's workspace may carry to its node
    workers: int | None = None  # tasks in flight; None: as many as the cluster has slots


def ray_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="run each task as a Ray task on a cluster (ADDRESS as `ray start` printed it, or "
        f"ray://HOST:10001; default: this machine's cluster or RAY_ADDRESS); needs {INSTALL}",
    )
    parser.add_argument(
        "--ray-resources",
        default="CPU=1",
        metavar="NAME=AMOUNT,...",
        help="what one task takes on a node (default CPU=1; also memory in bytes, GPU, or a resource "
        "of `ray start --resources`)",
    )
    parser.add_argument(
        "--ray-max-archive",
        type=float,
        default=200,
        metavar="MB",
        help='largest workspace a task carries to its node (default 200; larger: "shared": true)',
    )


def ray_settings(args: argparse.Namespace) -> RaySettings | None:
    """The --ray flags, checked (UsageError); None without --ray."""
    if args.ray is None:
        return None
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(f"--ray needs Ray installed: {INSTALL}") from None
    if args.keep_workspaces:
        raise UsageError("--keep-workspaces keeps copies on this machine; with --ray they are on the nodes")
    resources: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in args.ray_resources.split(","))):
        match = re.fullmatch(r"([A-Za-z_][\w.-]*)\s*=\s*([0-9.]+(?:e[0-9]+)?)", part)
        if not match:
            raise UsageError(f"--ray-resources: {part!r} is not NAME=AMOUNT (e.g. CPU=1,memory=4e9)")
        resources[match.group(1)] = float(match.group(2))
    if args.ray_max_archive <= 0:
        raise UsageError(f"--ray-max-archive must be above 0, got {args.ray_max_archive:g}")
    return RaySettings(args.ray, resources, int(args.ray_max_archive * 1e6), args.workers)


def task_options(resources: dict[str, float]) -> dict[str, Any]:
    """Ray's options for one task: CPU, GPU and memory by their own names; no retries of ours (a task
    given back goes through our queue, where a pause can hold it)."""
    custom = {k: v for k, v in resources.items() if k not in ("CPU", "GPU", "memory")}
    options: dict[str, Any] = {"num_cpus": resources.get("CPU", 0), "max_retries": 0}
    if "GPU" in resources:
        options["num_gpus"] = resources["GPU"]
    if "memory" in resources:
        options["memory"] = resources["memory"]
    if custom:
        options["resources"] = custom
    return options
