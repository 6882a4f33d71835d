"""Cascades: chains of ops run stripe by stripe with NHCWB16 rolling buffers between them.

Search: each linear chain (single-consumer links, no CPU op between, shapes matching) is split
into segments by dynamic programming over (segment end, segment start, final stripe height, and
whether producers follow their consumer's stripe or make one row at a time); every segment's
fast-storage use is computed exactly over its time span, and the DP keeps the fastest split that
fits the limit (weight buffers counted in the room a split leaves): for Performance the budget,
for Size the least peak any split reaches (``_least_peak``), or more where that buys enough speed.
Choosing is separate from proposing: ``_proposals`` and ``_segment_options`` propose (cascades
peaking above every limit the DP will be given are never costed), ``_best_split`` chooses.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from itertools import accumulate

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise
from npuplan.schedule.pricing.costing import cost_op, rolling_format
from npuplan.schedule.model.decisions import CascadeSpan, Decisions, RollingBuffer
from npuplan.schedule.model.geometry import (
    aligned_stripe_rows,
    is_cascadable,
    links_rolling,
    min_stripe_rows,
    producer_rows_for,
    rolling_buffer_bytes,
    rolling_rows,
)
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.usage import fast_buffers, fm_buffers, inplace_group, inplace_mates, usage_by_time
from npuplan.schedule.moves.weights import (
    candidate_plans,
    cascade_weight_option,
    floor_cycles,
    held_bytes,
    needs_dma,
    weight_frontier,
)

log = logging.getLogger(__name__)

MAX_CASCADE_OPS = 12


@dataclass(frozen=True, slots=True)
class Segment:
    """A proposed run of ops ``start..end`` (a cascade, or one op when ``start == end``).

    ``peak_bytes`` is the fast-storage peak over its time span without weight buffers; ``cycles``
    its cycles with weights read in place. ``weight_options`` are ``(bytes, cycles saved)`` choices
    that buffering weights offers: for a cascade, one per op (full depth, any subset may be taken;
    the saving is net of the whole-weight copy, which the cost model charges); for a single op,
    alternative plans (at most one is taken).
    """

    start: int
    end: int
    rows: tuple[int, ...]  # OFM stripe rows of each op in the segment
    rolling: tuple[RollingBuffer, ...]
    peak_bytes: int
    cycles: int
    weight_options: tuple[tuple[int, int], ...] = ()
    # a single op's weight choices as a step function of the room left (built once: the search
    # asks often); a cascade's cycles with every weight that saves any held
    _rooms: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _within: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _all_bytes: int = field(init=False, repr=False, compare=False)
    _all_cycles: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rooms, within = _single_steps(self) if self.start == self.end else ((), ())
        saving = [(size, saved) for size, saved in self.weight_options if saved > 0]
        object.__setattr__(self, "_rooms", rooms)
        object.__setattr__(self, "_within", within)
        object.__setattr__(self, "_all_bytes", sum(size for size, _ in saving))
        object.__setattr__(self, "_all_cycles", self.cycles - sum(saved for _, saved in saving))

    def cycles_within(self, limit: int | None) -> int:
        """Cycles with the weight buffering that fits between the peak and ``limit`` (None: none):
        the plan's own cycles, as the weight pass (``weights.propose_weight_buffering``) chooses."""
        if limit is None or not self.weight_options:
            return self.cycles
        room = limit - self.peak_bytes
        if self.start == self.end:
            at = bisect.bisect_right(self._rooms, room) - 1
            return self._within[at] if at >= 0 else self.cycles
        if room < 0 or room >= self._all_bytes:
            return self._all_cycles
        return self.cycles - _most_saved(self.weight_options, room)

    def fewest_cycles(self) -> int:
        """The least ``cycles_within`` under any limit."""
        if self.start != self.end:
            return self._all_cycles
        return min(self.cycles, *self._within) if self.weight_options else self.cycles


