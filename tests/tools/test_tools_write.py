"""write: atomic replacement (crash safety under SIGKILL), kept mode/format, reports, preview."""

from __future__ import annotations

import codecs
import contextlib
import os
import random
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vllm_bot.calls import ToolCall
from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor
from vllm_bot.tools.fileio import TEMP_MARK


def write(ex: ToolExecutor, path: str, content: str):
    return ex.execute("write", {"path": path, "content": content})


def test_create_reports_bytes_lines_and_directories(tmp_path: Path) -> None:
    r = write(ToolExecutor(tmp_path, ToolsConfig()), "pkg/mod/x.py", "a = 1\nb = 'é'\n")
    assert r.kind == "text"
    assert r.value == "Created pkg/mod/x.py (15 bytes, 2 lines). Created directories: pkg/, pkg/mod/."
    assert (tmp_path / "pkg" / "mod" / "x.py").read_text() == "a = 1\nb = 'é'\n"


def test_overwrite_keeps_mode_bits_and_reports_the_old_size(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o754)
    r = write(ToolExecutor(tmp_path, ToolsConfig()), "run.sh", "#!/bin/sh\necho new\nexit 0\n")
    assert r.value == "Overwrote run.sh (26 bytes, 3 lines; it had 19 bytes, 2 lines)."
    assert script.stat().st_mode & 0o7777 == 0o754


def test_overwrite_keeps_crlf_bom_and_legacy_encoding(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    (tmp_path / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"x\n")
    (tmp_path / "latin.txt").write_bytes("café\n".encode("cp1252"))
    ex = ToolExecutor(tmp_path, ToolsConfig())
    assert "kept the file's CRLF line endings" in write(ex, "win.txt", "uno\ndos\ntres\n").value
    assert (tmp_path / "win.txt").read_bytes() == b"uno\r\ndos\r\ntres\r\n"
    assert "UTF-8 with BOM" in write(ex, "bom.txt", "y\n").value
    assert (tmp_path / "bom.txt").read_bytes() == codecs.BOM_UTF8 + b"y\n"
    assert "Windows-1252" in write(ex, "latin.txt", "naïve\n").value
    assert (tmp_path / "latin.txt").read_bytes() == "naïve\n".encode("cp1252")
    r = write(ex, "latin.txt", "emoji 😀\n")
    assert "wrote UTF-8" in r.value and (tmp_path / "latin.txt").read_text("utf-8") == "emoji 😀\n"


def test_identical_content_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "same.txt"
    target.write_text("same\n")
    os.utime(target, ns=(10**9, 10**9))
    r = write(ToolExecutor(tmp_path, ToolsConfig()), "same.txt", "same\n")
    assert "already has exactly this content" in r.value
    assert target.stat().st_mtime_ns == 10**9


def test_writes_through_an_in_workspace_symlink_keep_the_link(tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    (tmp_path / "dotfiles" / "rc").write_text("old\n")
    (tmp_path / ".rc").symlink_to("dotfiles/rc")
    r = write(ToolExecutor(tmp_path, ToolsConfig()), ".rc", "new\n")
    assert r.kind == "text" and "dotfiles/rc" in r.value
    assert (tmp_path / ".rc").is_symlink() and (tmp_path / "dotfiles" / "rc").read_text() == "new\n"


def test_bad_targets_are_errors_with_next_steps(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "file.txt").write_text("x")
    ex = ToolExecutor(tmp_path, ToolsConfig())
    r = write(ex, "d", "x")
    assert r.kind == "error" and "is a directory" in r.value and "d/notes.txt" in r.value
    r = write(ex, "file.txt/inner.txt", "x")
    assert r.kind == "error" and "is a file, not a directory" in r.value
    r = write(ex, "s.txt", "lone \ud800 surrogate")
    assert r.kind == "error" and "encoding" in r.value and not (tmp_path / "s.txt").exists()


def test_preview_describes_the_write_without_doing_it(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("a\nb\n")
    ex = ToolExecutor(tmp_path, ToolsConfig())
    created = ex.preview(ToolCall("p", "write", {"path": "new/n.txt", "content": "hi\n"}))
    assert created is not None and created.startswith("create new/n.txt (3 bytes, 1 line)")
    preview = ex.preview(ToolCall("p", "write", {"path": "old.txt", "content": "a\nc\n"}))
    assert preview.startswith("overwrite old.txt (4 bytes, 2 lines)\n--- a/old.txt") and "-b\n+c" in preview
    assert not (tmp_path / "new").exists() and (tmp_path / "old.txt").read_text() == "a\nb\n"
    assert ex.preview(ToolCall("p", "write", {"path": "../x", "content": "x"})) is None


def _writer_child(ws: Path, contents: list[str], ready: int) -> None:
    ex = ToolExecutor(ws, ToolsConfig())
    i = 0
    while True:
        write(ex, "target.txt", contents[i % len(contents)])
        if i == 0:
            os.write(ready, b"1")  # the first write is done: from now on any moment may be a kill
        i += 1


@contextlib.contextmanager
def tmpfs_directory(fallback: Path) -> Iterator[Path]:
    """A directory on tmpfs when there is one: fsync is free there, so many-write tests take seconds.
    A SIGKILL (unlike a power cut) tests the same thing on any file system."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield fallback
        return
    path = Path(tempfile.mkdtemp(dir=shm, prefix="vllm-bot-test-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    with tmpfs_directory(tmp_path) as path:
        yield path


def test_a_writer_killed_at_random_points_leaves_old_or_new_content(fast_dir: Path) -> None:
    """150 forked writers, each SIGKILLed at a random moment: the file is always one whole version."""
    tmp_path = fast_dir
    versions = ["initial\n" * 1000, "A" * 300_000 + "\n", "B" * 200_000 + "\n", "C\n" * 70_000]
    target = tmp_path / "target.txt"
    write(ToolExecutor(tmp_path, ToolsConfig()), "target.txt", versions[0])  # also imports what writes need
    seen = set()
    mid_write = 0  # kills that left a temp file: they landed inside a write
    rng = random.Random(7)
    for _ in range(150):
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                _writer_child(tmp_path, rng.sample(versions[1:], 3), ready_w)
            finally:
                os._exit(0)
        os.close(ready_w)
        os.read(ready_r, 1)
        os.close(ready_r)
        time.sleep(rng.uniform(0, 0.01))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        mid_write += any(TEMP_MARK in p.name for p in tmp_path.iterdir())
        content = target.read_text()
        assert content in versions
        seen.add(versions.index(content))
    assert len(seen) >= 3  # the kills landed after different writes
    assert mid_write >= 1  # and some inside one (about 10% do)
    leftovers = [p.name for p in tmp_path.iterdir() if TEMP_MARK in p.name]
    write(ToolExecutor(tmp_path, ToolsConfig()), "target.txt", "final\n")
    assert [p.name for p in tmp_path.iterdir()] == ["target.txt"], f"temp files left: {leftovers}"
