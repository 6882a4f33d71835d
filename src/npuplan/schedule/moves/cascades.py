"""Cascades: chains of ops run stripe by stripe with NHCWB16 rolling buffers between them.

Search: each linear chain (single-consumer links, no CPU op between, shapes matching) is split
into segments by dynamic programming over (segment end, segment start, final stripe height, and
whether producers follow their consumer's stripe or make one row at a time); every segment's
fast-storage use is computed exactly over its time span, and the DP keeps the fastest split that
fits the limit (weight buffers counted in the room a split leaves): for Performance the budget,
for Size the least peak any split reaches (``_least_peak``), or more where that buys enough speed.
Choosing is separate from proposing: this module proposes and prices (``_proposals``,
``_segment``, ``_single``; cascades peaking above every limit the DP will be given are never
costed), ``cascade_split`` chooses (``plan_cascades``, ``_best_split``).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Collection
from dataclasses import field, replace
from itertools import accumulate

from npuplan.hw.memory import Architecture
from npuplan.records import record
from npuplan.schedule.pricing.costing import cost_op, least_cycles, rolling_format
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
    held_bytes,
    needs_dma,
    weight_frontier,
)

MAX_CASCADE_OPS = 12


@record
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


@record(eq=False, slots=False)
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
    if ctx.with_weights and needs_dma(op, ctx.arch):
        block = ctx.oracle.block_config(op, op.ofm_shape.with_h(min(ctx.dec.ofm_rows[k], op.ofm_shape.h)))
        for plan in candidate_plans(op, block, ctx.oracle):
            # a plan saves nothing where its least cycles (``costing.least_cycles``, a sound bound) reach reading in place's
            if (held_bytes(plan) > highest - peak
                    or least_cycles(net, ctx.dec, ctx.arch, ctx.oracle, k, weights=plan) >= direct):
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