def _single_steps(seg: Segment) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Room thresholds (bytes, ascending) with a single op's cycles within once that much room is
    left: it takes its best-saving option that fits (none below the first threshold)."""
    rooms, within, best = [], [], None
    for size, saved in sorted(seg.weight_options):
        best = saved if best is None else max(best, saved)
        rooms.append(size)
        within.append(seg.cycles - best)
    return tuple(rooms), tuple(within)


def _most_saved(options: tuple[tuple[int, int], ...], room: int) -> int:
    """The most cycles a subset of a cascade's ``(bytes, cycles saved)`` weight options saves
    within ``room`` bytes (``weights.weight_frontier``; the best subset ``weights.best_weight_subset``
    takes). Only a room short of every saving option needs the frontier: a negative room takes
    them all, as ``best_weight_subset`` does, and so does one that holds them all."""
    frontier = weight_frontier(options)
    return -int(frontier[bisect.bisect_right(frontier, (room, math.inf)) - 1][1])


@dataclass(frozen=True, eq=False)
class _Context:
    """What every segment proposal reads: the decisions so far, their usage and who is live when."""

    net: Network
    dec: Decisions
    arch: Architecture
    oracle: CostOracle
    base: list[int]
    live_at: list[frozenset[str]]  # full feature maps in fast storage at each time step
    owner: dict[str, str]  # in-place pairs of ``dec``: OFM -> the input it overwrites
    mates: dict[str, list[str]]  # ``inplace_mates(owner)``
    with_weights: bool
    op_memo: dict[tuple[int, int, bool, bool, int], tuple[int, tuple[int, int] | None, int]] = field(
        default_factory=dict)
    span_memo: dict[tuple[int, int], int] = field(default_factory=dict)  # ``_span_peak`` of (start, end)
    rolling_memo: dict[tuple[int, int, int], RollingBuffer] = field(default_factory=dict)


def _context(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, *, with_weights: bool) -> _Context:
    live: list[set[str]] = [set() for _ in range(net.last_time + 1)]
    for b in fm_buffers(net, dec, inplace=False):  # each FM's own span, stretched by existing cascades
        for t in range(b.start, b.end + 1):
            live[t].add(b.name)
    base = usage_by_time(net, fast_buffers(net, dec))
    owner = inplace_outputs(net, dec)
    return _Context(net, dec, arch, oracle, base, [frozenset(x) for x in live], owner, inplace_mates(owner),
                    with_weights)


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
        and is_cascadable(pa) and is_cascadable(pb) and links_rolling(pa, pb)
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


def segment_rows(net: Network, s: int, e: int, final_rows: int, *, minimal: bool) -> tuple[int, ...]:
    """OFM stripe rows of ops ``s..e``: each producer makes what its consumer's stripe reads
    (``minimal=False``), or one row at a time (``minimal``: the smallest rolling buffers), each
    rounded up to the rows its stripes must start on (``aligned_stripe_rows``)."""
    ops = net.npu_ops
    rows = [0] * (e - s + 1)
    rows[-1] = aligned_stripe_rows(ops[e], final_rows)
    for k in range(e, s, -1):
        rows[k - 1 - s] = aligned_stripe_rows(ops[k - 1], 1 if minimal else producer_rows_for(ops[k], rows[k - s]))
    return tuple(rows)


def segment_space(ctx: _Context, s: int, e: int, rows: tuple[int, ...]) -> tuple[tuple[RollingBuffer, ...], int]:
    """The rolling buffers between ops ``s..e`` making OFM stripes of ``rows`` and the exact
    fast-storage peak (bytes) over their time span as a cascade, without weight buffers."""
    rolling = _rolling_buffers(ctx, s, e, rows)
    return rolling, _span_base(ctx, s, e, rolling) + sum(r.size_bytes for r in rolling)


def _rolling_buffers(ctx: _Context, s: int, e: int, rows: tuple[int, ...]) -> tuple[RollingBuffer, ...]:
    return tuple(_rolling_buffer(ctx, k, rows[k - s], rows[k + 1 - s]) for k in range(s, e))


def _span_base(ctx: _Context, s: int, e: int, rolling: tuple[RollingBuffer, ...]) -> int:
    """``_span_peak`` of ``s..e``, worked out once (it does not depend on the stripe rows)."""
    if (s, e) not in ctx.span_memo:
        ctx.span_memo[s, e] = _span_peak(ctx, s, e, rolling)
    return ctx.span_memo[s, e]


def _rolling_buffer(ctx: _Context, k: int, rows: int, consumer_rows: int) -> RollingBuffer:
    key = (k, rows, consumer_rows)
    if key not in ctx.rolling_memo:
        ctx.rolling_memo[key] = rolling_buffer(ctx.net, k, rows, consumer_rows)
    return ctx.rolling_memo[key]


def rolling_buffer(net: Network, k: int, rows: int, consumer_rows: int) -> RollingBuffer:
    """The rolling buffer between NPU ops ``k`` and ``k + 1`` making OFM stripes of ``rows`` and
    ``consumer_rows`` rows."""
    producer, consumer = net.npu_ops[k], net.npu_ops[k + 1]
    return RollingBuffer(producer.ofm.name, rolling_rows(producer, rows, consumer, consumer_rows),
                         rolling_buffer_bytes(producer, rows, consumer, consumer_rows,
                                              rolling_format(net, producer.ofm.name)))


def one_row_producers(net: Network, dec: Decisions, spans: Collection[CascadeSpan]) -> Decisions:
    """``dec`` with its cascades among ``spans`` restriped so that every op makes one row at a
    time (``segment_rows(minimal=True)``, the last op too: its rows set the last rolling buffer's),
    the smallest rolling buffers those cascades can have, as in Vela's minimal schedule."""
    rows = list(dec.ofm_rows)
    cascades = []
    for c in dec.cascades:
        if c in spans:
            r = segment_rows(net, c.start, c.end, 1, minimal=True)
            rows[c.start:c.end + 1] = r
            c = replace(c, rolling=tuple(rolling_buffer(net, k, r[k - c.start], r[k + 1 - c.start])
                                         for k in range(c.start, c.end)))
        cascades.append(c)
    return replace(dec, ofm_rows=tuple(rows), cascades=tuple(cascades))


def _segment(ctx: _Context, s: int, e: int, rows: tuple[int, ...]) -> Segment:
    rolling, peak = segment_space(ctx, s, e, rows)
    dec = ctx.dec
    # the stripe rows go to each costing: no copy of every op's rows per segment
    trial = replace(dec, cascades=dec.cascades + (CascadeSpan(-1, s, e, rolling),))
    cycles, options = 0, []
    slack = 0  # what the op before the segment leaves is not known here; the weight pass uses it
    for k in range(s, e + 1):
        # an op's cost in a cascade depends only on its rows, on whether its IFM and OFM roll and on
        # the slack the op before it leaves (weights prefetch under it, as ``total_cycles`` costs)
        key = (k, rows[k - s], k > s, k < e, slack)
        if key not in ctx.op_memo:
            ctx.op_memo[key] = _cascaded_op(ctx, trial, k, slack, rows[k - s])
        direct, option, slack = ctx.op_memo[key]
        cycles += direct
        if option is not None:
            options.append(option)
    return Segment(s, e, rows, rolling, peak, cycles, tuple(options))


def _cascaded_op(
    ctx: _Context, trial: Decisions, k: int, prev_slack: int, rows: int,
) -> tuple[int, tuple[int, int] | None, int]:
    """Op ``k``'s cycles in a cascade (OFM stripes of ``rows``) with weights read in place; ``(bytes, cycles saved)`` of
    holding its whole weights, their copy charged (``weights.cascade_weight_option``: the figures
    the weight pass chooses by); and the slack it leaves the next op."""
    direct = cost_op(ctx.net, trial, ctx.arch, ctx.oracle, k, prev_slack_cycles=prev_slack, rows=rows)
    found = (cascade_weight_option(ctx.net, trial, ctx.arch, ctx.oracle, k, prev_slack_cycles=prev_slack, rows=rows)
             if ctx.with_weights else None)
    if found is None:
        return direct.cycles, None, direct.slack_cycles
    plan, saved = found
    return direct.cycles, (held_bytes(plan), saved), direct.slack_cycles


def _span_peak(ctx: _Context, s: int, e: int, rolling: tuple[RollingBuffer, ...]) -> int:
    """Exact fast-storage peak over the time span of ops ``s..e`` cascaded with ``rolling`` (no new
    weights), less the rolling buffers (live throughout the span, so they add to every step
    alike): the feature maps live then are re-bucketed (cascade stretches, in-place sharing) from
    scratch. Depends only on ``s`` and ``e``: the stripe rows change the rolling buffers' sizes alone."""
    net = ctx.net
    trial = replace(ctx.dec, cascades=ctx.dec.cascades + (CascadeSpan(-1, s, e, rolling),))
    ts, te = net.times[s], net.times[e]
    touched = set().union(*ctx.live_at[ts:te + 1])
    touched.update(net.npu_ops[k].ofm.name for k in range(s, e + 1))
    touched.add(net.npu_ops[s].ifm.name)
    names = [n for n in inplace_group(ctx.owner, touched, mates=(ctx.mates,)) if n in net.fms]
    # adding the cascade only drops the in-place pairs of the ops it takes in (their FMs roll); only
    # the pairs among ``names`` are read (the group is closed under them)
    kept = {out: ctx.owner[out] for out in names if out in ctx.owner and not s <= net.fms[out].producer <= e}
    usage = ctx.base[ts:te + 1]
    for buffers, sign in ((fm_buffers(net, ctx.dec, names, owner=ctx.owner), -1),
                          (fm_buffers(net, trial, names, owner=kept), 1)):
        for b in buffers:  # each buffer over the steps of the span it is live at
            for t in range(max(b.start, ts), min(b.end, te) + 1):
                usage[t - ts] += sign * b.size_bytes
    return max(0, *usage)


def _single(ctx: _Context, k: int, highest: int) -> Segment:
    """Op ``k`` alone, with the weight plans that fit below ``highest``, the highest limit the
    caller will ask for (the others are never taken, so they are not costed)."""
    net = ctx.net
    op = net.npu_ops[k]
    direct = cost_op(net, ctx.dec, ctx.arch, ctx.oracle, k).cycles
    peak = ctx.base[net.times[k]]
    options: list[tuple[int, int]] = []
    # no buffered plan costs less than the floor (``weights.floor_cycles``): none saves when reading in place costs no more
    if ctx.with_weights and needs_dma(op, ctx.arch) and direct > floor_cycles(net, ctx.dec, ctx.arch, ctx.oracle, k):
        block = ctx.oracle.block_config(op, op.ofm_shape.with_h(min(ctx.dec.ofm_rows[k], op.ofm_shape.h)))
        for plan in candidate_plans(op, block, ctx.oracle):
            if held_bytes(plan) > highest - peak:
                continue
            saved = direct - cost_op(net, ctx.dec, ctx.arch, ctx.oracle, k, weights=plan).cycles
            if saved > 0:
                options.append((held_bytes(plan), saved))
    return Segment(k, k, (op.ofm_shape.h,), (), peak, direct, tuple(options))


Proposal = tuple[int, tuple[int, ...], int]  # a cascade's first op, its ops' stripe rows, its peak bytes


def _proposals(ctx: _Context, first: int, last: int, e: int) -> list[Proposal]:
    """Every cascade ending at op ``e`` (starting no earlier than ``first``) worth considering,
    with its peak (``segment_space``; not yet costed)."""
    net = ctx.net
    consumer = net.npu_ops[e + 1] if e < last else None
    op_e = net.npu_ops[e]
    heights = stripe_candidates(op_e.ofm_shape.h, min_stripe_rows(op_e, consumer))
    s0 = max(first, e - MAX_CASCADE_OPS + 1)
    longest = _longest(ctx, s0, e, heights)
    found: list[Proposal] = []
    seen: set[tuple[int, ...]] = set()
    for s in range(s0, e):
        for all_rows, all_rolling, tail_bytes in longest:
            rows = all_rows[s - s0:]
            if (s,) + rows not in seen:
                seen.add((s,) + rows)
                found.append((s, rows, _span_base(ctx, s, e, all_rolling[s - s0:]) + tail_bytes[e - s]))
    return found


def _longest(
    ctx: _Context, s0: int, e: int, heights: list[int],
) -> list[tuple[tuple[int, ...], tuple[RollingBuffer, ...], list[int]]]:
    """Per final height tried (the first also one row at a time), the cascade ``s0..e``'s stripe
    rows, its rolling buffers and their bytes summed over the last ``j`` of them (``[j]``): a
    cascade starting later takes their tails (a producer's rows depend only on its consumer's)."""
    longest = []
    for h in heights:
        for minimal in (False, True) if h == heights[0] else (False,):
            rows = segment_rows(ctx.net, s0, e, h, minimal=minimal)
            rolling = _rolling_buffers(ctx, s0, e, rows)
            longest.append((rows, rolling, list(accumulate((r.size_bytes for r in reversed(rolling)), initial=0))))
    return longest


def _least_peak(ctx: _Context, run: tuple[int, int], proposals: dict[int, list[Proposal]]) -> int:
    """The least peak (bytes) any split of ``run`` into single ops and ``proposals`` reaches."""
    least = {run[0] - 1: 0}
    for e in range(run[0], run[1] + 1):
        single = max(least[e - 1], ctx.base[ctx.net.times[e]])
        least[e] = min([single] + [max(least[s - 1], peak) for s, _, peak in proposals[e]])
    return least[run[1]]


def _fewest_over(ctx: _Context, run: tuple[int, int], proposals: dict[int, list[Proposal]],
                 limit: int) -> dict[int, list[Proposal]]:
    """The proposals on a split of ``run`` with the fewest bytes over ``limit``, by end: a DP from
    each side on peaks alone. ``_best_split`` chooses the same split from these as from all: it
    puts those bytes first, so the split it chooses, and every prefix it is built from, holds
    none of the others, and none of the others ever ties with such a prefix."""
    first, last = run
    spans = [(e, e, max(0, ctx.base[ctx.net.times[e]] - limit)) for e in range(first, last + 1)]
    spans += [(s, e, max(0, peak - limit)) for e in range(first, last + 1) for s, _, peak in proposals[e]]
    inf = float("inf")
    before: dict[int, float] = {first - 1: 0}  # fewest bytes over up to each op
    for s, e, over in sorted(spans, key=lambda span: span[1]):
        before[e] = min(before.get(e, inf), before[s - 1] + over)
    after: dict[int, float] = {last: 0}  # fewest bytes over after each op
    for s, e, over in sorted(spans, key=lambda span: -span[0]):
        after[s - 1] = min(after.get(s - 1, inf), over + after[e])
    return {e: [(s, rows, peak) for s, rows, peak in proposals[e]
                if before[s - 1] + max(0, peak - limit) + after[e] == before[last]]
            for e in range(first, last + 1)}


def _segment_options(ctx: _Context, e: int, proposals: list[Proposal], highest: int) -> list[Segment]:
    """Op ``e`` alone and the proposed cascades ending at it, costed for limits up to ``highest``."""
    return [_single(ctx, e, highest)] + [_segment(ctx, s, e, rows) for s, rows, _ in proposals]


def _best_split(options_by_end: dict[int, list[Segment]], first: int, last: int, limit: int) -> list[Segment]:
    """DP over segment ends: least bytes over ``limit``, then fastest (weights buffered in the
    room each segment leaves below ``limit``)."""
    best: dict[int, tuple[tuple[int, int], Segment | None]] = {first - 1: ((0, 0), None)}
    for e in range(first, last + 1):
        for seg in options_by_end[e]:
            prev = best.get(seg.start - 1)
            if prev is None:
                continue
            (over, cycles), _ = prev
            over += max(0, seg.peak_bytes - limit)
            current = best.get(e)
            # its fewest cycles under any limit not beating the best so far, its own do not either
            # (and are not worked out: a cascade's may need its weight frontier)
            if current is not None and (over, cycles + seg.fewest_cycles()) >= current[0]:
                continue
            key = (over, cycles + seg.cycles_within(limit))
            if current is None or key < current[0]:
                best[e] = (key, seg)
    split: list[Segment] = []
    while last >= first:  # back from the last segment, each one's start tells where the one before ends
        chosen = best[last][1]
        assert chosen is not None
        split.append(chosen)
        last = chosen.start - 1
    return split[::-1]


def _trade_top(floor: int, ceiling: int, memory_weight: float) -> int:
    """The largest limit ``_traded_limit`` tries: beyond it memory alone costs over 100%."""
    return min(ceiling, int(floor * (1 + 1 / memory_weight)))


def _fewest_cycles(options_by_end: dict[int, list[Segment]], first: int, last: int) -> int:
    """The fewest cycles any split of ``first..last`` reaches under any limit."""
    fewest = {first - 1: 0}
    for e in range(first, last + 1):
        fewest[e] = min(fewest[seg.start - 1] + seg.fewest_cycles() for seg in options_by_end[e])
    return fewest[last]


def build_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, optimise: Optimise,
) -> Decisions:
    """Cascade every chain where it helps fit ``limit_bytes`` (Performance) or reach the least peak
    (Size; see ``plan_cascades`` for a Size that may trade a little memory for much speed)."""
    return plan_cascades(net, dec, arch, oracle, limit_bytes, optimise)[0]


