"""edit: byte-exact preservation (property tests), diagnostics for misses, atomicity."""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_tools_write import tmpfs_directory

from vllm_bot.calls import ToolCall
from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor
from vllm_bot.tools.codec import detect_format, sniff_binary

TOKEN = "@@EDIT-TARGET@@"


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """These tests write (and fsync) hundreds of times: on tmpfs when there is one."""
    with tmpfs_directory(tmp_path) as path:
        yield path


def executor(ws: Path) -> ToolExecutor:
    return ToolExecutor(ws, ToolsConfig())


def edit(ex: ToolExecutor, path: str, old: str, new: str, **kw: object):
    return ex.execute("edit", {"path": path, "oldText": old, "newText": new, **kw})


# --- property tests ---------------------------------------------------------------------------

# Pieces of a line as raw bytes: ASCII, multi-byte UTF-8, lone Latin-1 bytes (invalid UTF-8),
# tabs, stray CRs. No NUL and no '@' (the token's character).
_piece = st.sampled_from(
    [
        *(b"a", b"Z", b" ", b"    ", b"\t", b"x = 1;"),
        *("é".encode(), "日本".encode(), "😀".encode()),
        *(b"\xe9", b"\xff", b"\x80", b"\r"),
    ]
)
_line = st.lists(_piece, max_size=6).map(b"".join)
_ending = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def files_with_token(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """(prefix, token line middle, suffix) raw bytes; the file is prefix + TOKEN + suffix."""
    lines = draw(st.lists(st.tuples(_line, _ending), min_size=0, max_size=8))
    body = b"".join(text + end for text, end in lines)
    cut = draw(st.integers(0, len(body)))
    while cut and body[cut - 1 : cut] == b"\r":
        cut -= 1  # never split a CRLF, never put the token right after a CR
    prefix, suffix = body[:cut], body[cut:]
    if draw(st.booleans()):
        suffix = suffix.rstrip(b"\r\n")  # no final newline
    if draw(st.booleans()):
        prefix = codecs.BOM_UTF8 + prefix
    return prefix, TOKEN.encode(), suffix


_new_text = st.lists(st.sampled_from(["new", "é", "  indent", "\n", "\t", "b = 2", "ZZ"]), max_size=6).map(
    lambda parts: "REPL<" + "".join(parts) + ">"
)

_settings = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_settings
@given(parts=files_with_token(), new=_new_text)
def test_bytes_outside_the_span_never_change_and_reverse_edit_restores(
    tmp_path: Path, parts, new: str
) -> None:
    prefix, token, suffix = parts
    original = prefix + token + suffix
    assume(sniff_binary(original[:8192]) is None)
    target = tmp_path / "f.txt"
    target.write_bytes(original)
    ex = executor(tmp_path)

    first = edit(ex, "f.txt", TOKEN, new)
    assert first.kind == "text", first.value
    after = target.read_bytes()
    assert after.startswith(prefix) and after.endswith(suffix)
    middle = after[len(prefix) : len(after) - len(suffix)]
    fmt = detect_format(original)
    assert middle.replace(b"\r\n", b"\n") == new.encode(fmt.encoding, fmt.errors)

    back = edit(ex, "f.txt", new, TOKEN)
    assert back.kind == "text", back.value
    assert target.read_bytes() == original


@_settings
@given(parts=files_with_token())
def test_zero_or_several_matches_leave_the_file_untouched(fast_dir: Path, parts) -> None:
    tmp_path = fast_dir
    prefix, token, suffix = parts
    data = prefix + token + suffix + b"\n" + token
    assume(sniff_binary(data[:8192]) is None)
    target = tmp_path / "g.txt"
    target.write_bytes(data)
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    before = os.stat(target)
    ex = executor(tmp_path)
    several = edit(ex, "g.txt", TOKEN, "x")
    none = edit(ex, "g.txt", "@@ABSENT@@", "x")
    assert several.kind == "error" and "matches 2 places" in several.value
    assert none.kind == "error" and "not found" in none.value
    after = os.stat(target)
    assert target.read_bytes() == data
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)


