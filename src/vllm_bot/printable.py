"""Text from outside (a repository, the model, a command's output) as a terminal may print it:
control, bidi and invisible characters shown as escapes, so the text can neither move the cursor nor
read differently from what it is. Shared, because every wing that prints such text needs it."""

from __future__ import annotations

import unicodedata

# Bidi controls can make a command read differently from what runs ("Trojan Source").
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_INVISIBLE = set("\u200b\u200c\u200d\u2060\ufeff")
# Letters that print as blank space (the Hangul fillers)
_BLANK_LETTERS = set("\u115f\u1160\u3164\uffa0")
# control, surrogate, format (tags U+E0020.., soft hyphen, ...), line and paragraph separators
_ESCAPED_CATEGORIES = ("Cc", "Cs", "Cf", "Zl", "Zp")


def safe_text(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with control, bidi and invisible characters shown as escapes (`\\x1b`, `\\u202e`)."""
    out: list[str] = []
    for ch in text:
        if (ch == "\n" and keep_newlines) or ch == "\t":
            out.append(ch)
        elif (
            ch in _BIDI
            or ch in _INVISIBLE
            or ch in _BLANK_LETTERS
            or unicodedata.category(ch) in _ESCAPED_CATEGORIES
        ):
            code = ord(ch)
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
        else:
            out.append(ch)
    return "".join(out)