def plan_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, optimise: Optimise, *,
    memory_weight: float | None = None, every_chain: bool = False,
) -> tuple[Decisions, int]:
    """Cascaded decisions and the fast-storage limit they were chosen for (bytes).

    Performance: the fastest split of each chain within ``limit_bytes``. Size runs twice: the first
    pass finds the least peak the network can reach, the second spends the memory below the
    limit on speed (the fastest split, chain by chain, counting the weight buffers each split
    leaves room for). The limit is that least peak, unless ``memory_weight`` is given: then it is
    the peak that minimises ``cycles / least_peak_cycles + memory_weight * peak / least_peak``
    (a percent of memory is worth ``memory_weight`` percent of cycles), never above the peak of
    ``dec`` itself nor ``limit_bytes``. Performance only splits the chains that overflow ``limit_bytes``
    unless ``every_chain`` (cascading can be faster even where whole feature maps fit).
    """
    return _cascade_plans(net, dec, arch, oracle, limit_bytes, optimise, memory_weight=memory_weight,
                          every_chain=every_chain)[0]


def size_cascade_plans(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, *, memory_weight: float,
) -> tuple[tuple[Decisions, int], ...]:
    """Size: ``plan_cascades`` with ``memory_weight``, then, where that trade moved the limit above
    the least peak, the cascades at the least peak too (the same costed splits, chosen for the
    least peak). The trade is judged on estimates, weight buffers counted where they fit: the
    caller allocates both and chooses again (placed, those buffers may not fit the peak)."""
    return _cascade_plans(net, dec, arch, oracle, limit_bytes, Optimise.SIZE, memory_weight=memory_weight,
                          with_least=True)


