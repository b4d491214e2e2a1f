"""Hidden until checked: a task's sandboxed commands cannot read the suite's hidden tests, the bundled
project as shipped (the repo tier's solutions) or the reference solutions, whether eval runs from a
checkout, an editable install in $HOME, a `pip install --user` or a wheel in a venv; yet the check
harness stays visible, so the task still passes. A scripted model snoops (reads the package's task
files, the checkout's solutions and git history, greps for the secrets), then solves the task.
The wheel-based installs build a wheel (~10 s): CI runs them, a plain run the other two."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from batch_support import ROOT, env
from eval_support import BY_ID, WHOLE_SUITE, key, solving

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox.status import probe
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = pytest.mark.skipif(not probe(SandboxConfig()).active, reason="hidden only inside the sandbox")
TASK = BY_ID["py-roman"]
SECRETS = [
    "MCMXCIV",  # py-roman's hidden test
    BY_ID["tools-run-checksum"].hidden["hidden_test.py"].split("'checksum ")[1][:20],  # an answer
    "range(1, len(names))]",  # the bundled project as shipped (repo-failing-tree changes this line)
]


def snoop(package: Path, checkout: Path | None, out: Path, home: Path | None) -> str:
    """A command looking for the secrets where they are kept, and listing the harness."""
    roots = [package, out, *([checkout] if checkout else []), *([home] if home else [])]
    lines = [
        f"cat {package}/eval/tasks/py-roman.yaml {package}/eval/tasks/projects/ledger/ledger/accounts.py",
        f"ls {package}/eval/harness",
        "grep -rl --exclude-dir=.venv --exclude-dir=node_modules --exclude-dir=.mcp-servers "
        + " ".join(f"-e {shlex.quote(s)}" for s in SECRETS)
        + " "
        + " ".join(map(str, roots)),
    ]
    if checkout:
        lines.insert(1, f"cat {checkout}/tests/eval/solutions.yaml")
        lines.append(
            f"git -C {checkout} show HEAD:src/vllm_bot/eval/tasks/py-roman.yaml HEAD:tests/eval/solutions.yaml"
        )
    return "; ".join(f"{line} 2>&1" for line in lines)


def run_eval(python_path, package, checkout, out, home, python=sys.executable):
    command = snoop(package, checkout, out, home)
    conversation = [
        Reply(content="Looking around.", calls=[Call("exec", {"command": command})]),
        *solving(TASK),
    ]
    child_env = env()
    if python_path is not None:
        child_env["PYTHONPATH"] = str(python_path)
    if home is not None:
        child_env["HOME"] = str(home)
    with FakeVLLM(conversations={key(TASK): conversation}) as server:
        proc = subprocess.run(
            [python, "-m", "vllm_bot.app", "eval", "--base-url", server.base_url, "--tasks", TASK.id,
             "--output-dir", str(out), "--json"],
            capture_output=True, text=True, env=child_env, cwd=out.parent, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    events = (out / "default" / "tasks" / TASK.id / "events.jsonl").read_text().splitlines()
    [seen] = [
        e["result"]["value"]
        for e in map(json.loads, events)
        if e["type"] == "tool_call_finished" and e["call"]["name"] == "exec"
    ]
    return json.loads(proc.stdout), seen


def assert_hidden_and_checked(result, seen, package):
    assert "check.py" in seen and "pyrunner.py" in seen, seen[-2000:]  # the harness is visible
    for secret in SECRETS:
        assert secret not in seen, f"{secret!r} was readable: {seen[-3000:]}"
    assert result["runs"]["default"]["tasks"][TASK.id]["passed"], "the check could not run"
    assert result["sandbox"]["active"]


def test_from_the_checkout(tmp_path):
    package = ROOT / "src" / "vllm_bot"
    result, seen = run_eval(package.parent, package, ROOT, tmp_path / "out", None)
    assert_hidden_and_checked(result, seen, package)


def copy_checkout(dest: Path) -> Path:
    """A checkout of ours (the files git tracks, the solutions too) with its history, at `dest`."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    names = [n for n in listed.stdout.splitlines() if n.startswith(("src/", "prompts/", "tests/eval/"))]
    names += ["cli.py", "config.json", "pyproject.toml"]
    for name in names:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "ours"]):
        subprocess.run(["git", *args], cwd=dest, env=git_env, check=True, capture_output=True)
    return dest


def test_from_an_editable_install_in_home(tmp_path):
    """An editable install runs the checkout's own files (here put on the path as its .pth would):
    under $HOME, where the sandbox shows nothing it was not told to."""
    home = tmp_path / "home"
    checkout = copy_checkout(home / "src" / "vllm-bot")
    package = checkout / "src" / "vllm_bot"
    result, seen = run_eval(package.parent, package, checkout, tmp_path / "out", home)
    assert_hidden_and_checked(result, seen, package)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if not WHOLE_SUITE:
        pytest.skip("builds a wheel (~10 s): CI runs it")
    dist, source = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("source")
    # built from a copy of the files git tracks: a build in the checkout writes its build/ and
    # egg-info there, where CI's background `pip install -e` (the Ray venv) writes them too
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    [built] = dist.glob("*.whl")
    names = zipfile.ZipFile(built).namelist()
    assert "tests/eval/solutions.yaml" not in names and not [n for n in names if n.endswith("solutions.yaml")]
    return built


def test_from_a_user_install(tmp_path, wheel):
    """`pip install --user`: the wheel unpacked in ~/.local/lib/pythonX.Y/site-packages (on the path
    as the user site is)."""
    home = tmp_path / "home"
    site = (
        home / ".local" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    )
    site.mkdir(parents=True)
    zipfile.ZipFile(wheel).extractall(site)
    package = site / "vllm_bot"
    result, seen = run_eval(package.parent, package, None, tmp_path / "out", home)
    assert_hidden_and_checked(result, seen, package)


def test_from_a_wheel_in_a_venv(tmp_path, wheel):
    """A venv of its own in $HOME (the sandbox shows the interpreter's prefix), its dependencies
    borrowed from ours through a .pth file."""
    home = tmp_path / "home"
    venv = home / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip())  # fmt: skip
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "ours.pth").write_text("\n".join(ours) + "\n")
    zipfile.ZipFile(wheel).extractall(site)
    package = site / "vllm_bot"
    result, seen = run_eval(None, package, None, tmp_path / "out", home, python=str(python))
    assert_hidden_and_checked(result, seen, package)
