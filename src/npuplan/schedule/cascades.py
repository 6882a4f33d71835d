"""Cascades: chains of ops run stripe by stripe with NHCWB16 rolling buffers between them.

Search: each linear chain (single-consumer links, no CPU op between, shapes matching) is split
into segments by dynamic programming over (segment end, segment start, final stripe height); every
segment's fast-storage use is computed exactly over its time span, and the DP keeps the fastest
split that fits (Performance) or the smallest peak, then fastest (Size). Choosing is separate from
proposing: ``_segment_options`` proposes, ``_best_split`` chooses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise
from npuplan.schedule.costing import cost_op
from npuplan.schedule.decisions import CascadeSpan, Decisions, RollingBuffer
from npuplan.schedule.geometry import (
    is_cascadable,
    min_stripe_rows,
    producer_rows_for,
    rolling_buffer_bytes,
    rolling_rows,
)
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle
from npuplan.schedule.usage import fast_buffers, usage_by_time

MAX_CASCADE_OPS = 12


@dataclass(frozen=True, slots=True)
class Segment:
    start: int
    end: int
    rows: tuple[int, ...]  # OFM stripe rows of each op in the segment
    rolling: tuple[RollingBuffer, ...]
    peak_bytes: int
    cycles: int


def chains(net: Network) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of NPU ops that could be cascaded together."""
    runs: list[tuple[int, int]] = []
    start = 0
    for k in range(1, len(net.npu_ops) + 1):
        if k == len(net.npu_ops) or not _linked(net, k - 1, k):
            runs.append((start, k - 1))
            start = k
    return [r for r in runs if r[1] > r[0]]


def _linked(net: Network, a: int, b: int) -> bool:
    pa, pb = net.npu_ops[a], net.npu_ops[b]
    fm = net.fms.get(pa.ofm.name)
    return (
        net.times[b] == net.times[a] + 1
        and pb.ifm.name == pa.ofm.name
        and fm is not None and fm.consumers == (b,) and not fm.whole_reason
        and pa.ofm_shape == pb.ifm_shape
        and is_cascadable(pa) and is_cascadable(pb)
    )


