"""The undo property: after random agent turns, undoing back to checkpoint k gives exactly the tree of
snapshot k (paths, bytes, modes, link targets), leaves ignored files alone, and never touches the
user's index, HEAD, branches or stash. Seeded random scenarios (reproducible: the seed is in the
failure message); each continues in the same workspace from where the previous one ended."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from gitworkspace import git, init_repo, isolate_git, manifest, user_git_state

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import undo_last

NAMES = ["a", "b.txt", "src/c.py", "src/d/e.bin", "docs/f.md", "g h.txt", "ünï.txt", "src/d/deep/z"]
IGNORED_NAMES = ["x.log", "build/out.o", "src/trace.log"]
GITIGNORE = "*.log\nbuild/\n"
SCENARIOS = {"git": 140, "plain": 60}  # 200 in all


def is_ignored(rel: str) -> bool:
    return rel.endswith(".log") or rel.startswith("build/")


def regular_files(ws: Path) -> list[str]:
    """Files an action may edit, delete, move or chmod. Not .gitignore: changing the ignore rules
    changes what "ignored" means mid-scenario (test_checkpoints.py covers that case on its own)."""
    found = manifest(ws, is_ignored).items()
    return sorted(p for p, (kind, _, _) in found if kind == "file" and p != ".gitignore")


def real_dirs(ws: Path) -> list[str]:
    out = []
    for root, dirs, _files in os.walk(ws):
        dirs[:] = [
            d for d in dirs if d not in (".git", ".vllm-bot") and not os.path.islink(os.path.join(root, d))
        ]
        out += [os.path.relpath(os.path.join(root, d), ws) for d in dirs]
    return sorted(d for d in out if not is_ignored(d + "/"))


def make_room(ws: Path, rel: str) -> None:
    """Parents of rel become real directories (a file or link in the way is removed, as an agent's
    `rm` then `mkdir -p` would); whatever is at rel itself is removed."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        p = ws.joinpath(*parts[:i])
        if p.is_symlink() or (p.exists() and not p.is_dir()):
            p.unlink()
    target = ws / rel
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.is_symlink() or target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)


def random_bytes(rnd: random.Random) -> bytes:
    kind = rnd.choice(["text", "crlf", "binary", "empty"])
    if kind == "text":
        return f"line {rnd.randint(0, 999)}\nmore {rnd.random()}\n".encode()
    if kind == "crlf":
        return b"win\r\nline\r\n" * rnd.randint(1, 3)
    if kind == "binary":
        return rnd.randbytes(rnd.randint(1, 64))
    return b""


def act(rnd: random.Random, ws: Path, in_git: bool) -> str:
    """One random agent action on the workspace; returns its name (for failure messages)."""
    files = regular_files(ws)
    action = rnd.choice(
        ["edit", "write", "write", "delete", "rmtree", "mv", "chmod", "symlink", "ignored"]
        + (["checkout"] if in_git else [])
    )
    if action == "edit" and files:
        path = ws / rnd.choice(files)
        path.write_bytes(path.read_bytes() + random_bytes(rnd))
    elif action == "delete" and files:
        (ws / rnd.choice(files)).unlink()
    elif action == "rmtree" and real_dirs(ws):
        shutil.rmtree(ws / rnd.choice(real_dirs(ws)))
    elif action == "mv" and files:
        src, dst = rnd.choice(files), rnd.choice(NAMES)
        if src != dst:
            make_room(ws, dst)
            if (ws / src).exists():
                os.rename(ws / src, ws / dst)
    elif action == "chmod" and files:
        path = ws / rnd.choice(files)
        path.chmod(path.stat().st_mode ^ 0o111)
    elif action == "symlink":
        rel = rnd.choice(NAMES)
        make_room(ws, rel)
        os.symlink(rnd.choice(["b.txt", "../outside", "missing/target", "src"]), ws / rel)
    elif action == "ignored":
        rel = rnd.choice(IGNORED_NAMES)
        make_room(ws, rel)
        (ws / rel).write_bytes(random_bytes(rnd))
    elif action == "checkout":
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=ws, capture_output=True)
    else:
        action = "write"
        rel = rnd.choice(NAMES)
        make_room(ws, rel)
        (ws / rel).write_bytes(random_bytes(rnd))
    return action


