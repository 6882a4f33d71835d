"""A model of one memory area's contents: which bytes hold which data.

Bytes are labelled ``(content, base)``: the byte at address ``x`` holds byte ``x - base`` of
``content`` (a tensor, laid out row after row, or an encoded weight stream). A rolling buffer's
laps get different bases, so a row overwritten by a later lap no longer matches. Labels are kept
as sorted, non-overlapping byte intervals.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import field

from npuplan.records import record

Label = tuple[str, int]


@record(eq=False, frozen=False)
class AreaContents:
    """Sorted intervals ``[starts[i], ends[i])`` holding ``labels[i]``."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)

    def _overlapping(self, lo: int, hi: int) -> tuple[int, int]:
        """Index range of intervals intersecting ``[lo, hi)``."""
        first = bisect_right(self.starts, lo) - 1
        if first < 0 or self.ends[first] <= lo:
            first += 1
        last = bisect_left(self.starts, hi)
        return first, last

    def write(self, lo: int, hi: int, label: Label) -> None:
        """Bytes ``[lo, hi)`` now hold ``label``."""
        if hi <= lo:
            return
        first, last = self._overlapping(lo, hi)
        keep_s: list[int] = []
        keep_e: list[int] = []
        keep_l: list[Label] = []
        if first < last and self.starts[first] < lo:
            keep_s.append(self.starts[first])
            keep_e.append(lo)
            keep_l.append(self.labels[first])
        keep_s.append(lo)
        keep_e.append(hi)
        keep_l.append(label)
        if first < last and self.ends[last - 1] > hi:
            keep_s.append(hi)
            keep_e.append(self.ends[last - 1])
            keep_l.append(self.labels[last - 1])
        self.starts[first:last] = keep_s
        self.ends[first:last] = keep_e
        self.labels[first:last] = keep_l

    def pieces(self, lo: int, hi: int) -> list[tuple[int, int, Label | None]]:
        """``[lo, hi)`` cut into pieces with their label (``None`` for bytes never written)."""
        out: list[tuple[int, int, Label | None]] = []
        at = lo
        first, last = self._overlapping(lo, hi)
        for i in range(first, last):
            s, e = max(self.starts[i], lo), min(self.ends[i], hi)
            if s > at:
                out.append((at, s, None))
            out.append((s, e, self.labels[i]))
            at = e
        if at < hi:
            out.append((at, hi, None))
        return out

    def mismatch(self, lo: int, hi: int, label: Label) -> tuple[int, int, Label | None] | None:
        """The first piece of ``[lo, hi)`` that does not hold ``label`` (``None`` if all do)."""
        for piece in self.pieces(lo, hi):
            if piece[2] != label:
                return piece
        return None