def _cascade_plans(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, optimise: Optimise, *,
    memory_weight: float | None = None, every_chain: bool = False, with_least: bool = False,
) -> tuple[tuple[Decisions, int], ...]:
    """``plan_cascades``' decisions and limit, then (``with_least``, Size) those at the least peak
    where the traded limit is above it."""
    ctx = _context(net, dec, arch, oracle, with_weights=True)
    base = ctx.base
    runs = chains(net)
    proposed = {run: {e: _proposals(ctx, run[0], run[1], e) for e in range(run[0], run[1] + 1)}
                for run in runs
                if optimise is Optimise.SIZE or every_chain
                or max(base[net.times[run[0]]:net.times[run[1]] + 1]) > limit_bytes}
    # only cascades on a split with the fewest bytes over the limit can be chosen (the DP's first
    # criterion), so only those are costed
    limit = highest = limit_bytes  # the limit splits are chosen for, and the highest one tried on the way
    trade: tuple[int, int, float] | None = None
    if optimise is Optimise.SIZE:
        limit, highest, trade = _size_limits(ctx, runs, proposed, limit_bytes, memory_weight)
        # each limit tried is at least every run's least peak: those splits have none over it
        proposed = {run: {e: [p for p in by_end[e] if p[2] <= highest] for e in by_end}
                    for run, by_end in proposed.items()}
    else:
        proposed = {run: _fewest_over(ctx, run, by_end, limit) for run, by_end in proposed.items()}
    options = {run: {e: _segment_options(ctx, e, by_end[e], highest) for e in by_end}
               for run, by_end in proposed.items()}
    chosen = [limit]
    if trade is not None:
        chosen = [_traded_limit(ctx, options, runs, *trade)]
        if with_least and chosen[0] != limit:
            chosen.append(limit)
    return tuple((_split_decisions(dec, options, at), at) for at in chosen)


