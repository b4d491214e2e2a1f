"""Workspace confinement: escape attempts over read/write/edit are refused and change nothing outside."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest

from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor

SECRET = "SECRET sentinel content\n"


def build_tree(root: Path) -> tuple[Path, Path]:
    """root/ws (workspace), root/outside (sentinel), root/ws-evil (sibling prefix), root/home."""
    ws, outside = root / "ws", root / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "sub" / "data.txt").write_text(SECRET)
    (root / "ws-evil").mkdir()
    (root / "ws-evil" / "file.txt").write_text(SECRET)
    (root / "home").mkdir()
    (root / "home" / ".bashrc").write_text(SECRET)
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\nSECRET = 0\n")
    (ws / ".vllm-bot").mkdir()
    (ws / ".vllm-bot" / "state.json").write_text("{}\nSECRET\n")
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\nSECRET\n")
    links = {
        "link_out": "../outside/secret.txt",
        "dir_link_out": "../outside",
        "dangling_out": "../outside/created-by-tool.txt",
        "dangling_dir": "../outside/nodir",
        "chain1": "chain2",
        "chain2": "../outside/secret.txt",
        "root_link": "/",
        "src/link_up": "../../outside",
        "loop": "loop",
        "link_in": "src/a.py",
        "dir_link_in": "src",
        "abs_link_out": str(outside / "secret.txt"),
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    return ws, outside


def manifest(*roots: Path) -> dict[str, tuple]:
    """Paths, bytes, modes and link targets of every entry under `roots`."""
    out: dict[str, tuple] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                st = p.lstat()
                if p.is_symlink():
                    out[str(p)] = ("link", os.readlink(p))
                elif p.is_dir():
                    out[str(p)] = ("dir", st.st_mode)
                else:
                    out[str(p)] = ("file", st.st_mode, p.read_bytes())
    return out


def escape_paths(root: Path) -> list[str]:
    ws, outside = root / "ws", root / "outside"
    return [
        "../outside/secret.txt",
        "../../etc/passwd",
        "../" * 12 + "etc/passwd",
        "src/../../outside/secret.txt",
        "./../outside/secret.txt",
        "src/./../../outside/sub/data.txt",
        str(outside / "secret.txt"),
        str(outside / "new-file.txt"),
        "/etc/passwd",
        "/etc/hostname",
        str(ws) + "/../outside/secret.txt",
        str(ws) + "-evil/file.txt",
        "../ws-evil/file.txt",
        "../ws-evil/new.txt",
        "link_out",
        "abs_link_out",
        "dir_link_out/secret.txt",
        "dir_link_out/new.txt",
        "dir_link_out/sub/data.txt",
        "dangling_out",
        "dangling_dir/x.txt",
        "chain1",
        "root_link/etc/passwd",
        "src/link_up/secret.txt",
        "src/link_up/sub/new.txt",
        "~/.bashrc",
        "~/new-in-home.txt",
        "/proc/self/root/etc/passwd",
        "/dev/null",
        "..",
        "../",
        "/",
        str(outside),
        "../outside/",
        "src/a.py\0../../outside/secret.txt",
        "loop",
        " ../outside/secret.txt ",
    ]


OPS = {
    "read": lambda p: {"path": p},
    "write": lambda p: {"path": p, "content": "pwned\n"},
    "edit": lambda p: {"path": p, "oldText": "SECRET", "newText": "pwned"},
}

_PROTECTED_WRITES = [
    ".vllm-bot/state.json",
    ".vllm-bot/new.txt",
    "./src/../.vllm-bot/x",
    ".git/hooks/pre-commit",
    ".git/config",
]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ToolExecutor, Path]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws, _ = build_tree(tmp_path)
    return ToolExecutor(ws, ToolsConfig()), tmp_path


def test_the_table_has_at_least_fifty_attempts(tmp_path: Path) -> None:
    assert len(escape_paths(tmp_path)) * len(OPS) + len(_PROTECTED_WRITES) * 2 >= 50


@pytest.mark.parametrize("index", range(37))
@pytest.mark.parametrize("op", sorted(OPS))
def test_escape_attempt_is_refused_and_outside_is_untouched(tree, op: str, index: int) -> None:
    ex, root = tree
    path = escape_paths(root)[index]
    outside = [root / "outside", root / "ws-evil", root / "home"]
    before = manifest(*outside)
    result = ex.execute(op, OPS[op](path))
    assert result.kind == "error", f"{op}({path!r}) was not refused: {result.value[:200]}"
    assert "pwned" not in result.value and "SECRET sentinel" not in result.value
    assert manifest(*outside) == before


def test_table_length_matches_parametrization(tmp_path: Path) -> None:
    assert len(escape_paths(tmp_path)) == 37


@pytest.mark.parametrize("path", _PROTECTED_WRITES)
@pytest.mark.parametrize("op", ["write", "edit"])
def test_agent_state_and_git_internals_are_not_writable(tree, op: str, path: str) -> None:
    ex, root = tree
    before = manifest(root / "ws" / ".vllm-bot", root / "ws" / ".git")
    result = ex.execute(op, OPS[op](path))
    assert result.kind == "error" and "Refused" in result.value
    assert manifest(root / "ws" / ".vllm-bot", root / "ws" / ".git") == before


def test_agent_state_is_readable(tree) -> None:
    ex, _ = tree
    assert ex.execute("read", {"path": ".vllm-bot/state.json"}).kind == "text"


@pytest.mark.parametrize(
    "path",
    ["src/a.py", "./src/a.py", "src/../src/a.py", "link_in", "dir_link_in/a.py", "WS/src/a.py", "src//a.py"],
)
def test_legitimate_paths_work_for_all_tools(tree, path: str) -> None:
    ex, root = tree
    path = path.replace("WS", str(root / "ws"))
    assert ex.execute("read", {"path": path}).kind == "text"
    assert ex.execute("edit", {"path": path, "oldText": "x = 1", "newText": "x = 2"}).kind == "text"
    assert ex.execute("write", {"path": path, "content": "y = 3\n"}).kind == "text"
    assert (root / "ws" / "src" / "a.py").read_text() == "y = 3\n"
    assert (root / "ws" / "link_in").is_symlink() and (root / "ws" / "dir_link_in").is_symlink()


def test_new_files_and_directories_inside_are_created(tree) -> None:
    ex, root = tree
    r = ex.execute("write", {"path": "new/deep/dir/f.txt", "content": "hi\n"})
    assert r.kind == "text" and "Created new/deep/dir/f.txt" in r.value
    assert (root / "ws" / "new" / "deep" / "dir" / "f.txt").read_text() == "hi\n"
    assert ex.execute("read", {"path": "."}).kind == "text"


def test_allowed_paths_extend_the_roots(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "shared"
    ws.mkdir()
    extra.mkdir()
    ex = ToolExecutor(ws, ToolsConfig(allowed_paths=[str(extra)]))
    assert ex.execute("write", {"path": str(extra / "n.txt"), "content": "ok\n"}).kind == "text"
    assert ex.execute("read", {"path": "../shared/n.txt"}).kind == "text"
    r = ex.execute("read", {"path": "../shared-evil/x"})
    assert r.kind == "error" and "outside the workspace" in r.value


def test_hard_link_to_outside_file_is_replaced_not_written_through(tree) -> None:
    ex, root = tree
    os.link(root / "outside" / "secret.txt", root / "ws" / "hard.txt")
    before = manifest(root / "outside")
    r = ex.execute("edit", {"path": "hard.txt", "oldText": "SECRET", "newText": "pwned"})
    assert r.kind == "text" and "hard links" in r.value
    assert ex.execute("write", {"path": "hard.txt", "content": "pwned\n"}).kind == "text"
    assert manifest(root / "outside") == before


def _exchange(a: Path, b: Path) -> None:
    """Atomically swap two directory entries (renameat2 RENAME_EXCHANGE, Linux >= 3.15)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, str(a).encode(), -100, str(b).encode(), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2 failed")


