"""bash's ANSI-C quoting, `$'...'`: the value a quoted word stands for."""

from __future__ import annotations

import re

_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
                "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip
_ANSI_NUMERIC = (("x", 16, 2), ("u", 16, 4), ("U", 16, 8))


def decode_ansi_c(body: str) -> str | None:
    """The value of `$'body'` as bash computes it, or None when it depends on the locale or holds a
    NUL (bash cuts the word there)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
        elif e in "01234567":
            digits = re.match(r"[0-7]{1,2}", body[i:])
            taken = digits.group(0) if digits else ""
            out.append(chr(int(e + taken, 8) & 0xFF))
            i += len(taken)
        elif e == "c" and i < len(body):
            char = body[i]
            i += 1
            out.append("\x7f" if char == "?" else chr(ord(char.upper()) & 0x1F))
        elif any(e == letter for letter, _, _ in _ANSI_NUMERIC):
            most = next(width for letter, _, width in _ANSI_NUMERIC if letter == e)
            digits = re.match(rf"[0-9a-fA-F]{{1,{most}}}", body[i:])
            if not digits:
                out.append("\\" + e)
                continue
            out.append(chr(min(int(digits.group(0), 16), 0x10FFFF)))
            i += len(digits.group(0))
        else:
            out.append("\\" + e)
    value = "".join(out)
    if any(ord(ch) > 0x7F or ch == "\0" for ch in value) and value != body:
        return None
    return value