def stripe_candidates(height: int, minimum: int) -> list[int]:
    """Final stripe heights to try: every small height, then a geometric spread up to half."""
    found = set(range(minimum, min(height // 2, 8) + 1))
    h = 8
    while h <= height // 2:
        found.add(h)
        found.add(max(minimum, height // max(1, height // h)))
        h = h * 3 // 2 + 1
    return sorted(x for x in found if minimum <= x <= max(height // 2, minimum))


def _segment(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle,
             base: list[int], s: int, e: int, final_rows: int, *, thin: bool = False) -> Segment:
    """Ops ``s..e`` cascaded with ``final_rows`` OFM rows per stripe of op ``e``.

    Producers run ``consumer rows x stride`` rows per stripe (Vela's proposal), or one row per
    stripe when ``thin`` (smaller rolling buffers, more stripes).
    """
    ops = net.npu_ops
    rows = [0] * (e - s + 1)
    rows[-1] = final_rows
    for k in range(e, s, -1):
        rows[k - 1 - s] = 1 if thin else producer_rows_for(ops[k], rows[k - s])
    rolling = tuple(
        RollingBuffer(ops[k].ofm.name,
                      rolling_rows(ops[k], rows[k - s], ops[k + 1], rows[k + 1 - s]),
                      rolling_buffer_bytes(ops[k], rows[k - s], ops[k + 1], rows[k + 1 - s]))
        for k in range(s, e)
    )
    ts, te = net.times[s], net.times[e]
    inner = [net.fms[ops[k].ofm.name] for k in range(s, e)]
    first_in, last_out = net.fms.get(ops[s].ifm.name), net.fms[ops[e].ofm.name]
    extra = sum(r.size_bytes for r in rolling)
    peak = 0
    for t in range(ts, te + 1):
        u = base[t] + extra - sum(f.size_bytes for f in inner if f.start <= t <= f.end and f.name in dec.fast_fms)
        if first_in is not None and first_in.name in dec.fast_fms and not first_in.start <= t <= first_in.end:
            u += first_in.size_bytes
        if last_out.name in dec.fast_fms and not last_out.start <= t <= last_out.end:
            u += last_out.size_bytes
        peak = max(peak, u)
    trial = replace(dec, ofm_rows=dec.ofm_rows[:s] + tuple(rows) + dec.ofm_rows[e + 1:],
                    cascades=(CascadeSpan(-1, s, e, rolling),))
    cycles = sum(cost_op(net, trial, arch, oracle, k).cycles for k in range(s, e + 1))
    return Segment(s, e, tuple(rows), rolling, peak, cycles)


def _single(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, base: list[int], k: int) -> Segment:
    t = net.times[k]
    return Segment(k, k, (net.npu_ops[k].ofm_shape.h,), (), base[t], cost_op(net, dec, arch, oracle, k).cycles)


def _segment_options(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle,
                     base: list[int], first: int, last: int, e: int) -> list[Segment]:
    """Every segment ending at op ``e`` (starting no earlier than ``first``) worth considering."""
    found = [_single(net, dec, arch, oracle, base, e)]
    consumer = net.npu_ops[e + 1] if e < last else None
    op_e = net.npu_ops[e]
    heights = stripe_candidates(op_e.ofm_shape.h, min_stripe_rows(op_e, consumer))
    for s in range(max(first, e - MAX_CASCADE_OPS + 1), e):
        for h in heights:
            found.append(_segment(net, dec, arch, oracle, base, s, e, h))
        if heights and any(net.npu_ops[k].kernel.stride_y > 1 or heights[0] > 1 for k in range(s + 1, e + 1)):
            found.append(_segment(net, dec, arch, oracle, base, s, e, heights[0], thin=True))
    return found


def _best_split(options_by_end: dict[int, list[Segment]], first: int, last: int,
                limit: int, optimise: Optimise) -> list[Segment]:
    """DP over segment ends. Performance: least bytes over ``limit``, then fastest.
    Size: smallest peak, then fastest."""
    best: dict[int, tuple[tuple[int, int], list[Segment]]] = {first - 1: ((0, 0), [])}
    for e in range(first, last + 1):
        for seg in options_by_end[e]:
            prev = best.get(seg.start - 1)
            if prev is None:
                continue
            if optimise is Optimise.SIZE:
                head = max(prev[0][0], seg.peak_bytes)
            else:
                head = prev[0][0] + max(0, seg.peak_bytes - limit)
            key = (head, prev[0][1] + seg.cycles)
            if e not in best or key < best[e][0]:
                best[e] = (key, prev[1] + [seg])
    return best[last][1]


def build_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, optimise: Optimise,
) -> Decisions:
    """Cascade every chain where it helps fit ``budget`` (Performance) or shrink the peak (Size).

    Size runs twice: the first pass finds the smallest peak the network can reach, the second
    spends the memory below that peak on speed (the fastest split within it, chain by chain).
    """
    # segment peaks subtract the chain's own FMs one by one, so count shared buffers separately
    base = usage_by_time(net, fast_buffers(net, dec, inplace=False))
    runs = chains(net)
    options = {run: {e: _segment_options(net, dec, arch, oracle, base, run[0], run[1], e)
                     for e in range(run[0], run[1] + 1)}
               for run in runs
               if optimise is Optimise.SIZE or max(base[net.times[run[0]]:net.times[run[1]] + 1]) > budget}
    limit = budget
    if optimise is Optimise.SIZE:
        in_chain = {t for a, b in runs for t in range(net.times[a], net.times[b] + 1)}
        floor = max((u for t, u in enumerate(base) if t not in in_chain), default=0)
        for run, opts in options.items():
            split = _best_split(opts, run[0], run[1], budget, Optimise.SIZE)
            floor = max(floor, max(seg.peak_bytes for seg in split))
        limit = min(budget, floor) if floor <= budget else floor
    rows = list(dec.ofm_rows)
    spans: list[CascadeSpan] = list(dec.cascades)
    for run, opts in options.items():
        for seg in _best_split(opts, run[0], run[1], limit, Optimise.PERFORMANCE):
            if seg.start == seg.end:
                continue
            rows[seg.start:seg.end + 1] = seg.rows
            spans.append(CascadeSpan(len(spans), seg.start, seg.end, seg.rolling))
    return replace(dec, ofm_rows=tuple(rows), cascades=tuple(sorted(spans, key=lambda c: c.start)))