# --- examples ---------------------------------------------------------------------------------


def test_crlf_file_matched_with_lf_text_and_written_back_crlf(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    r = edit(executor(tmp_path), "w.txt", "one\ntwo\n", "uno\ndos\nmas\n")
    assert r.kind == "text"
    assert (tmp_path / "w.txt").read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"


def test_mixed_endings_follow_the_replaced_span(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"a\r\nb\r\nc\nd\n")
    ex = executor(tmp_path)
    assert edit(ex, "m.txt", "a\nb", "A\nB").kind == "text"
    assert edit(ex, "m.txt", "c\n", "C\nC2\n").kind == "text"
    assert (tmp_path / "m.txt").read_bytes() == b"A\r\nB\r\nC\nC2\nd\n"


def test_bom_no_final_newline_and_latin1_are_preserved(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(codecs.BOM_UTF8 + b"x = 1\ny = 2")
    (tmp_path / "l.txt").write_bytes("caf\xe9 = 1\nna\xefve = 2\n".encode("latin-1"))
    ex = executor(tmp_path)
    assert edit(ex, "b.txt", "y = 2", "y = 3").kind == "text"
    assert (tmp_path / "b.txt").read_bytes() == codecs.BOM_UTF8 + b"x = 1\ny = 3"
    assert edit(ex, "l.txt", "café = 1", "café = 10").kind == "text"
    assert (tmp_path / "l.txt").read_bytes() == "caf\xe9 = 10\nna\xefve = 2\n".encode("latin-1")
    r = edit(ex, "l.txt", "café = 10", "cafe = 😀")
    assert r.kind == "error" and "cannot store" in r.value


def test_utf16_file_is_edited_in_utf16(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_bytes(codecs.BOM_UTF16_LE + "alpha\r\nbeta\r\n".encode("utf-16-le"))
    assert edit(executor(tmp_path), "u.txt", "beta", "gamma").kind == "text"
    assert (tmp_path / "u.txt").read_bytes() == codecs.BOM_UTF16_LE + "alpha\r\ngamma\r\n".encode("utf-16-le")


def test_invalid_utf8_bytes_elsewhere_are_kept(tmp_path: Path) -> None:
    data = "héllo\n".encode() + b"bad \xff\xfe byte\n" + "wörld\n".encode()
    (tmp_path / "x.txt").write_bytes(data)
    assert edit(executor(tmp_path), "x.txt", "wörld", "welt").kind == "text"
    assert (tmp_path / "x.txt").read_bytes() == data.replace("wörld".encode(), b"welt")


def test_no_match_shows_closest_lines_with_numbers(tmp_path: Path) -> None:
    lines = [f"def function_{i}(arg):\n    return arg + {i}\n" for i in range(50)]
    (tmp_path / "c.py").write_text("".join(lines))
    r = edit(executor(tmp_path), "c.py", "def function_17(arg):\n    return arg - 17\n", "x")
    assert r.kind == "error"
    assert "closest lines are 35-36" in r.value
    assert "    35→def function_17(arg):" in r.value
    assert "'    return arg + 17'" in r.value


def test_no_match_points_out_indentation_differences(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("if x:\n\tprint(1)\n\tprint(2)\n")
    r = edit(executor(tmp_path), "t.py", "if x:\n    print(1)\n", "if y:\n    print(1)\n")
    assert r.kind == "error"
    assert "lines 1-2 only if whitespace is ignored" in r.value
    assert "tabs vs spaces" in r.value


def test_no_match_hints_for_line_number_prefixes_and_escaped_newlines(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("a = 1\nb = 2\n")
    ex = executor(tmp_path)
    r = edit(ex, "p.py", "     1→a = 1\n     2→b = 2", "z")
    assert "line-number prefixes" in r.value and "matches once they are removed" in r.value
    r = edit(ex, "p.py", "a = 1\\nb = 2", "z")
    assert "\\n instead of line breaks" in r.value and "line 1" in r.value


def test_several_matches_list_lines_and_replace_all_replaces_them(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("x\nfoo\ny\nfoo\nz\nfoo\n")
    ex = executor(tmp_path)
    r = edit(ex, "s.txt", "foo", "bar")
    assert r.kind == "error" and "matches 3 places" in r.value and "lines 2, 4, 6" in r.value
    r = edit(ex, "s.txt", "foo", "bar", replace_all=True)
    assert r.kind == "text" and "replaced 3 occurrences" in r.value
    assert (tmp_path / "s.txt").read_text() == "x\nbar\ny\nbar\nz\nbar\n"


def test_already_applied_and_empty_old_text(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\nimport sys\n")
    ex = executor(tmp_path)
    r = edit(ex, "a.py", "import json\n", "import sys\n")
    assert r.kind == "error" and "already applied" in r.value
    r = edit(ex, "a.py", "import os\n", "import os\nimport sys\n")
    assert r.kind == "error" and "already applied" in r.value  # applying again would duplicate
    r = edit(ex, "a.py", "", "x")
    assert r.kind == "error" and "oldText is empty" in r.value and "write" in r.value
    assert (tmp_path / "a.py").read_text() == "import os\nimport sys\n"


def test_accepts_the_argument_spellings_models_use(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("one two\n")
    ex = executor(tmp_path)
    for old_key, new_key, old, new in [
        ("old_text", "new_text", "one", "1"),
        ("old_string", "new_string", "two", "2"),
        ("old_str", "new_str", "1 2", "done"),
    ]:
        r = ex.execute("edit", {"file_path": "n.txt", old_key: old, new_key: new})
        assert r.kind == "text", r.value
    assert (tmp_path / "n.txt").read_text() == "done\n"


def test_diff_has_real_line_numbers_and_mode_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    target.chmod(0o751)
    r = edit(executor(tmp_path), "big.txt", "line 500\n", "line five hundred\nextra\n")
    assert r.kind == "text"
    assert "@@ -497,7 +497,8 @@" in r.value
    assert "-line 500" in r.value and "+line five hundred" in r.value
    assert target.stat().st_mode & 0o777 == 0o751


def test_edit_through_in_workspace_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("value = 1\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    r = edit(executor(tmp_path), "link.txt", "value = 1", "value = 2")
    assert r.kind == "text"
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "value = 2\n"


def test_binary_and_missing_files_are_refused_with_next_steps(tmp_path: Path) -> None:
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    ex = executor(tmp_path)
    r = edit(ex, "img.png", "PNG", "JPG")
    assert r.kind == "error" and "binary file (PNG image" in r.value
    r = edit(ex, "mising.png", "a", "b")
    assert r.kind == "error" and "does not exist" in r.value and "write" in r.value
    (tmp_path / "two  spaces").mkdir()
    r = edit(ex, "two  spaces/new.txt", "a", "b")
    assert r.value == "two  spaces/new.txt does not exist. To create a new file use write."


def test_preview_is_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "p.txt"
    target.write_text("alpha\nbeta\n")
    ex = executor(tmp_path)
    diff = ex.preview(ToolCall("p", "edit", {"path": "p.txt", "old_string": "beta", "new_string": "gamma"}))
    assert diff is not None and "-beta" in diff and "+gamma" in diff
    assert target.read_text() == "alpha\nbeta\n"
    assert ex.preview(ToolCall("p", "edit", {"path": "p.txt", "oldText": "nope", "newText": "x"})) is None


@pytest.mark.parametrize("old", ["x", "zz"])
def test_identical_old_and_new_text_is_refused(tmp_path: Path, old: str) -> None:
    (tmp_path / "i.txt").write_text("x\n")
    r = edit(executor(tmp_path), "i.txt", old, old)
    assert r.kind == "error" and "identical" in r.value


def test_closest_lines_for_a_single_token_typo(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(
        "".join(f"value_{i} = compute_{i}()\n" for i in range(300)) + "frobnicate_widget()\n"
    )
    r = edit(executor(tmp_path), "k.py", "frobnicate_widgte()", "x()")
    assert r.kind == "error" and "closest lines are 301-301" in r.value
