"""Cascades: chains of ops run stripe by stripe with NHCWB16 rolling buffers between them.

Search: each linear chain (single-consumer links, no CPU op between, shapes matching) is split
into segments by dynamic programming over (segment end, segment start, final stripe height, and
whether producers follow their consumer's stripe or make one row at a time); every segment's
fast-storage use is computed exactly over its time span, and the DP keeps the fastest split that
fits (Performance; weight buffers counted in the room a split leaves) or the smallest peak, then
fastest (Size). Choosing is separate from
proposing: ``_segment_options`` proposes, ``_best_split`` chooses.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

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
from npuplan.schedule.inplace import inplace_outputs
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle
from npuplan.schedule.usage import fast_buffers, fm_buffers, inplace_group, usage_by_time
from npuplan.schedule.weights import (
    best_weight_subset,
    candidate_plans,
    cascade_weight_option,
    held_bytes,
    needs_dma,
)

log = logging.getLogger(__name__)

MAX_CASCADE_OPS = 12


@dataclass(frozen=True, slots=True)
class Segment:
    """A proposed run of ops ``start..end`` (a cascade, or one op when ``start == end``).

    ``peak_bytes`` is the fast-storage peak over its time span without weight buffers; ``cycles``
    its cycles with weights read in place. ``weight_options`` are ``(bytes, cycles saved)`` choices
    that buffering weights offers: for a cascade, one per op (full depth, any subset may be taken,
    ``copy_cycles`` beside each); for a single op, alternative plans (at most one is taken).
    """

    start: int
    end: int
    rows: tuple[int, ...]  # OFM stripe rows of each op in the segment
    rolling: tuple[RollingBuffer, ...]
    peak_bytes: int
    cycles: int
    weight_options: tuple[tuple[int, int], ...] = ()
    copy_cycles: tuple[int, ...] = ()  # DMA cycles of each cascade option's whole-weight copy

    def _taken(self, limit: int) -> tuple[int, ...]:
        room = limit - self.peak_bytes
        if self.start == self.end:
            fitting = [j for j, (size, _) in enumerate(self.weight_options) if size <= room]
            return (max(fitting, key=lambda j: self.weight_options[j][1]),) if fitting else ()
        return best_weight_subset(self.weight_options, room)

    def cycles_within(self, limit: int | None) -> int:
        """Cycles with the weight buffering that fits between the peak and ``limit`` (None: none):
        the plan's own cycles, as the weight pass (``weights.propose_weight_buffering``) chooses."""
        if limit is None or not self.weight_options:
            return self.cycles
        return self.cycles - sum(self.weight_options[j][1] for j in self._taken(limit))

    def search_cycles(self, limit: int | None) -> int:
        """``cycles_within`` plus the copies of the cascade weights held: the cost model (like Vela's)
        does not charge a cascade's weight copy; the search does, so that cascading is never chosen
        just to make weight DMA look free. The weights held are the plan's either way."""
        if limit is None or not self.copy_cycles:
            return self.cycles_within(limit)
        taken = self._taken(limit)
        return self.cycles - sum(self.weight_options[j][1] - self.copy_cycles[j] for j in taken)


@dataclass(frozen=True)
class _Context:
    """What every segment proposal reads: the decisions so far, their usage and who is live when."""

    net: Network
    dec: Decisions
    arch: Architecture
    oracle: CostOracle
    base: list[int]
    live_at: list[frozenset[str]]  # full feature maps in fast storage at each time step
    owner: dict[str, str]  # in-place pairs of ``dec``: OFM -> the input it overwrites
    with_weights: bool
    op_memo: dict[tuple[int, int, bool, bool, int], tuple[int, tuple[int, int, int] | None, int]] = field(
        default_factory=dict)


