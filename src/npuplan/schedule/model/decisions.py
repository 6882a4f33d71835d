"""Scheduler decisions kept beside the graph: stripes, cascades, weight buffers, fast-storage FMs.

Search steps build new ``Decisions`` values with ``dataclasses.replace``; nothing is restored.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import field, replace

from npuplan.hw.memory import Architecture
from npuplan.records import record
from npuplan.schedule.model.network import Network
from npuplan.schedule.model.types import WeightBuffering


@record
class WeightPlan:
    """How one op's weights are fetched.

    ``depth_slices`` are OFM depth offsets closed at the end (``(0, 16, 64)``), ``slice_bytes`` the
    encoded bytes of each slice, ``buffer_bytes`` the fast-storage bytes held while the op runs,
    ``prebuffer`` whether the first buffer is filled while the previous op runs.
    """

    buffering: WeightBuffering = WeightBuffering.NONE
    stream_bytes: int = 0
    depth_slices: tuple[int, ...] = ()
    slice_bytes: tuple[int, ...] = ()
    buffer_bytes: int = 0
    prebuffer: bool = False

    @property
    def first_buffer_bytes(self) -> int:
        return self.slice_bytes[0] if self.slice_bytes else 0


NO_WEIGHT_BUFFER = WeightPlan()


@record
class RollingBuffer:
    """A feature map kept as a rolling buffer of ``rows`` rows, ``size_bytes`` in SRAM."""

    tensor_name: str
    rows: int
    size_bytes: int


@record
class CascadeSpan:
    """NPU ops ``start..end`` (inclusive indices into ``Network.npu_ops``) run stripe by stripe."""

    id: int
    start: int
    end: int
    rolling: tuple[RollingBuffer, ...] = ()


@record
class Decisions:
    """Everything chosen for one schedule; aligned with ``Network.npu_ops``.

    ``rolling_fms`` (derived from ``cascades``) names the cascades' rolling buffers.
    """

    ofm_rows: tuple[int, ...]
    weights: tuple[WeightPlan, ...]
    cascades: tuple[CascadeSpan, ...] = ()
    fast_fms: frozenset[str] = frozenset()
    staged_fms: frozenset[str] = frozenset()  # arena FMs DMA'd whole into fast storage before their first reader
    # derived from ``cascades`` on first use (``spliced`` hands them on from the value it splices)
    _rolling: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    _cascade_at: dict[int, CascadeSpan] | None = field(default=None, init=False, repr=False, compare=False)
    _ordered: bool | None = field(default=None, init=False, repr=False, compare=False)
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        """The hash of the compared fields, worked out once: the choosing steps key their memos by
        whole decision sets, whose tuples hold an entry per op (tuples do not keep their hashes)."""
        if self._hash is None:
            object.__setattr__(self, "_hash", hash((self.ofm_rows, self.weights, self.cascades, self.fast_fms,
                                                    self.staged_fms)))
        return self._hash  # type: ignore[return-value]

    @property
    def rolling_fms(self) -> frozenset[str]:
        if self._rolling is None:  # every costing asks where the rolling buffers are
            rolling = frozenset(r.tensor_name for c in self.cascades for r in c.rolling) if self.cascades else frozenset()
            object.__setattr__(self, "_rolling", rolling)
        return self._rolling  # type: ignore[return-value]

    def cascade_of(self, index: int) -> CascadeSpan | None:
        if self._cascade_at is None:  # op index -> its cascade: a lookup, not a scan of every cascade per op
            at = {i: c for c in reversed(self.cascades) for i in range(c.start, c.end + 1)} if self.cascades else {}
            object.__setattr__(self, "_cascade_at", at)
        return self._cascade_at.get(index)  # type: ignore[union-attr]

    def cascade_lookup(self) -> Callable[[int], CascadeSpan | None]:
        """``cascade_of`` as the index's own lookup, for a loop that asks it for op after op."""
        self.cascade_of(0)
        return self._cascade_at.get  # type: ignore[union-attr]

    @property
    def ordered(self) -> bool:
        """Whether the cascades are disjoint and in op order (as every search step makes them)."""
        if self._ordered is None:
            cs = self.cascades
            object.__setattr__(self, "_ordered", all(c.start <= c.end for c in cs)
                               and all(a.end < b.start for a, b in zip(cs, cs[1:])))
        return self._ordered  # type: ignore[return-value]

    def within(self, start: int, end: int) -> tuple[CascadeSpan, ...]:
        """The cascades inside ops ``start..end``, in ``cascades``' order (found by bisection when
        ``ordered``: a search step looks at its run, not at every cascade of the network)."""
        cs = self.cascades
        if not self.ordered:
            return tuple(c for c in cs if start <= c.start and c.end <= end)
        first = bisect_left(cs, start, key=_start)
        return cs[first:max(first, bisect_right(cs, end, key=_end))]


def _start(cascade: CascadeSpan) -> int:
    return cascade.start


def _end(cascade: CascadeSpan) -> int:
    return cascade.end


def spliced(
    dec: Decisions, cascade: CascadeSpan, *, ofm_rows: tuple[int, ...], weights: tuple[WeightPlan, ...],
    staged_fms: frozenset[str],
) -> Decisions:
    """``dec`` with ``cascade`` in place of the cascades inside its span (none may cross either
    end), placed by its start, and the other fields given; its derived lookups are ``dec``'s with
    the span's ops redone, so a search that splices one run at a time pays for the run, not for
    every cascade of the network. Cascade ids are kept as they are (``renumbered`` makes them
    positions again)."""
    s, e = cascade.start, cascade.end
    inside, cs = dec.within(s, e), dec.cascades
    first = bisect_left(cs, s, key=_start) if dec.ordered else -1
    after = first + len(inside)
    if first >= 0 and (first == 0 or cs[first - 1].end < s) and (after == len(cs) or cs[after].start > e):
        found = Decisions(ofm_rows, weights, cs[:first] + (cascade,) + cs[after:], dec.fast_fms, staged_fms)
        object.__setattr__(found, "_ordered", True)  # the span sits between its neighbours
    else:
        kept = [c for c in cs if not (s <= c.start and c.end <= e)]
        found = Decisions(ofm_rows, weights, tuple(sorted([*kept, cascade], key=_start)), dec.fast_fms, staged_fms)
    at = dict(dec._cascade_at) if dec._cascade_at is not None else None
    if at is not None:
        at.update((i, cascade) for i in range(s, e + 1))
        object.__setattr__(found, "_cascade_at", at)
    if dec._rolling is not None:
        gone = {r.tensor_name for c in inside for r in c.rolling}
        object.__setattr__(found, "_rolling", (dec._rolling - gone) | {r.tensor_name for r in cascade.rolling})
    return found


def renumbered(dec: Decisions) -> Decisions:
    """``dec`` with each cascade's id its position (the ids plans and reports show)."""
    if all(c.id == k for k, c in enumerate(dec.cascades)):
        return dec
    return replace(dec, cascades=tuple(c if c.id == k else replace(c, id=k) for k, c in enumerate(dec.cascades)))


def max_decisions(net: Network, arch: Architecture) -> Decisions:
    """Whole feature maps, no cascades, no weight buffers; FMs in fast storage iff the arena is."""
    fast = frozenset(net.fms) if not arch.is_dedicated_sram else frozenset()
    return Decisions(
        ofm_rows=tuple(op.ofm_shape.h for op in net.npu_ops),
        weights=tuple(NO_WEIGHT_BUFFER for _ in net.npu_ops),
        fast_fms=fast,
    )
