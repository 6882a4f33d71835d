"""Fast-storage use over time for a set of decisions: live buffers, per-op usage and the peak."""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Protocol

from npuplan.memory.allocators import PlacementMemo, allocate
from npuplan.memory.live_range import LiveRange
from npuplan.records import record
from npuplan.schedule.model.decisions import CascadeSpan, Decisions
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.network import Network
from npuplan.units import ALIGN_BYTES, round_up

log = logging.getLogger(__name__)


@record
class Buffer:
    """One fast-storage buffer live over time steps ``start..end`` (inclusive)."""

    name: str
    start: int
    end: int
    size_bytes: int
    kind: str  # "fm", "rolling", "weights"


class CascadeView(Protocol):
    """What ``fm_buffers`` reads of a decision set (``Decisions``, or a search's view of one it
    has not built)."""

    @property
    def fast_fms(self) -> frozenset[str]: ...
    @property
    def rolling_fms(self) -> Container[str]: ...
    def cascade_of(self, index: int) -> CascadeSpan | None: ...


def fm_buffers(
    net: Network, dec: Decisions | CascadeView, names: Iterable[str] | None = None, *, inplace: bool = True,
    owner: Mapping[str, str] | None = None,
) -> list[Buffer]:
    """Fast-storage buffers of the whole feature maps among ``names`` (default: all of them).

    A cascade reads its input and writes its output throughout, so their lifetimes stretch over it.
    With ``inplace``, an elementwise op's OFM shares the buffer of the input it overwrites
    (``inplace.inplace_outputs``, or ``owner`` when the caller already has them); ``names`` must
    then be closed under those pairs (``inplace_group``) for shared buffers to come out whole.
    """
    if not dec.fast_fms:  # nothing to gather, nor any in-place pair to look for
        return []
    rolling_names = dec.rolling_fms
    if owner is None:
        assert isinstance(dec, Decisions), "a view comes with its in-place pairs"
        owner = inplace_outputs(net, dec) if inplace else {}
    # a cascade reads its whole inputs and writes its whole outputs throughout: a map read by any
    # of its ops lives to its last op's time step, one written by any of them from its first op's
    spans: dict[str, tuple[int, int, int]] = {}
    fms, times, fast = net.fms, net.times, dec.fast_fms
    cascade_of = dec.cascade_lookup() if isinstance(dec, Decisions) else dec.cascade_of
    for name in fms if names is None else names:
        if name not in fast or name in rolling_names:  # ``fms`` is keyed by name
            continue
        fm = fms[name]
        start, end = fm.start, fm.end
        writing = cascade_of(fm.producer) if fm.producer >= 0 else None
        if writing is not None and times[writing.start] < start:
            start = times[writing.start]
        for k in fm.consumers:
            reading = cascade_of(k)
            if reading is not None and times[reading.end] > end:
                end = times[reading.end]
        root = name
        while root in owner:
            root = owner[root]
        found = spans.get(root)
        spans[root] = (start, end, fm.size_bytes) if found is None else (
            min(found[0], start), max(found[1], end), max(found[2], fm.size_bytes))
    return [Buffer(name, start, end, size, "fm") for name, (start, end, size) in spans.items()]


def inplace_mates(owner: Mapping[str, str]) -> dict[str, list[str]]:
    """Per feature map, the maps it shares a buffer with directly under the in-place pairs
    ``owner`` (OFM -> input; both directions): built once, it serves many ``inplace_group`` calls."""
    mates: dict[str, list[str]] = {}
    for out, inp in owner.items():
        mates.setdefault(out, []).append(inp)
        mates.setdefault(inp, []).append(out)
    return mates


def inplace_group(
    owner: Mapping[str, str], names: Iterable[str], *, mates: Sequence[Mapping[str, list[str]]] | None = None,
) -> set[str]:
    """``names`` closed under the in-place pairs ``owner`` (OFM -> input; both directions), or
    under every one of ``mates`` (``inplace_mates`` of one or more pair sets) when given."""
    tables = (inplace_mates(owner),) if mates is None else mates
    found = set(names)
    todo = list(found)
    while todo:
        name = todo.pop()
        for table in tables:
            for other in table.get(name, ()):
                if other not in found:
                    found.add(other)
                    todo.append(other)
    return found