def _context(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, *, with_weights: bool) -> _Context:
    live: list[set[str]] = [set() for _ in range(net.last_time + 1)]
    for fm in net.fms.values():
        for b in fm_buffers(net, dec, [fm.name]):  # its own span, stretched by existing cascades
            for t in range(b.start, b.end + 1):
                live[t].add(fm.name)
    base = usage_by_time(net, fast_buffers(net, dec))
    return _Context(net, dec, arch, oracle, base, [frozenset(x) for x in live], inplace_outputs(net, dec),
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


def segment_rows(net: Network, s: int, e: int, final_rows: int, *, minimal: bool) -> tuple[int, ...]:
    """OFM stripe rows of ops ``s..e``: each producer makes what its consumer's stripe reads
    (``minimal=False``), or one row at a time (``minimal``: the smallest rolling buffers)."""
    ops = net.npu_ops
    rows = [0] * (e - s + 1)
    rows[-1] = final_rows
    for k in range(e, s, -1):
        rows[k - 1 - s] = 1 if minimal else producer_rows_for(ops[k], rows[k - s])
    return tuple(rows)


def _segment(ctx: _Context, s: int, e: int, rows: tuple[int, ...]) -> Segment:
    net, dec = ctx.net, ctx.dec
    ops = net.npu_ops
    rolling = tuple(
        RollingBuffer(ops[k].ofm.name,
                      rolling_rows(ops[k], rows[k - s], ops[k + 1], rows[k + 1 - s]),
                      rolling_buffer_bytes(ops[k], rows[k - s], ops[k + 1], rows[k + 1 - s]))
        for k in range(s, e)
    )
    trial = replace(dec, ofm_rows=dec.ofm_rows[:s] + rows + dec.ofm_rows[e + 1:],
                    cascades=dec.cascades + (CascadeSpan(-1, s, e, rolling),))
    peak = _span_peak(ctx, trial, s, e, sum(r.size_bytes for r in rolling))
    cycles, options, copies = 0, [], []
    slack = 0  # what the op before the segment leaves is not known here; the weight pass uses it
    for k in range(s, e + 1):
        # an op's cost in a cascade depends only on its rows, on whether its IFM and OFM roll and on
        # the slack the op before it leaves (weights prefetch under it, as ``total_cycles`` costs)
        key = (k, rows[k - s], k > s, k < e, slack)
        if key not in ctx.op_memo:
            ctx.op_memo[key] = _cascaded_op(ctx, trial, k, slack)
        direct, option, slack = ctx.op_memo[key]
        cycles += direct
        if option is not None:
            options.append(option[:2])
            copies.append(option[2])
    return Segment(s, e, rows, rolling, peak, cycles, tuple(options), tuple(copies))


def _cascaded_op(
    ctx: _Context, trial: Decisions, k: int, prev_slack: int,
) -> tuple[int, tuple[int, int, int] | None, int]:
    """Op ``k``'s cycles in a cascade with weights read in place; ``(bytes, cycles saved, copy
    cycles)`` of holding its whole weights (``weights.cascade_weight_option``: the figures the
    weight pass chooses by); and the slack it leaves the next op."""
    direct = cost_op(ctx.net, trial, ctx.arch, ctx.oracle, k, prev_slack_cycles=prev_slack)
    found = (cascade_weight_option(ctx.net, trial, ctx.arch, ctx.oracle, k, prev_slack_cycles=prev_slack)
             if ctx.with_weights else None)
    if found is None:
        return direct.cycles, None, direct.slack_cycles
    plan, saved = found
    copy = ctx.oracle.transfer_cycles(ctx.arch.const_area, ctx.arch.fast_area, plan.stream_bytes)
    return direct.cycles, (held_bytes(plan), saved, copy), direct.slack_cycles


def _span_peak(ctx: _Context, trial: Decisions, s: int, e: int, rolling_bytes: int) -> int:
    """Exact fast-storage peak over the time span of ops ``s..e`` under ``trial`` (no new weights):
    the feature maps live then are re-bucketed (cascade stretches, in-place sharing) from scratch."""
    net = ctx.net
    ts, te = net.times[s], net.times[e]
    touched = set().union(*ctx.live_at[ts:te + 1])
    touched.update(net.npu_ops[k].ofm.name for k in range(s, e + 1))
    touched.add(net.npu_ops[s].ifm.name)
    names = [n for n in inplace_group(ctx.owner, touched) if n in net.fms]
    # adding the cascade only drops the in-place pairs of the ops it takes in (their FMs roll)
    kept = {out: inp for out, inp in ctx.owner.items() if not s <= net.fms[out].producer <= e}
    before = fm_buffers(net, ctx.dec, names, owner=ctx.owner)
    after = fm_buffers(net, trial, names, owner=kept)
    peak = 0
    for t in range(ts, te + 1):
        u = ctx.base[t] + rolling_bytes
        u -= sum(b.size_bytes for b in before if b.start <= t <= b.end)
        u += sum(b.size_bytes for b in after if b.start <= t <= b.end)
        peak = max(peak, u)
    return peak


def _single(ctx: _Context, k: int) -> Segment:
    net = ctx.net
    op = net.npu_ops[k]
    direct = cost_op(net, ctx.dec, ctx.arch, ctx.oracle, k).cycles
    options: list[tuple[int, int]] = []
    if ctx.with_weights and needs_dma(op, ctx.arch):
        block = ctx.oracle.block_config(op, op.ofm_shape.with_h(min(ctx.dec.ofm_rows[k], op.ofm_shape.h)))
        for plan in candidate_plans(op, block, ctx.oracle):
            saved = direct - cost_op(net, ctx.dec, ctx.arch, ctx.oracle, k, weights=plan).cycles
            if saved > 0:
                options.append((held_bytes(plan), saved))
    return Segment(k, k, (op.ofm_shape.h,), (), ctx.base[net.times[k]], direct, tuple(options))


def _segment_options(ctx: _Context, first: int, last: int, e: int) -> list[Segment]:
    """Every segment ending at op ``e`` (starting no earlier than ``first``) worth considering."""
    net = ctx.net
    found = [_single(ctx, e)]
    consumer = net.npu_ops[e + 1] if e < last else None
    op_e = net.npu_ops[e]
    heights = stripe_candidates(op_e.ofm_shape.h, min_stripe_rows(op_e, consumer))
    seen: set[tuple[int, ...]] = set()
    for s in range(max(first, e - MAX_CASCADE_OPS + 1), e):
        for h in heights:
            for minimal in (False, True) if h == heights[0] else (False,):
                rows = segment_rows(net, s, e, h, minimal=minimal)
                if (s,) + rows not in seen:
                    seen.add((s,) + rows)
                    found.append(_segment(ctx, s, e, rows))
    return found


def _best_split(options_by_end: dict[int, list[Segment]], first: int, last: int,
                limit: int, optimise: Optimise) -> list[Segment]:
    """DP over segment ends. Performance: least bytes over ``limit``, then fastest (weights
    buffered in the room each segment leaves below ``limit``). Size: smallest peak, then fastest."""
    best: dict[int, tuple[tuple[int, int], list[Segment]]] = {first - 1: ((0, 0), [])}
    for e in range(first, last + 1):
        for seg in options_by_end[e]:
            prev = best.get(seg.start - 1)
            if prev is None:
                continue
            if optimise is Optimise.SIZE:
                key = (max(prev[0][0], seg.peak_bytes), prev[0][1] + seg.cycles)
            else:
                key = (prev[0][0] + max(0, seg.peak_bytes - limit), prev[0][1] + seg.search_cycles(limit))
            if e not in best or key < best[e][0]:
                best[e] = (key, prev[1] + [seg])
    return best[last][1]


def build_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, optimise: Optimise,
) -> Decisions:
    """Cascade every chain where it helps fit ``budget`` (Performance) or reach the least peak
    (Size; see ``plan_cascades`` for a Size that may trade a little memory for much speed)."""
    return plan_cascades(net, dec, arch, oracle, budget, optimise)[0]


