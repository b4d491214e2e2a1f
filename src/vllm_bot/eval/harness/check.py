"""The check of an eval task: proves that the task's tests ran and passed, not only that a command
exited 0. Run from outside the workspace, as `python -I check.py` (nothing in the workspace can
shadow it), in the workspace (the current directory) after batch copied the hidden tests in:

    check.py --runner python|node|bash --expect N TESTFILE=SHA256 [TESTFILE=SHA256 ...]

It refuses a test file that is not the one shipped (changed, replaced by a link or a folder), makes a
nonce, and starts the language's runner beside this file with a clean environment, the nonce and the
tests' sources on its stdin (nothing of them in its arguments or environment, nothing read twice).
The check passes only when the runner exits 0 after writing exactly one end-of-run line with this
nonce, saying that N tests ran and N passed: code under test that exits early, replaces the runner or
hides tests cannot write that line. Standard library only: this runs before anything is trusted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULT = "@@vllm-bot-eval"
# Variables that make an interpreter run code at start-up or look for modules elsewhere.
STARTUP_VARIABLES = re.compile(
    r"^(PYTHON|NODE_|NPM_|BASH_ENV$|ENV$|BASH_FUNC_|SHELLOPTS$|BASHOPTS$|LD_PRELOAD)"
)


class CheckFailed(Exception):
    """The tests did not prove the task solved; the message says why."""


def read_tests(workspace: Path, specs: list[str]) -> list[dict[str, str]]:
    """Each `PATH=SHA256` test file's source, read once; CheckFailed for a missing or changed one."""
    files = []
    for spec in specs:
        rel, _, digest = spec.rpartition("=")
        path = workspace / rel
        try:
            info = os.lstat(path)
        except OSError:
            raise CheckFailed(f"the test file {rel} is missing") from None
        if not stat.S_ISREG(info.st_mode):
            raise CheckFailed(f"the test file {rel} is not a regular file (a link or folder took its place)")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise CheckFailed(f"the test file {rel} is not the one shipped with the task")
        files.append({"path": rel, "source": data.decode("utf-8")})
    return files


def clean_environment() -> dict[str, str]:
    """Ours without start-up hooks, and a PATH without relative entries (the workspace)."""
    env = {k: v for k, v in os.environ.items() if not STARTUP_VARIABLES.match(k)}
    path = [p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if os.path.isabs(p)]
    env["PATH"] = os.pathsep.join(path)
    return env


def runner_command(runner: str, env: dict[str, str], cache: str) -> list[str]:
    if runner == "python":
        # -I: no user site, no PYTHON* variables, neither this folder nor the workspace on sys.path;
        # bytecode only from a fresh prefix (pyrunner.py imports no bytecode from the workspace).
        return [sys.executable, "-I", "-X", f"pycache_prefix={cache}", str(HERE / "pyrunner.py")]
    program = {"node": "node", "bash": "bash"}[runner]
    found = shutil.which(program, path=env["PATH"])
    if found is None:
        raise CheckFailed(f"{program} is not installed")
    if runner == "node":
        return [found, str(HERE / "jsrunner.cjs")]
    return [found, "--norc", "--noprofile", str(HERE / "shrunner.sh")]


def stdin_for(runner: str, nonce: str, files: list[dict[str, str]]) -> bytes:
    body = "\n".join(f["source"] for f in files) if runner == "bash" else json.dumps(files)
    return f"{nonce}\n{body}".encode()


def run(runner: str, files: list[dict[str, str]], expect: int) -> str:
    """Runs the tests; the summary when all `expect` of them ran and passed, else CheckFailed."""
    nonce = secrets.token_hex(16)
    env = clean_environment()
    with tempfile.TemporaryDirectory(prefix="vllm-bot-eval-") as cache:
        proc = subprocess.Popen(
            runner_command(runner, env, cache), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(stdin_for(runner, nonce, files))
            proc.stdin.close()
        except BrokenPipeError:
            pass  # the runner died at once: its exit says so
        ends = []
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            if line.startswith(f"{RESULT} {nonce} "):
                ends.append(line.split()[2:])
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
        code = proc.wait()
    return judge(ends, code, expect)


def judge(ends: list[list[str]], code: int, expect: int) -> str:
    if not ends:
        raise CheckFailed(
            f"the tests did not finish: the runner exited {code} before its end-of-run line (the code "
            "under test exited early, killed the runner, or stopped the tests)"
        )
    if len(ends) > 1:
        raise CheckFailed("the runner wrote its end-of-run line more than once")
    counts = dict(part.split("=", 1) for part in ends[0] if "=" in part)
    ran, passed = int(counts.get("ran", -1)), int(counts.get("passed", -1))
    if counts.get("tampered"):
        raise CheckFailed(f"the code under test changed the test runner ({counts['tampered']})")
    if ran != expect:
        raise CheckFailed(f"{ran} tests ran, {expect} expected")
    if passed != expect:
        raise CheckFailed(f"{expect - passed} of {expect} tests failed")
    if code != 0:
        raise CheckFailed(f"all {expect} tests passed, but the runner then exited {code}")
    return f"all {expect} tests ran and passed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", choices=["python", "node", "bash"], required=True)
    parser.add_argument("--expect", type=int, required=True, metavar="N")
    parser.add_argument("tests", nargs="+", metavar="TESTFILE=SHA256")
    args = parser.parse_args(argv)
    try:
        summary = run(args.runner, read_tests(Path.cwd(), args.tests), args.expect)
    except CheckFailed as e:
        print(f"eval check: FAILED: {e}", flush=True)
        return 1
    print(f"eval check: passed: {summary}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