def fast_buffers(net: Network, dec: Decisions, *, inplace: bool = True) -> list[Buffer]:
    """Every buffer the decisions put in fast storage. With ``inplace``, an elementwise op's OFM
    shares the buffer of the input it overwrites (``inplace.inplace_outputs``)."""
    out = list(_whole_fm_buffers(net, dec, inplace))
    out += rolling_buffers(net, dec.cascades)
    out += weight_buffers(net, dec, range(len(net.npu_ops)))
    for name in sorted(dec.staged_fms):  # a staged copy lives from its first reader to its last
        fm = net.fms[name]
        out.append(Buffer(staged_name(name), net.times[fm.first_reader], net.times[fm.last_reader],
                          round_up(fm.size_bytes, ALIGN_BYTES), "staged"))
    return out


_FM_BUFFER_SETS = 8  # ``_whole_fm_buffers`` kept per network: the choosing steps come back to a few


def _whole_fm_buffers(net: Network, dec: Decisions, inplace: bool) -> tuple[Buffer, ...]:
    """``fm_buffers`` of every feature map, memoised per network on the objects of all it reads of
    ``dec``, its cascades and fast-storage maps (kept alive with the answer, so their ids stay
    theirs): the decision sets a search derives from one another share them (weights chosen
    again, every proposal's peak). The most recent few are kept (each holds a buffer per map)."""
    memo = net.derived(_new_memo)
    key = (id(dec.cascades), id(dec.fast_fms), inplace)
    found = memo.pop(key, None)
    if found is None:
        found = (dec.cascades, dec.fast_fms, tuple(fm_buffers(net, dec, inplace=inplace)))
        if len(memo) >= _FM_BUFFER_SETS:
            del memo[next(iter(memo))]
    memo[key] = found  # the most recent last
    return found[2]


def _new_memo(_net: Network) -> dict[tuple[int, int, bool], tuple[object, object, tuple[Buffer, ...]]]:
    return {}


def rolling_buffers(net: Network, cascades: Iterable[CascadeSpan]) -> list[Buffer]:
    """The rolling buffers of ``cascades``, each live over its cascade's time span."""
    return [Buffer(r.tensor_name, net.times[c.start], net.times[c.end], r.size_bytes, "rolling")
            for c in cascades for r in c.rolling]


def weight_buffers(net: Network, dec: Decisions, indices: Iterable[int]) -> list[Buffer]:
    """The fast-storage weight buffers of the NPU ops at ``indices``: over the op's time step, its
    cascade's span, or from the op before when prebuffered."""
    out: list[Buffer] = []
    for i in indices:
        plan = dec.weights[i]
        if plan.buffer_bytes == 0:
            continue
        t = net.times[i]
        start, end = t, t
        cascade = dec.cascade_of(i)
        if cascade is not None:
            start, end = net.times[cascade.start], net.times[cascade.end]
        elif plan.prebuffer and i > 0:
            start = net.times[i - 1]
        out.append(Buffer(f"{net.npu_ops[i].name}_weights", start, end,
                          round_up(plan.buffer_bytes, ALIGN_BYTES), "weights"))
    return out


def staged_name(fm_name: str) -> str:
    """Name of the fast-storage copy of a staged feature map."""
    return f"{fm_name}#staged"


def peak_bytes(net: Network, dec: Decisions) -> int:
    """The most fast-storage bytes live at once under ``dec`` (before allocation)."""
    return max(usage_by_time(net, fast_buffers(net, dec)), default=0)


def usage_by_time(net: Network, buffers: list[Buffer]) -> list[int]:
    """Bytes of fast storage live at each time step."""
    usage = [0] * (net.last_time + 1)
    for b in buffers:
        for t in range(b.start, b.end + 1):
            usage[t] += b.size_bytes
    return usage


def allocated_peak_bytes(buffers: list[Buffer], allocator: object, memo: PlacementMemo | None = None) -> int:
    """The peak address after real allocation (the memory package; ``memo`` its HillClimb memo),
    or the live-bytes peak."""
    if not buffers:
        return 0
    ranges = [LiveRange(f"{b.kind}:{b.name}", b.start, b.end, b.size_bytes) for b in buffers]
    return int(allocate(ranges, allocator=allocator, alignment=ALIGN_BYTES,  # type: ignore[arg-type]
                        memo=memo).peak_bytes)


def _live_peak(buffers: list[Buffer]) -> int:
    last = max(b.end for b in buffers)
    usage = [0] * (last + 1)
    for b in buffers:
        for t in range(b.start, b.end + 1):
            usage[t] += b.size_bytes
    return max(usage)
