"""A nested repository the model builds inside its workspace, with a clean filter in that repository's
own config, in a lived-in home (found by a red-team run, as root). The agent's own git runs outside the
sandbox; `git add -A` over a gitlink (a nested repository already in the index, or a submodule of the
user's HEAD) checks it for changes by running `git status` inside it, which ran the filter on the host,
as the user, with the keys in reach. Neither the checkpoints (and `diff`, `undo`) nor `batch`'s diff of
a task's copy may go into one."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from lived_in_home import CANARY, Home, run_cli
from sandbox_helpers import needs_bwrap

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

pytestmark = needs_bwrap
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def filter_payload(marker: Path) -> str:
    """A clean filter that leaves the marker (with the user's key) wherever it runs; inside the
    sandbox `marker`'s folder is out of sight, so the marker on the host means it ran outside."""
    return f"sh -c 'id > {marker}; cat ~/.ssh/id_rsa >> {marker}; cat'"


def plant(marker: Path, head_ref: str | None = None) -> str:
    """Shell lines the model runs: a repository in `lib` (or `evil`) with a commit, a clean filter in
    its config and a file whose stat data changed, so git must run the filter to compare it."""
    folder = "lib" if head_ref else "evil"
    steps = [
        f"mkdir -p {folder} && cd {folder} && git init -q",
        "echo hello > f && echo '* filter=x' > .gitattributes",
        "git add -A && git -c user.name=a -c user.email=b commit -qm x",
        f"git config filter.x.clean {shlex.quote(filter_payload(marker))}",
    ]
    if head_ref:  # the branch names the commit the user's HEAD records for the submodule
        write = (
            "import subprocess; b = subprocess.check_output(['git', 'symbolic-ref', 'HEAD']).decode().strip(); "
            f"open('.git/' + b, 'w').write('{head_ref}\\n')"
        )
        steps.append(f"python3 -c {shlex.quote(write)}")
    steps.append("sleep 1.1 && touch f && echo planted")
    return " && ".join(steps)


def ran_on_host(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


def test_checkpoints_diff_and_undo_never_go_into_a_nested_repository(lived_in: Home):
    marker = lived_in.marker_dir / "filter-ran-on-host"
    first = [Reply(calls=[Call("exec", {"command": plant(marker)})]),
             Reply(calls=[Call("write", {"path": "x.txt", "content": "x\n"})]), Reply(content="planted")]  # fmt: skip
    with FakeVLLM(first) as server:
        proc = run_cli(lived_in, lived_in.proj, "-p", "go", "--yes", "--base-url", server.base_url)
        server.assert_done()
    assert proc.returncode == 0 and "planted" in proc.stdout, proc.stderr
    # the next session seeds its index from this one's; any change makes it take a checkpoint
    second = [Reply(calls=[Call("write", {"path": "y.txt", "content": "y\n"})]), Reply(content="done")]
    with FakeVLLM(second) as server:
        proc = run_cli(lived_in, lived_in.proj, "-p", "go", "--base-url", server.base_url)
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    diff = run_cli(lived_in, lived_in.proj, "diff")
    assert diff.returncode == 0 and "+y" in diff.stdout, diff.stdout + diff.stderr
    undo = run_cli(lived_in, lived_in.proj, "undo")
    assert undo.returncode == 0 and not (lived_in.proj / "y.txt").exists(), undo.stdout + undo.stderr
    assert (lived_in.proj / "evil" / "f").read_text() == "hello\n"  # the nested repository is left alone
    assert ran_on_host(marker) == ""


def test_batch_never_goes_into_a_submodule_the_model_made_a_repository(lived_in: Home, tmp_path: Path):
    """The user's HEAD records a submodule `lib` (not checked out in the task's copy); the model makes
    `lib` a repository whose branch names the recorded commit; batch's diff of the copy ran the
    filter."""
    marker = lived_in.marker_dir / "batch-filter-ran-on-host"
    recorded = "1" * 40
    src = lived_in.elsewhere
    subprocess.run([*GIT, "init", "-q", str(src)], check=True)
    git = [*GIT, "-C", str(src)]
    subprocess.run([*git, "update-index", "--add", "--cacheinfo", f"160000,{recorded},lib"], check=True)
    (src / ".gitmodules").write_text('[submodule "lib"]\n\tpath = lib\n\turl = ./nowhere\n')
    subprocess.run([*git, "add", ".gitmodules", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a submodule", "--no-verify"], check=True, env=lived_in.env)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "t1", "workspace": str(src), "task": "fix it", "check": "true"}) + "\n"
    )
    out = tmp_path / "out"
    script = [Reply(calls=[Call("exec", {"command": plant(marker, recorded)})]), Reply(content="done")]
    with FakeVLLM(script) as server:
        proc = run_cli(
            lived_in, src, "batch", str(tasks), "--output-dir", str(out), "--base-url", server.base_url
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert result["status"] == "passed", result
    assert ran_on_host(marker) == "" and CANARY not in (out / "results.jsonl").read_text()
