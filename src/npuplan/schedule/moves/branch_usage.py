"""A branch cascade's trial on a Size plan, in fast-storage bytes: the decisions with the run's
cascade spliced in, as ``usage.fm_buffers`` reads them (``SplicedView``), and the bytes live at
each time step (``TrialUsage``; ``BareUsage`` without the run's rolling buffers, which every
stripe height tried sizes anew), worked out from the decisions' own usage and the buffers the run
changes, not from scratch (``branch_cascades``' search tries hundreds of runs per plan)."""

from __future__ import annotations

from itertools import accumulate
from operator import add

from npuplan.schedule.model.decisions import CascadeSpan, Decisions


class SplicedView:
    """What ``usage.fm_buffers`` reads of ``base`` with a run's cascade spliced in (``spliced``),
    without building those decisions: most trials of the search are dropped at once."""

    __slots__ = ("base", "cascade", "fast_fms", "rolling_fms")

    def __init__(self, base: Decisions, cascade: CascadeSpan) -> None:
        self.base, self.cascade, self.fast_fms = base, cascade, base.fast_fms
        self.rolling_fms = SplicedRolling(base, cascade)

    def cascade_of(self, index: int) -> CascadeSpan | None:
        return self.cascade if self.cascade.start <= index <= self.cascade.end else self.base.cascade_of(index)


class SplicedRolling:
    """``rolling_fms`` of a ``SplicedView``: the base's, less the cascades the run replaces, plus its own."""

    __slots__ = ("base", "gone", "added")

    def __init__(self, base: Decisions, cascade: CascadeSpan) -> None:
        self.base = base.rolling_fms
        self.gone = {r.tensor_name for c in base.within(cascade.start, cascade.end) for r in c.rolling}
        self.added = {r.tensor_name for r in cascade.rolling}

    def __contains__(self, name: object) -> bool:
        return name in self.added or (name in self.base and name not in self.gone)


class TrialUsage:
    """A trial's fast-storage use per time step: ``base`` (its decisions' usage before the run was
    spliced in) plus ``changes`` (start, end, bytes added over those time steps). The search asks
    most trials only for their peak over a span and drops them: the whole list is made for those
    it keeps (``full``)."""

    __slots__ = ("base", "changes")

    def __init__(self, base: list[int], changes: list[tuple[int, int, int]]) -> None:
        self.base, self.changes = base, changes

    def peak(self, t0: int, t1: int) -> int:
        """The most bytes live at one time step of ``t0..t1``."""
        steps = [0] * (t1 - t0 + 2)  # each change added where it starts, taken off after it ends
        for start, end, size in self.changes:
            lo, hi = max(start, t0), min(end, t1)
            if lo <= hi:
                steps[lo - t0] += size
                steps[hi - t0 + 1] -= size
        return max(map(add, self.base[t0:t1 + 1], accumulate(steps)), default=0)

    def full(self) -> list[int]:
        usage = list(self.base)
        for start, end, size in self.changes:
            for t in range(start, end + 1):
                usage[t] += size
        return usage


class BareUsage:
    """A run's trial usage without its rolling buffers (``usage``), which all live over the run's
    time steps ``ts..te``: its peak over a span with any rolling bytes added is worked out from two
    maxima (over the steps the buffers live at and the rest), found once per span."""

    __slots__ = ("usage", "ts", "te", "_maxima")

    def __init__(self, usage: TrialUsage, ts: int, te: int) -> None:
        self.usage, self.ts, self.te = usage, ts, te
        self._maxima: dict[tuple[int, int], tuple[int | None, int | None]] = {}

    def peak_with(self, t0: int, t1: int, rolling_bytes: int) -> int:
        """The most bytes live at one step of ``t0..t1`` with ``rolling_bytes`` over ``ts..te``
        (``TrialUsage.peak`` with those buffers among the changes)."""
        found = self._maxima.get((t0, t1))
        if found is None:
            full = self.usage.full()
            lo, hi = max(t0, self.ts), min(t1, self.te)
            found = self._maxima[(t0, t1)] = (max(full[lo:hi + 1], default=None),
                                              max(full[t0:min(lo, t1 + 1)] + full[max(hi + 1, t0):t1 + 1], default=None))
        inside, outside = found
        steps = [] if inside is None else [inside + rolling_bytes]
        return max(steps if outside is None else steps + [outside], default=0)

    def with_rolling(self, cascade: CascadeSpan) -> TrialUsage:
        """The trial usage with ``cascade``'s rolling buffers."""
        return TrialUsage(self.usage.base, self.usage.changes + [(self.ts, self.te, r.size_bytes)
                                                                  for r in cascade.rolling])
