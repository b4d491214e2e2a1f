"""Plain-text tables: columns padded to their widest cell, numbers on the right, long text cut with
an ellipsis, and cells of several lines (a balance in two commodities) kept together."""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"


def fit(text: str, width: int) -> str:
    """`text` cut to `width` characters, the last one an ellipsis when anything was cut."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + ELLIPSIS


def pad(text: str, width: int, right: bool = False) -> str:
    return text.rjust(width) if right else text.ljust(width)


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Sequence[int] = (),
    limits: dict[int, int] | None = None,
    separator: str = "  ",
) -> str:
    """Rows under headers, columns aligned; `right` are the columns aligned right (numbers); a cell
    with newlines spans as many lines; `limits` caps a column's width (cut with an ellipsis)."""
    limits = limits or {}
    split = [[cell.split("\n") for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in split:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    widths = [min(w, limits.get(i, w)) for i, w in enumerate(widths)]
    out = [separator.join(pad(fit(h, widths[i]), widths[i], i in right) for i, h in enumerate(headers))]
    out.append(separator.join("-" * w for w in widths))
    for row in split:
        height = max(len(lines) for lines in row)
        for n in range(height):
            cells = []
            for i, lines in enumerate(row):
                text = lines[n] if n < len(lines) else ""
                cells.append(pad(fit(text, widths[i]), widths[i], i in right))
            out.append(separator.join(cells).rstrip())
    return "\n".join(line.rstrip() for line in out) + "\n"


def indent(name: str, level: int, step: int = 2) -> str:
    """An account's display name in a tree: its last part, indented by its level."""
    return " " * (step * (level - 1)) + name