def plan_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, optimise: Optimise, *,
    memory_weight: float | None = None, every_chain: bool = False,
) -> tuple[Decisions, int]:
    """Cascaded decisions and the fast-storage limit they were chosen for (bytes).

    Performance: the fastest split of each chain within ``budget``. Size runs twice: the first
    pass finds the least peak the network can reach, the second spends the memory below the
    limit on speed (the fastest split, chain by chain, counting the weight buffers each split
    leaves room for). The limit is that least peak, unless ``memory_weight`` is given: then it is
    the peak that minimises ``cycles / least_peak_cycles + memory_weight * peak / least_peak``
    (a percent of memory is worth ``memory_weight`` percent of cycles), never above the peak of
    ``dec`` itself nor ``budget``. Performance only splits the chains that overflow ``budget``
    unless ``every_chain`` (cascading can be faster even where whole feature maps fit).
    """
    ctx = _context(net, dec, arch, oracle, with_weights=True)
    base = ctx.base
    runs = chains(net)
    options = {run: {e: _segment_options(ctx, run[0], run[1], e) for e in range(run[0], run[1] + 1)}
               for run in runs
               if optimise is Optimise.SIZE or every_chain
               or max(base[net.times[run[0]]:net.times[run[1]] + 1]) > budget}
    limit = budget
    if optimise is Optimise.SIZE:
        in_chain = {t for a, b in runs for t in range(net.times[a], net.times[b] + 1)}
        floor = max((u for t, u in enumerate(base) if t not in in_chain), default=0)
        for run, opts in options.items():
            split = _best_split(opts, run[0], run[1], budget, Optimise.SIZE)
            floor = max(floor, max(seg.peak_bytes for seg in split))
        limit = min(budget, floor) if floor <= budget else floor
        if memory_weight is not None and floor <= budget:
            ceiling = min(budget, max(base, default=0))
            limit = _traded_limit(ctx, options, runs, floor, ceiling, memory_weight)
    rows = list(dec.ofm_rows)
    spans: list[CascadeSpan] = list(dec.cascades)
    for run, opts in options.items():
        for seg in _best_split(opts, run[0], run[1], limit, Optimise.PERFORMANCE):
            if seg.start == seg.end:
                continue
            rows[seg.start:seg.end + 1] = seg.rows
            spans.append(CascadeSpan(len(spans), seg.start, seg.end, seg.rolling))
    return replace(dec, ofm_rows=tuple(rows), cascades=tuple(sorted(spans, key=lambda c: c.start))), limit


