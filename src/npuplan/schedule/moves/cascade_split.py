"""Splitting chains into cascades: the DP over the segments ``cascades`` proposes and prices.

Performance takes each chain's fastest split within the budget; Size first finds the least peak
any split reaches (``_least_peak``), then the fastest split within it, or within more where
that buys enough speed (``_traded_limit``, only where a chain's least peak sets the network's).
Proposing is ``cascades``' part; choosing is this module's (``_best_split``).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise
from npuplan.schedule.model.decisions import CascadeSpan, Decisions
from npuplan.schedule.model.network import Network
from npuplan.schedule.moves.cascades import Proposal, Segment, _Context, _context, _proposals, _segment, _single, chains
from npuplan.schedule.pricing.oracle import CostOracle

log = logging.getLogger(__name__)


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
