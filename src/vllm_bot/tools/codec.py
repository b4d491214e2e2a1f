"""Text encodings as the file tools see them: detect, decode and encode back byte for byte.

`detect_format` picks a `TextFormat` whose decode/encode round trip is exact for the file's bytes:
BOM-marked UTF-8/16/32, strict UTF-8, UTF-8 with a few invalid bytes kept as surrogate escapes
(PEP 383), or a legacy 8-bit encoding (Windows-1252, else Latin-1, which maps every byte).
Never `errors="replace"` on anything that is written back.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

SNIFF_BYTES = 8192

_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE with BOM"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE with BOM"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8 with BOM"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE with BOM"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE with BOM"),
]

_MAGIC = [
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or jar/docx/xlsx/wheel)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\x7fELF", "ELF executable or library"),
    (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
    (b"\xca\xfe\xba\xbe", "Java class or Mach-O universal binary"),
    (b"MZ", "Windows executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
    (b"OggS", "Ogg media"),
    (b"ID3", "MP3 audio"),
    (b"fLaC", "FLAC audio"),
    (b"\x93NUMPY", "NumPy array"),
    (b"\x80\x04\x95", "Python pickle"),
]

_ESCAPED = re.compile("[\udc80-\udcff]")
_NON_ASCII = re.compile("[^\x00-\x7f\udc80-\udcff]")


@dataclass(frozen=True)
class TextFormat:
    """How a file's text is stored; `encode(decode(b)) == b` for the bytes it was detected on."""

    encoding: str = "utf-8"
    bom: bytes = b""
    errors: str = "strict"
    note: str = ""  # for messages; empty for plain UTF-8

    @property
    def wide(self) -> bool:
        """UTF-16/32: newlines are not single b'\\n' bytes."""
        return self.encoding.startswith(("utf-16", "utf-32"))

    def decode(self, data: bytes) -> str:
        if self.bom and data.startswith(self.bom):
            data = data[len(self.bom) :]
        return data.decode(self.encoding, self.errors)

    def decode_lossy(self, data: bytes) -> str:
        """The text for showing or diffing: undecodable bytes become U+FFFD, no leading BOM."""
        return data.decode(self.encoding, "replace").removeprefix("\ufeff")

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding, self.errors)


UTF8 = TextFormat()


def sniff_binary(head: bytes) -> str | None:
    """A description like "PNG image" if `head` (the first bytes of a file) is not text, else None."""
    textual = b"\x00" not in head[:SNIFF_BYTES] and _valid_utf8_prefix(head)
    for magic, kind in _MAGIC:
        # A printable magic ("GIF89a", "MZ") only counts when the rest does not read as text.
        if head.startswith(magic) and not (magic.isascii() and magic.decode().isprintable() and textual):
            return kind
    if head[4:8] == b"ftyp":
        return "MP4/QuickTime media"
    if head.startswith(b"RIFF") and head[8:12] in (b"WAVE", b"WEBP", b"AVI "):
        return {b"WAVE": "WAV audio", b"WEBP": "WebP image", b"AVI ": "AVI video"}[head[8:12]]
    if any(head.startswith(bom) for bom, _, _ in _BOMS):
        return None
    if b"\x00" in head[:SNIFF_BYTES]:
        return "binary data (contains NUL bytes)"
    return None


def _valid_utf8_prefix(data: bytes) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
        return True
    except UnicodeDecodeError:
        return False


def detect_format(data: bytes, *, partial: bool = False) -> TextFormat:
    """The format of `data` (a whole file, or its first bytes when `partial`)."""
    for bom, encoding, label in _BOMS:
        if data.startswith(bom):  # utf-8 invalid bytes after a BOM are kept as they are; wide ones refuse
            return TextFormat(encoding, bom, "surrogateescape" if encoding == "utf-8" else "strict", label)
    if _valid_utf8_prefix(data) if partial else _valid_utf8(data):
        return UTF8
    text = data.decode("utf-8", "surrogateescape")
    bad = sum(1 for _ in _ESCAPED.finditer(text))
    good = sum(1 for _ in _NON_ASCII.finditer(text))
    if good >= bad:
        return TextFormat(
            "utf-8",
            b"",
            "surrogateescape",
            f"UTF-8 with {bad:,} invalid byte{'' if bad == 1 else 's'} kept as they are",
        )
    try:
        data.decode("cp1252")
        return TextFormat("cp1252", note="Windows-1252, not valid UTF-8")
    except UnicodeDecodeError:
        return TextFormat("latin-1", note="Latin-1, not valid UTF-8")


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def newline_style(text: str) -> str:
    """The dominant line ending of `text`: '\\r\\n', '\\r' or '\\n' (the default)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if cr > crlf + lf:
        return "\r"
    return "\r\n" if crlf > lf else "\n"


def unencodable(text: str, fmt: TextFormat) -> str:
    """The characters of `text` that `fmt` cannot store (empty when all can), for error messages."""
    bad: list[str] = []
    for ch in dict.fromkeys(text):
        try:
            ch.encode(fmt.encoding, fmt.errors)
        except UnicodeEncodeError:
            bad.append(ch)
            if len(bad) >= 5:
                break
    return "".join(bad)
