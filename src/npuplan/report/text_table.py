"""A plain-text table that fits a terminal's width without cutting a number.

Numbers are right-aligned and printed whole. When the rows are wider than the terminal, the
columns are dealt into several tables, each within the width and each starting with the row
number ``#``, so every figure stays readable at 80 columns; a text column too long even alone (an
op's name) is shortened in the middle with ``…`` (the CSV has it whole).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

ELLIPSIS = "\u2026"
_GAP = "  "


def shorten(text: str, width: int) -> str:
    """``text`` within ``width`` characters: its start and end around ``…``."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = (width - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head):]


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]], *, width: int | None = None,
                text_columns: Collection[int] = ()) -> list[str]:
    """``rows`` (cells already formatted) under ``header``; ``width``: the terminal's columns (None:
    unbounded, one table); ``text_columns``: indices left-aligned (the others are numbers)."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    if width is None or sum(widths) + len(_GAP) * (len(widths) - 1) <= width:
        return _block(header, rows, list(range(len(header))), widths, text_columns)
    index = [str(n) for n in range(1, len(rows) + 1)]
    index_width = max(1, len(index[-1]) if index else 1)
    numbered_header = ["#", *header]
    numbered_rows = [[n, *r] for n, r in zip(index, rows)]
    numbered_widths = [index_width, *widths]
    texts = {0, *(i + 1 for i in text_columns)}
    lines: list[str] = []
    for group in _groups(numbered_widths, width):
        fitted = list(numbered_widths)
        room = width - sum(fitted[i] for i in group) - len(_GAP) * (len(group) - 1)
        for i in group:  # a text column too wide even alone is shortened (numbers never are)
            if room < 0 and i in texts and i != 0:
                fitted[i] = max(len(numbered_header[i]), fitted[i] + room)
                room = 0
        cells = [[shorten(c, fitted[i]) for i, c in enumerate(r)] for r in numbered_rows]
        if lines:
            lines.append("")
        lines += _block(numbered_header, cells, group, fitted, texts)
    return lines


def _groups(widths: Sequence[int], width: int) -> list[list[int]]:
    """Columns 1.. dealt in order into groups that fit ``width`` after column 0 (the row number)."""
    groups: list[list[int]] = []
    current = [0]
    used = widths[0]
    for i in range(1, len(widths)):
        need = len(_GAP) + widths[i]
        if len(current) > 1 and used + need > width:
            groups.append(current)
            current, used = [0], widths[0]
        current.append(i)
        used += need
    groups.append(current)
    return groups


def _block(header: Sequence[str], rows: Sequence[Sequence[str]], columns: Sequence[int], widths: Sequence[int],
           texts: Collection[int]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return _GAP.join(f"{cells[i]:<{widths[i]}}" if i in texts else f"{cells[i]:>{widths[i]}}"
                         for i in columns).rstrip()

    rule = _GAP.join("-" * widths[i] for i in columns)
    return [line(header), rule, *(line(r) for r in rows)]
