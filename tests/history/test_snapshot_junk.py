"""Build junk (`__pycache__/`, `*.pyc`) stays out of snapshots, `/diff` and undo in a git repository
without a .gitignore, as it does in a directory without git; tracked files are snapshotted as ever."""

from __future__ import annotations

import pytest
from gitworkspace import git, init_repo, isolate_git

from vllm_bot.config import GitConfig
from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import diff_text, store_from_disk, undo_last

JUNK = GitConfig().private_excludes


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def agent_turn(store, task, change):
    store.begin_turn(task)
    store.ensure_checkpoint()
    change()
    return store.end_turn()


def run_tests_and_edit(ws):
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (ws / "__pycache__").mkdir(exist_ok=True)
    (ws / "__pycache__" / "calc.cpython-312.pyc").write_bytes(b"\x00junk")
    (ws / "pkg" / "__pycache__").mkdir(parents=True, exist_ok=True)
    (ws / "pkg" / "__pycache__" / "m.cpython-312.pyc").write_bytes(b"\x00junk")
    (ws / "old.pyc").write_bytes(b"\x00junk")


@pytest.mark.parametrize("use_git", [True, False])
def test_pycache_never_shows_in_diff_or_undo(tmp_path, use_git):
    files = {"calc.py": "def add(a, b):\n    return a - b\n", "pkg/m.py": "x = 1\n"}
    if use_git:
        ws = init_repo(tmp_path / "ws", files)
        assert not (ws / ".gitignore").exists()
    else:
        ws = tmp_path / "ws"
        for name, text in files.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, list(JUNK)), state, "s1")
    agent_turn(store, "fix add", lambda: run_tests_and_edit(ws))
    shown = diff_text(store, whole_session=True, stat=True, color=False)
    assert "calc.py" in shown and "pyc" not in shown and "__pycache__" not in shown
    from_shell = store_from_disk(ws, None)  # `vllm-bot diff` / `undo` leave out the same files
    assert from_shell is not None and "pyc" not in diff_text(
        from_shell, whole_session=True, stat=True, color=False
    )
    outcome = undo_last(from_shell, ask=None)
    assert outcome.done and "pyc" not in "\n".join(outcome.lines)
    assert "1 file restored, 0 files the agent created removed" in outcome.lines[0]
    assert (ws / "calc.py").read_text().endswith("a - b\n")
    assert (ws / "old.pyc").exists()  # never snapshotted, so never touched


def test_a_tracked_pyc_is_still_snapshotted(tmp_path):
    ws = init_repo(tmp_path / "ws", {"keep.pyc": "tracked on purpose\n"})
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, list(JUNK)), state, "s1")
    agent_turn(store, "touch it", lambda: (ws / "keep.pyc").write_text("changed\n"))
    assert "keep.pyc" in diff_text(store, whole_session=True, stat=True, color=False)
    assert undo_last(store, ask=None).done
    assert (ws / "keep.pyc").read_text() == "tracked on purpose\n"
    assert git(ws, "status", "--porcelain") == ""


JUNK_CASES = {
    "__pycache__/a.pyc": True,
    "src/pkg/__pycache__/a.cpython-312.pyc": True,
    "a.pyc": True,
    "node_modules/x/index.js": True,
    "src/node_modules.py": False,
    "venv.py": False,
    "docs/pycache.md": False,
    ".tox/py310/log": True,
}


def test_the_patterns_read_as_gitignore_patterns(tmp_path):
    ws = init_repo(tmp_path / "ws", {"seed.txt": "x\n"})
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, list(JUNK)), state, "s1")

    def create_all():
        for path in JUNK_CASES:
            (ws / path).parent.mkdir(parents=True, exist_ok=True)
            (ws / path).write_text("made by a build\n")

    agent_turn(store, "build", create_all)
    shown = diff_text(store, whole_session=True, stat=True, color=False)
    assert {path for path in JUNK_CASES if path in shown} == {p for p, junk in JUNK_CASES.items() if not junk}


def test_junk_a_gitignore_already_leaves_out_does_not_break_the_snapshot(tmp_path):
    """git refuses an exclusion pathspec that names an ignored file: only what `add -A` would take is
    excluded by name (the benchmark's repository has 20,000 ignored node_modules files)."""
    ws = init_repo(tmp_path / "ws", {".gitignore": "node_modules/\n", "app.py": "x = 1\n"})
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, list(JUNK)), state, "s1")

    def build():
        (ws / "node_modules" / "dep").mkdir(parents=True)
        (ws / "node_modules" / "dep" / "index.js").write_text("ignored\n")
        (ws / "__pycache__").mkdir()
        (ws / "__pycache__" / "app.cpython-312.pyc").write_bytes(b"\x00junk")
        (ws / "app.py").write_text("x = 2\n")

    agent_turn(store, "build", build)
    shown = diff_text(store, whole_session=True, stat=True, color=False)
    assert "app.py" in shown and "node_modules" not in shown and "pyc" not in shown