def test_racing_directory_swap_never_reads_or_writes_outside(tree) -> None:
    """A thread keeps swapping ws/dir (a real directory) with a link to outside while the tools use
    dir/secret.txt: a check of the path alone would race; the checks on the opened fds must hold."""
    ex, root = tree
    ws, outside = root / "ws", root / "outside"
    (ws / "dir").mkdir()
    (ws / "dir" / "secret.txt").write_text("inside SECRET\n")
    (ws / "lnk").symlink_to(outside)
    try:
        _exchange(ws / "dir", ws / "lnk")
        _exchange(ws / "dir", ws / "lnk")
    except (OSError, AttributeError):
        pytest.skip("renameat2 is not available")
    before = manifest(outside)
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            _exchange(ws / "dir", ws / "lnk")

    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    leaks = []
    try:
        for i in range(600):
            op = ("read", "read", "read", "write", "edit")[i % 5]
            args = {
                "read": {"path": "dir/secret.txt"},
                "write": {"path": "dir/secret.txt", "content": "pwned\n"},
            }
            r = ex.execute(
                op, args.get(op, {"path": "dir/secret.txt", "oldText": "SECRET", "newText": "pwned"})
            )
            if "SECRET sentinel" in str(r.value):
                leaks.append(r.value)
    finally:
        stop.set()
        thread.join(5)
    assert leaks == []
    assert manifest(outside) == before