def _split_decisions(dec: Decisions, options: dict[tuple[int, int], dict[int, list[Segment]]], limit: int) -> Decisions:
    """``dec`` with every chain split as ``_best_split`` chooses for ``limit``."""
    rows = list(dec.ofm_rows)
    spans: list[CascadeSpan] = list(dec.cascades)
    for run, opts in options.items():
        for seg in _best_split(opts, run[0], run[1], limit):
            if seg.start == seg.end:
                continue
            rows[seg.start:seg.end + 1] = seg.rows
            spans.append(CascadeSpan(len(spans), seg.start, seg.end, seg.rolling))
    return replace(dec, ofm_rows=tuple(rows), cascades=tuple(sorted(spans, key=lambda c: c.start)))


def _size_limits(
    ctx: _Context, runs: list[tuple[int, int]], proposed: dict[tuple[int, int], dict[int, list[Proposal]]],
    limit_bytes: int, memory_weight: float | None,
) -> tuple[int, int, tuple[int, int, float] | None]:
    """Size's least peak (bytes), the highest limit it may try, and ``_traded_limit``'s least
    peak, ceiling and memory weight (None when it does not trade).

    Size trades only where a chain's least peak sets the network's: where an op outside every
    chain does (its whole feature maps live, whatever the limit), every Size plan holds that
    peak, Vela's too, and memory above it would only speed up chains that already fit below it
    (micronet_kws_49x10 u55-256: 83,425 B for 71% of the cycles at its 77,008 B, the conv
    before its MEAN; Vela's Size holds 80,000 B there and plans every chain within it)."""
    net, base = ctx.net, ctx.base
    in_chain = {t for a, b in runs for t in range(net.times[a], net.times[b] + 1)}
    least = [_least_peak(ctx, run, by_end) for run, by_end in proposed.items()]
    outside = max((u for t, u in enumerate(base) if t not in in_chain), default=0)
    floor = max([outside] + least)
    if memory_weight is None or floor > limit_bytes or outside >= max(least, default=0):
        return floor, floor, None
    trade = (floor, min(limit_bytes, max(base, default=0)), memory_weight)
    return floor, max(floor, _trade_top(*trade)), trade


