"""Checkpoint cost on a realistic repository.

Full size: 10,000 tracked files (200 MB) committed once, then 10 files modified and 10 untracked files
added, plus an ignored node_modules/ with 20,000 files that snapshots must skip. `quick=True` uses a
tiny repository (for CI smoke runs). Run: `python benchmarks/bench_checkpoints.py [--quick]`.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import to_markdown

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import diff_report
from vllm_bot.history.undo import apply_undo, plan_undo

FULL = {"files": 10_000, "total_mb": 200, "ignored": 20_000}
QUICK = {"files": 200, "total_mb": 2, "ignored": 300}


def generate(root: Path, files: int, total_mb: int, ignored: int, seed: int = 7) -> None:
    """A committed repository of `files` text files (`total_mb` in all) and an ignored node_modules."""
    rnd = random.Random(seed)
    size = total_mb * 1024 * 1024 // files
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(files):
        path = root / tracked_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rnd.randbytes(size // 2).hex())
    (root / ".gitignore").write_text("node_modules/\n")
    for i in range(ignored):
        path = root / "node_modules" / f"m{i % 100}" / f"f{i}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("module.exports = 1;\n")
    git = ["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "-c", "gc.auto=0", "commit", "-q", "-m", "initial"], check=True)
    # Packed, like a real repository; and no background auto-gc racing the measurements.
    subprocess.run([*git, "gc", "-q"], check=True)
    subprocess.run([*git, "config", "gc.auto", "0"], check=True)


def tracked_path(i: int) -> str:
    return f"pkg{i % 50:02d}/sub{i % 7}/file{i}.txt"


def touch_some(root: Path, count: int, tag: str) -> None:
    for i in range(count):
        with (root / tracked_path(i * 13)).open("a") as f:
            f.write(f"\n{tag} change {i}\n")
        (root / f"new-{tag}-{i}.txt").write_text(f"untracked {tag} {i}\n")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def row(name: str, seconds: float, note: str) -> dict[str, Any]:
    return {"benchmark": name, "value": round(seconds * 1000, 1), "unit": "ms", "note": note}


def measure_repo(root: Path, label: str) -> list[dict[str, Any]]:
    state = workspace_state_dir(root)
    repo = open_repo(root, state, ["node_modules/"])
    store = CheckpointStore(repo, state, f"bench-{label}")
    touch_some(root, 10, "a")
    store.begin_turn("benchmark turn")
    first, _ = timed(store.ensure_checkpoint)
    touch_some(root, 5, "b")
    end, _ = timed(store.end_turn)
    diff, _ = timed(lambda: diff_report(store, whole_session=True, stat=False, color=False))
    plan_s, plan = timed(lambda: plan_undo(store))
    apply_s, _ = timed(lambda: apply_undo(store, plan))
    store.begin_turn("second turn")
    touch_some(root, 3, "c")
    again, _ = timed(store.ensure_checkpoint)
    store.end_turn()
    later = CheckpointStore(repo, state, f"bench-{label}-later")
    touch_some(root, 2, "d")
    # Worst case: the change comes at once, so no-git waits for the whole warm-up.
    next_session, _ = timed(lambda: (later.begin_turn("a later session"), later.ensure_checkpoint()))
    kind = ".vllm-bot/git, no git" if repo.private else ".vllm-bot/git, in a repository"
    return [
        row(f"first checkpoint ({label})", first, f"{kind}; 10 modified + 10 untracked files"),
        row(f"turn-end snapshot ({label})", end, "5 more files modified, 5 added"),
        row(f"next turn checkpoint ({label})", again, "temp index warm; 3 files modified, 3 added"),
        row(
            f"first checkpoint of a later session ({label})",
            next_session,
            "new index seeded from the last session's; 2 + 2 files",
        ),
        row(f"diff since session start ({label})", diff, "snapshot + git diff"),
        row(f"undo: plan ({label})", plan_s, "snapshot + tree diffs + blocked-path check"),
        row(f"undo: restore ({label})", apply_s, f"{len(plan.paths)} paths restored or removed"),
    ]


def measure_cold(root: Path) -> dict[str, Any]:
    """Snapshot with an empty temporary index: every file is hashed (what seeding avoids)."""
    repo = open_repo(root, workspace_state_dir(root))
    index = Path(tempfile.mkdtemp()) / "cold.index"
    seconds, _ = timed(lambda: repo.run("add", "-A", "--", *repo.add_scope(), index=index))
    return row("snapshot with an unseeded index", seconds, "for comparison: hashes every tracked file")


def measure_warm_up(root: Path) -> list[dict[str, Any]]:
    """No git: the store fills its index in the background when the turn starts (while the model
    thinks), so the checkpoint before the first change only picks up what changed since."""
    state = workspace_state_dir(root)
    store = CheckpointStore(open_repo(root, state, ["node_modules/"]), state, "bench-warm")
    started = time.perf_counter()
    store.begin_turn("benchmark turn")
    assert store._warm is not None
    store._warm.join()
    warm = time.perf_counter() - started
    touch_some(root, 10, "w")
    first, _ = timed(store.ensure_checkpoint)
    return [
        row(
            "background warm-up at turn start (no-git)",
            warm,
            "fresh private repo: hashes + stores every file",
        ),
        row("first checkpoint after warm-up (no-git)", first, "10 modified + 10 untracked files"),
    ]


def plain_copy(root: Path, target: Path) -> Path:
    subprocess.run(["cp", "-a", str(root), str(target)], check=True)
    subprocess.run(["rm", "-rf", str(target / ".git"), str(target / ".vllm-bot")], check=True)
    return target


def run(quick: bool = False) -> list[dict[str, Any]]:
    sizes = QUICK if quick else FULL
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as tmp:
        root = Path(tmp) / "repo"
        seconds, _ = timed(lambda: generate(root, **sizes))
        note = (
            f"{sizes['files']} files, {sizes['total_mb']} MB, {sizes['ignored']} ignored node_modules files"
        )
        rows.append(
            {
                "benchmark": "generate + commit + gc test repo",
                "value": round(seconds, 1),
                "unit": "s",
                "note": note,
            }
        )
        rows += measure_repo(root, "git")
        rows.append(measure_cold(root))
        rows += measure_repo(plain_copy(root, Path(tmp) / "plain"), "no-git")
        rows += measure_warm_up(plain_copy(root, Path(tmp) / "plain-warm"))
    return rows


if __name__ == "__main__":
    print(f"cores: {os.cpu_count()}")
    print(to_markdown(run(quick="--quick" in sys.argv)))
