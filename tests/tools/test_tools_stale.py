"""A file that changed after the model read or wrote it: write refuses to replace it, edit says so."""

from __future__ import annotations

import os
from pathlib import Path

from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor


def run(ex: ToolExecutor, name: str, **args: object):
    return ex.execute(name, dict(args))


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    ex = ToolExecutor(tmp_path, ToolsConfig())
    target = tmp_path / "notes.txt"
    target.write_text("model saw this\n")
    assert run(ex, "read", path="notes.txt").kind == "text"
    target.write_text("model saw this\nthe user added this\n")
    bump_mtime(target)
    refused = run(ex, "write", path="notes.txt", content="model's version\n")
    assert refused.kind == "error" and "changed since you last read" in refused.value
    assert target.read_text() == "model saw this\nthe user added this\n"
    assert run(ex, "read", path="notes.txt").kind == "text"  # reading again clears it
    assert run(ex, "write", path="notes.txt", content="model's version\n").kind == "text"
    assert target.read_text() == "model's version\n"


def test_write_after_own_write_is_fine_but_not_after_a_change_behind_its_back(tmp_path: Path) -> None:
    ex = ToolExecutor(tmp_path, ToolsConfig())
    target = tmp_path / "a.py"
    assert run(ex, "write", path="a.py", content="x = 1\n").kind == "text"
    assert run(ex, "write", path="a.py", content="x = 2\n").kind == "text"
    target.write_text("x = 2  # user\n")
    bump_mtime(target)
    assert run(ex, "write", path="a.py", content="x = 3\n").kind == "error"
    assert target.read_text() == "x = 2  # user\n"


def test_touch_without_a_content_change_is_not_a_change(tmp_path: Path) -> None:
    ex = ToolExecutor(tmp_path, ToolsConfig())
    assert run(ex, "write", path="a.py", content="x = 1\n").kind == "text"
    bump_mtime(tmp_path / "a.py")
    assert run(ex, "write", path="a.py", content="x = 2\n").kind == "text"


def test_files_never_read_are_not_judged(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("before\n")
    ex = ToolExecutor(tmp_path, ToolsConfig())
    assert run(ex, "write", path="old.txt", content="after\n").kind == "text"


def test_edit_of_a_changed_file_applies_to_the_current_content_and_says_so(tmp_path: Path) -> None:
    ex = ToolExecutor(tmp_path, ToolsConfig())
    target = tmp_path / "m.py"
    target.write_text("a = 1\nb = 2\n")
    run(ex, "read", path="m.py")
    target.write_text("a = 1\nb = 2\nc = 3  # user\n")
    bump_mtime(target)
    done = run(ex, "edit", path="m.py", oldText="b = 2", newText="b = 20")
    assert done.kind == "text" and "had changed since you last read it" in done.value
    assert target.read_text() == "a = 1\nb = 20\nc = 3  # user\n"
    again = run(ex, "edit", path="m.py", oldText="a = 1", newText="a = 10")
    assert again.kind == "text" and "changed since" not in again.value