TRADE_STEPS = 48  # limits tried between the least peak and where memory alone outweighs any speed-up


def _traded_limit(ctx: _Context, options: dict[tuple[int, int], dict[int, list[Segment]]],
                  runs: list[tuple[int, int]], floor: int, ceiling: int, memory_weight: float) -> int:
    """The limit in ``floor..ceiling`` minimising normalised cycles plus weighted normalised peak."""
    if floor <= 0:
        return floor
    in_run = {k for a, b in runs for k in range(a, b + 1)}
    top = _trade_top(floor, ceiling, memory_weight)
    singles = [_single(ctx, k, max(floor, top)) for k in range(len(ctx.net.npu_ops)) if k not in in_run]

    def cycles_at(limit: int) -> int:
        total = sum(seg.cycles_within(limit) for seg in singles)
        for run, opts in options.items():
            total += sum(seg.cycles_within(limit) for seg in _best_split(opts, run[0], run[1], limit))
        return total

    least = max(cycles_at(floor), 1)
    # no limit makes the cycles fewer than this, so once its score is no better, neither are the rest
    fewest = (sum(seg.fewest_cycles() for seg in singles)
              + sum(_fewest_cycles(opts, run[0], run[1]) for run, opts in options.items()))
    best, best_score, best_cycles = floor, 1.0, least
    for step in range(1, TRADE_STEPS + 1):
        limit = floor + (top - floor) * step // TRADE_STEPS
        if limit <= floor:
            continue
        memory = memory_weight * (limit / floor - 1)
        if fewest / least + memory >= best_score:
            break
        cycles = cycles_at(limit)
        score = cycles / least + memory
        if score < best_score:
            best, best_score, best_cycles = limit, score, cycles
    if best != floor:
        log.info("Size: limit %d B instead of the least peak %d B (%.0f%% of its cycles)",
                 best, floor, 100 * best_cycles / least)
    return best