TRADE_STEPS = 48  # limits tried between the least peak and where memory alone outweighs any speed-up


def _traded_limit(ctx: _Context, options: dict[tuple[int, int], dict[int, list[Segment]]],
                  runs: list[tuple[int, int]], floor: int, ceiling: int, memory_weight: float) -> int:
    """The limit in ``floor..ceiling`` minimising normalised cycles plus weighted normalised peak."""
    if floor <= 0:
        return floor
    in_run = {k for a, b in runs for k in range(a, b + 1)}
    singles = [_single(ctx, k) for k in range(len(ctx.net.npu_ops)) if k not in in_run]
    top = min(ceiling, int(floor * (1 + 1 / memory_weight)))  # beyond this memory alone costs > 100%

    def cycles_at(limit: int) -> int:
        total = sum(seg.search_cycles(limit) for seg in singles)
        for run, opts in options.items():
            total += sum(seg.search_cycles(limit) for seg in _best_split(opts, run[0], run[1], limit,
                                                                           Optimise.PERFORMANCE))
        return total

    least = max(cycles_at(floor), 1)
    best, best_score = floor, 1.0
    for step in range(1, TRADE_STEPS + 1):
        limit = floor + (top - floor) * step // TRADE_STEPS
        if limit <= floor:
            continue
        score = cycles_at(limit) / least + memory_weight * (limit / floor - 1)
        if score < best_score:
            best, best_score = limit, score
    if best != floor:
        log.info("Size: limit %d B instead of the least peak %d B (%.0f%% of its cycles)",
                 best, floor, 100 * cycles_at(best) / least)
    return best
