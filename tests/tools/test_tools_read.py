"""read: numbered windows with a header, bounded memory, listings, binaries, encodings, near names."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from pathlib import Path

from vllm_bot.config import ToolsConfig
from vllm_bot.tools import ToolExecutor

SRC = Path(__file__).resolve().parents[2] / "src"


def read(ws: Path, path: str, cfg: ToolsConfig | None = None, **kw: object):
    return ToolExecutor(ws, cfg or ToolsConfig()).execute("read", {"path": path, **kw})


def test_whole_file_with_numbered_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"import os\r\n\r\nprint(os.sep)")
    r = read(tmp_path, "a.py")
    assert r.kind == "text"
    header = "File a.py, lines 1-3 of 3 (whole file):"
    assert r.value == header + "\n     1→import os\n     2→\n     3→print(os.sep)"


def test_window_header_and_how_to_continue(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    first = read(tmp_path, "big.txt").value
    assert first.startswith("File big.txt, lines 1-2,000 of 5,000:\n     1→row 1\n")
    assert first.endswith("  2000→row 2000\n[3,000 more lines. Use read with offset=2001 to continue.]")
    last = read(tmp_path, "big.txt", offset=4001).value
    assert last.startswith("File big.txt, lines 4,001-5,000 of 5,000 (end of file):\n  4001→row 4001")
    middle = read(tmp_path, "big.txt", offset="2500", limit="3").value  # strings are coerced
    assert middle.split("\n")[1:4] == ["  2500→row 2500", "  2501→row 2501", "  2502→row 2502"]


def test_offset_past_the_end_says_how_many_lines_exist(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\nb\n")
    r = read(tmp_path, "s.txt", offset=10)
    assert r.kind == "error" and "has 2 lines" in r.value and "offset from 1 to 2" in r.value


def test_long_lines_are_cut_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 10_000 + "\nshort\n" + "é" * 3000 + "\n")
    r = read(tmp_path, "min.js").value.split("\n")
    assert r[1] == "     1→" + "x" * 2000 + " … [line truncated at 2,000 characters; it is 10,000 bytes long]"
    assert r[2] == "     2→short"
    assert r[3].endswith("it is 3,000 characters long]")


def test_character_budget_stops_at_a_whole_line(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("".join(f"{i:04d} " + "y" * 95 + "\n" for i in range(100)))
    r = read(tmp_path, "w.txt", ToolsConfig(read_max_chars=1000)).value
    assert "lines 1-9 of 100" in r and "Use read with offset=10 to continue" in r


def test_offset_deep_into_a_large_file_uses_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    line = b"%09d the quick brown fox jumps over the lazy dog\n"
    with big.open("wb") as f:
        for start in range(0, 1_500_000, 100_000):
            f.write(b"".join(line % i for i in range(start, start + 100_000)))
    script = (
        "import resource, sys\n"
        f"sys.path.insert(0, {str(SRC)!r})\n"
        "from pathlib import Path\n"
        "from vllm_bot.config import ToolsConfig\n"
        "from vllm_bot.tools import ToolExecutor\n"
        f"ex = ToolExecutor(Path({str(tmp_path)!r}), ToolsConfig())\n"
        "ex.execute('read', {'path': 'x'})\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = ex.execute('read', {'path': 'big.log', 'offset': 1_400_000, 'limit': 5})\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(after - before)\n"
        "print(r.value)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    growth_kb, value = out.split("\n", 1)
    assert big.stat().st_size > 70_000_000
    assert int(growth_kb) < 20_000  # a 72 MB file, read at line 1.4 M, costs < 20 MB
    assert "lines 1,400,000-1,400,004 of 1,500,000" in value
    assert "1400000→001399999 the quick brown fox" in value


def test_directory_listing_is_sorted_marked_and_capped(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "b.txt").write_text("12345")
    (tmp_path / "a.md").write_text("x" * 2500)
    (tmp_path / "link").symlink_to("b.txt")
    r = read(tmp_path, ".").value
    assert r == "Directory . (4 entries, 1 directory):\na.md  (2.5 KB)\nb.txt  (5 B)\nlink -> b.txt\nsrc/"
    many = tmp_path / "many"
    many.mkdir()
    for i in range(510):
        (many / f"f{i:03d}").write_text("")
    r = read(tmp_path, "many/").value
    assert r.startswith("Directory many/ (510 entries, 0 directories):\nf000  (0 B)")
    assert "f499  (0 B)\n... 10 more entries not shown" in r and "f500" not in r


def test_binary_files_are_refused_with_size_and_type(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(2000))
    (tmp_path / "data.bin").write_bytes(b"abc\x00def" * 10)
    r = read(tmp_path, "logo.png")
    assert r.kind == "error" and "binary file (PNG image, 2.0 KB)" in r.value and "exec" in r.value
    r = read(tmp_path, "data.bin")
    assert r.kind == "error" and "contains NUL bytes" in r.value and "70 B" in r.value


def test_non_utf8_text_is_shown_with_its_encoding(tmp_path: Path) -> None:
    (tmp_path / "l1.txt").write_bytes("Grüße, café\n".encode("cp1252"))
    (tmp_path / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"hello\n")
    (tmp_path / "u16.txt").write_bytes("zwei\r\nZeilen\r\n".encode("utf-16"))
    (tmp_path / "bad.txt").write_bytes("ok é\n".encode() + b"bad \xff\n")
    r = read(tmp_path, "l1.txt").value
    assert "File l1.txt (Windows-1252, not valid UTF-8), lines 1-1 of 1" in r and "     1→Grüße, café" in r
    r = read(tmp_path, "bom.txt").value
    assert "UTF-8 with BOM" in r and "     1→hello" in r
    r = read(tmp_path, "u16.txt").value
    assert "UTF-16" in r and "     1→zwei\n     2→Zeilen" in r
    r = read(tmp_path, "bad.txt").value
    assert "1 invalid byte" in r and "     2→bad �" in r


def test_missing_paths_suggest_near_names(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("")
    (tmp_path / "lib" / "deep").mkdir(parents=True)
    (tmp_path / "lib" / "deep" / "utils.py").write_text("")
    r = read(tmp_path, "src/utils.py")
    assert r.kind == "error" and "src/utils.py does not exist" in r.value
    assert "Similar names there: src/util.py" in r.value
    assert "Files named utils.py elsewhere: lib/deep/utils.py" in r.value
    r = read(tmp_path, "nodir/x.py")
    assert "Directory nodir/ does not exist; the nearest existing is ./" in r.value


def test_a_missing_path_with_double_spaces_is_shown_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "my  docs").mkdir()
    r = read(tmp_path, "my  docs/notes.txt")
    assert r.kind == "error"
    assert r.value == "my  docs/notes.txt does not exist. Use read on a directory to list it."


def test_fifo_and_empty_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "empty").write_text("")
    r = read(tmp_path, "pipe")
    assert r.kind == "error" and "named pipe" in r.value
    assert read(tmp_path, "empty").value == "empty is an empty file (0 bytes)."