def run_scenario(ws: Path, store: CheckpointStore, rnd: random.Random, in_git: bool) -> str:
    """1-20 actions in 1-4 turns, then undo back to a random checkpoint k; asserts the property."""
    actions = rnd.randint(1, 20)
    turns = rnd.randint(1, min(4, actions))
    cuts = sorted(rnd.sample(range(1, actions), turns - 1)) if turns > 1 else []
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, actions], strict=True)]
    before: dict[int, dict] = {}
    changed: set[int] = set()
    log = []
    for i, size in enumerate(sizes):
        store.begin_turn(f"turn {i}")
        turn = store.ensure_checkpoint()
        before[turn.n] = manifest(ws, is_ignored)
        log.append([act(rnd, ws, in_git) for _ in range(size)])
        store.end_turn()
        if manifest(ws, is_ignored) != before[turn.n]:
            changed.add(turn.n)
    k = rnd.choice(sorted(before))
    ignored_now = {p: v for p, v in manifest(ws).items() if is_ignored(p)}
    # Undo skips turns that changed nothing, so step back while a turn >= k still has changes.
    while any(t.n >= k and t.n in changed and not t.undone for t in store.ledger.turns):
        outcome = undo_last(store, ask=None)
        assert outcome.done, outcome.lines
    assert not any(t.undone for t in store.ledger.turns if t.n < k and t.n in changed)
    description = f"turns {log}, undo to checkpoint {k}"
    assert manifest(ws, is_ignored) == before[k], description
    assert {p: v for p, v in manifest(ws).items() if is_ignored(p)} == ignored_now, description
    return description


def seed_workspace(ws: Path, in_git: bool) -> None:
    files = {"a": "alpha\n", "src/c.py": "print(1)\n", "docs/f.md": "# doc\n", ".gitignore": GITIGNORE}
    if in_git:
        init_repo(ws, files)
        (ws / "b.txt").write_text("staged, not committed\n")
        git(ws, "add", "b.txt")  # the user's index differs from HEAD
        (ws / "b.txt").write_text("staged, then changed again\n")
    else:
        for rel, text in files.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
    (ws / "x.log").write_text("ignored from the start\n")


def run_chain(ws: Path, in_git: bool, seeds: list[int]) -> None:
    """Scenarios one after another in one workspace (each starts where the previous one ended)."""
    ws.mkdir()
    seed_workspace(ws, in_git)
    state = workspace_state_dir(ws)
    repo = open_repo(ws, state, [])
    assert repo.private is not in_git
    # The agent's own `git checkout -- .` refreshes index stat data, so entries are compared here;
    # test_checkpoints.py checks the index bytes when only our code runs git.
    user_state = user_git_state(ws, exact=False) if in_git else None
    for seed in seeds:
        store = CheckpointStore(repo, state, f"s{seed}")
        try:
            run_scenario(ws, store, random.Random(seed), in_git)
        except AssertionError as e:
            raise AssertionError(f"scenario seed {seed}: {e}") from None
        # Every few scenarios (a change to the user's git state would persist, so it is caught).
        if in_git and (seed % 5 == 0 or seed == seeds[-1]):
            assert user_git_state(ws, exact=False) == user_state, f"scenario seed {seed} changed git state"
    assert (ws / ".git").is_dir() if in_git else not (ws / ".git").exists()


CHAINS = 4  # independent workspaces per kind, a test each: the parallel workers share them


@pytest.mark.parametrize("chain", range(CHAINS))
@pytest.mark.parametrize("kind", ["git", "plain"])
def test_undo_restores_snapshot_k_exactly(kind, chain, tmp_path, monkeypatch):
    isolate_git(monkeypatch, tmp_path)
    in_git = kind == "git"
    seeds = [1000 * (not in_git) + i for i in range(SCENARIOS[kind])]
    run_chain(tmp_path / "ws", in_git, seeds[chain::CHAINS])
