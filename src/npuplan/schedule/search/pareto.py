"""The Pareto search (seed ``000_*``): dynamic programming over the NPU op sequence.

Position ``e`` of the DP holds a Pareto frontier (``frontier.prune``) of plans for NPU ops
``0..e``. A plan reaches ``e`` by appending one step:

* weight streaming: op ``e`` alone with its whole IFM and OFM, its weights read directly, copied
  whole, or single/double buffered in OFM depth slices, optionally prefetched under op ``e-1``
  (the proposals of ``weights.candidate_plans``); in the runs that price staging, each also
  with its IFM staged in the cache where ``choose`` would stage it and that makes it faster
  (``staging.staged_bases``, Dedicated_Sram);
* IFM streaming: ops ``s..e`` of one chain run as a cascade with rolling buffers between them, for
  each final stripe height of ``cascades.stripe_candidates`` (thinned by ``search_heights``), the
  weights of each op read directly or kept whole (full depth) in fast storage for the cascade.
  ``cascades.segment_rows`` gives the stripe rows, ``cascades.segment_space`` the rolling buffers
  and the exact fast-storage peak over the cascade's time steps.

A step's cost is the seed's search metric: bytes moved weighted by memory (SRAM 1, DRAM 10,
on-chip flash 2, off-chip flash 20) plus 40 x cycles, all from the one cost model via
``costing.cost_op`` (which charges a cascade's whole-weight copy); the DP also runs on cycles
alone (``METRICS``), and on cycles pricing staging (``RUNS``). Plans over the budget are dropped
and each frontier is capped (``frontier.prune``).

Choosing is a separate step (``choose``): the last frontiers' plans become ``Decisions``; each
also gets its weights re-chosen by exact costing (the DP prices a prefetch with an
estimated slack); on Dedicated_Sram feature maps are placed in the cache left and inputs staged;
the fastest plan by ``assemble.total_cycles`` wins for Performance, ``strategy.size_trade`` of
peak and cycles for Size. Nothing fits: ``check_fits`` raises ``InfeasiblePlan`` for the smallest
plan found, as the cascade search does (the planner then falls back to its floor plan).
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import field, replace
from types import MappingProxyType
from typing import Any, NamedTuple, Optional

from npuplan.hw.memory import Architecture, MemArea
from npuplan.options import Optimise, PlanOptions
from npuplan.records import record
from npuplan.schedule.moves.cascades import (
    MAX_CASCADE_OPS,
    _context,
    chains,
    segment_rows,
    segment_space,
    stripe_candidates,
)
from npuplan.schedule.pricing.assemble import fastest, total_cycles, total_cycles_each
from npuplan.schedule.moves.choice_memo import ChoiceMemo
from npuplan.schedule.pricing.costing import Costed, cost_op
from npuplan.schedule.model.decisions import (
    NO_WEIGHT_BUFFER, CascadeSpan, Decisions, RollingBuffer, WeightPlan, max_decisions,
)
from npuplan.schedule.moves.fast_storage import place_and_stage, place_feature_maps
from npuplan.schedule.search.frontier import Point, prune, spread
from npuplan.schedule.model.geometry import min_stripe_rows
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.moves.staging import staged_bases, stage_inputs
from npuplan.schedule.model.usage import fast_buffers, peak_bytes, usage_by_time
from npuplan.schedule.moves.weights import candidate_plans, full_depth_plan, needs_dma, propose_weight_buffering
from npuplan.units import ALIGN_BYTES, round_up

log = logging.getLogger(__name__)

MAX_FRONTIER = 16  # plans kept per position (the seed's cap)
MAX_STEP_OPTIONS = 12  # cascade options kept per (start, end) after their own frontier


@record(eq=False)
class SearchWeights:
    """The seed's search metric: ``cycles`` per cycle plus ``per_byte[area]`` per byte moved."""

    cycles: float
    per_byte: Mapping[MemArea, float]


SEED_WEIGHTS = SearchWeights(40.0, MappingProxyType({
    MemArea.SRAM: 1.0, MemArea.DRAM: 10.0, MemArea.ON_CHIP_FLASH: 2.0, MemArea.OFF_CHIP_FLASH: 20.0,
}))


SEED, CYCLES = 0, 1  # the two metrics the DP runs with: the seed's, and cycles alone
METRICS = (SEED, CYCLES)
# The DP's runs, each (metric, whether a single op's step may have its IFM staged). Staging is
# priced in a run of its own beside those without it: pricing it changes which plans the capped
# frontiers keep, so alone it loses some plans the runs without it find (and finds others).
RUNS = ((SEED, False), (CYCLES, False), (CYCLES, True))


def search_cost(costed: Costed, weights: SearchWeights = SEED_WEIGHTS) -> float:
    """The search metric of one costed op (cycles alone when the cost record has no bytes)."""
    moved = getattr(costed.cost, "bytes", None) or {}
    return weights.cycles * costed.cycles + sum(v * weights.per_byte.get(key[0], 0.0) for key, v in moved.items())


@record(eq=False)
class Step:
    """NPU ops ``start..end`` (one op, or a cascade when ``end > start``) with their OFM stripe
    rows, the rolling buffers between them and each op's weight plan."""

    start: int
    end: int
    rows: tuple[int, ...]
    rolling: tuple[RollingBuffer, ...]
    weights: tuple[WeightPlan, ...]


@record(eq=False)
class Option:
    """A step with its costs (``costs[SEED]`` the seed's metric, ``costs[CYCLES]`` cycles) and its
    fast-storage use: ``peak_bytes`` over its own time steps, ``tail_bytes`` at its last one,
    ``prefetch_bytes`` added at the previous op's time step; ``staged``: a single op priced with
    its IFM staged (only the runs of ``RUNS`` that price staging take it)."""

    step: Step
    costs: tuple[float, float]
    peak_bytes: int
    tail_bytes: int
    prefetch_bytes: int = 0
    staged: bool = False


# The steps of a partial plan, last first, shared between plans: (step, earlier steps) or None.
Trail = Optional[tuple[Step, "Trail"]]


@record(eq=False, slots=False)
class SearchSpace:
    """What every step proposal reads: the max schedule and its fast-storage use per time step."""

    net: Network
    arch: Architecture
    oracle: CostOracle
    base: Decisions
    usage: tuple[int, ...]
    cascading: Any  # the cascade search's segment context over ``base`` (exact cascade peaks)
    cascaded_costs: dict[tuple[int, int, bool, bool], CascadedOp] = field(default_factory=dict)  # a memo
    staged: Mapping[int, tuple[Decisions, int]] = field(default_factory=dict)  # op -> base with its IFM staged, bytes
    lean_options: dict[tuple[int, int, int, bool], list[Option]] = field(default_factory=dict)  # (e, s, run)


def single_options(space: SearchSpace, i: int) -> list[Option]:
    """Weight streaming of op ``i``: every weight plan, with and without prefetch under op ``i-1``."""
    net, base, usage = space.net, space.base, space.usage
    op, t = net.npu_ops[i], net.times[i]
    whole = (op.ofm_shape.h,)
    staged = space.staged.get(i)
    bases = [(base, 0)] if staged is None else [(base, 0), staged]
    found = [Option(Step(i, i, whole, (), (NO_WEIGHT_BUFFER,)), _costs(cost_op(net, dec, space.arch, space.oracle, i)),
                    usage[t] + extra, usage[t] + extra, staged=dec is not base) for dec, extra in bases]
    if not needs_dma(op, space.arch):
        return found
    prefetch = i > 0 and net.times[i - 1] == t - 1  # no prefetch across a CPU op
    slack = cost_op(net, base, space.arch, space.oracle, i - 1).slack_cycles if prefetch else 0
    block = space.oracle.block_config(op, op.ofm_shape)
    for plan in candidate_plans(op, block, space.oracle):
        size = round_up(plan.buffer_bytes, ALIGN_BYTES)
        for variant in [plan, replace(plan, prebuffer=True)] if prefetch else [plan]:
            for dec, extra in bases:
                c = cost_op(net, dec, space.arch, space.oracle, i, weights=variant,
                            prev_slack_cycles=slack if variant.prebuffer else 0)
                found.append(Option(Step(i, i, whole, (), (variant,)), _costs(c), usage[t] + extra + size,
                                    usage[t] + extra + size, size if variant.prebuffer else 0, dec is not base))
    return found


def cascade_options(space: SearchSpace, s: int, e: int, heights: list[int]) -> list[Option]:
    """IFM streaming of ops ``s..e`` as one cascade, per final stripe height (producers following
    their consumer's stripe, or one row at a time for the smallest height, as the cascade search)
    and per set of ops whose weights are kept whole in fast storage for the cascade. The tail is
    the cascade's peak (a safe bound for a prefetch under its last op)."""
    net = space.net
    found: list[Priced] = []  # the steps are made only for those either_front keeps
    rows_tried = {segment_rows(net, s, e, h, minimal=minimal)
                  for h in heights for minimal in ((False, True) if h == heights[0] else (False,))}
    for rows in sorted(rows_tried):
        rolling, span_peak = segment_space(space.cascading, s, e, rows)
        for costs, size, plans in weight_sets(space, s, e, rows, rolling):
            found.append((costs, span_peak + size, (rows, rolling, plans)))
    return [Option(Step(s, e, *step), costs, peak, peak) for costs, peak, step in either_front(found)]


Priced = tuple[tuple[float, float], int, Any]  # (costs per metric, bytes, what they price)


def either_front(items: list[Priced]) -> list[Priced]:
    """The items on the (cost, bytes) frontier of either metric, each capped, in input order."""
    kept: set[int] = set()
    for metric in METRICS:
        kept.update(front_indices([(costs[metric], size) for costs, size, _ in items], MAX_STEP_OPTIONS))
    return [items[k] for k in sorted(kept)]


def front_indices(points: list[tuple[float, int]], cap: int) -> list[int]:
    """Indices of the ``(cost, bytes)`` points ``frontier.prune`` keeps (bytes as both peak and
    tail, the budget their largest): in (cost, bytes, index) order, those smaller than every one
    before them, then ``spread`` past ``cap``."""
    front: list[int] = []
    least = None
    for k in sorted(range(len(points)), key=points.__getitem__):  # cost, bytes, then input order
        size = points[k][1]
        if least is None or size < least:
            front.append(k)
            least = size
    if len(front) <= cap:
        return front
    return [p.payload for p in spread([Point(*points[k], points[k][1], k) for k in front], cap)]


def _costs(costed: Costed) -> tuple[float, float]:
    return search_cost(costed), float(costed.cycles)


class Held(NamedTuple):
    """An op of a cascade holding its whole weights: its costs, the bytes held, the plan and, per
    metric, its place in the greedy order (``-saving / bytes``; None: it saves nothing there)."""

    costs: tuple[float, float]
    size_bytes: int
    plan: WeightPlan
    ranks: tuple[float | None, ...]


CascadedOp = tuple[tuple[float, float], Optional[Held]]  # costs reading weights in place, and holding them


def weight_sets(space: SearchSpace, s: int, e: int, rows: tuple[int, ...],
                rolling: tuple[RollingBuffer, ...]) -> list[Priced]:
    """Which ops of cascade ``s..e`` (with OFM stripes of ``rows`` and ``rolling`` buffers) keep
    their weights whole in fast storage: none, then for each metric the ops that save on it taken
    greedily by saving per byte (an op's cost depends only on its own weights, so each set's cost
    is a sum)."""
    per_op = _cascaded_ops(space, s, e, rows, rolling)
    total = (sum(d[0] for d, _ in per_op), sum(d[1] for d, _ in per_op))
    plans = (NO_WEIGHT_BUFFER,) * len(per_op)
    found: dict[int, Priced] = {0: (total, 0, plans)}  # by the ops holding their weights, a bit each
    held_by = [(i, d, held) for i, (d, held) in enumerate(per_op) if held is not None]
    for metric in METRICS:
        # ties in rank go by op, as a stable sort on the rank alone would have them
        ranked = sorted((held.ranks[metric], i, d, held) for i, d, held in held_by if held.ranks[metric] is not None)
        costs, size, chosen, holding = total, 0, list(plans), 0
        for _, i, d, held in ranked:
            costs = (costs[0] - d[0] + held.costs[0], costs[1] - d[1] + held.costs[1])
            size += held.size_bytes
            chosen[i] = held.plan
            holding |= 1 << i
            if holding not in found:
                found[holding] = (costs, size, tuple(chosen))
    return list(found.values())


def _cascaded_ops(space: SearchSpace, s: int, e: int, rows: tuple[int, ...],
                  rolling: tuple[RollingBuffer, ...]) -> list[CascadedOp]:
    """``cascaded_choices`` of each op of cascade ``s..e``, memoised on what an op's cost depends
    on: its stripe rows and whether its IFM and OFM are rolling buffers."""
    found: list[CascadedOp] = []
    trial: Decisions | None = None  # made on a memo miss only
    for k in range(s, e + 1):
        key = (k, rows[k - s], k > s, k < e)
        choices = space.cascaded_costs.get(key)
        if choices is None:
            if trial is None:  # the stripe rows go to each costing: no copy of every op's rows per try
                trial = replace(space.base, cascades=(CascadeSpan(-1, s, e, rolling),))
            choices = space.cascaded_costs[key] = cascaded_choices(space, trial, k, rows[k - s])
        found.append(choices)
    return found


def cascaded_choices(space: SearchSpace, trial: Decisions, k: int, rows: int) -> CascadedOp:
    """Op ``k`` of ``trial``'s cascade, making OFM stripes of ``rows``, with weights read in place,
    and held whole (None when its weights are not worth copying)."""
    net, arch, oracle = space.net, space.arch, space.oracle
    op = net.npu_ops[k]
    direct = _costs(cost_op(net, trial, arch, oracle, k, rows=rows))
    if not needs_dma(op, arch):
        return direct, None
    stripe = op.ofm_shape.with_h(min(rows, op.ofm_shape.h))
    plan = full_depth_plan(op, oracle.block_config(op, stripe), oracle)
    costs = _costs(cost_op(net, trial, arch, oracle, k, weights=plan, rows=rows))
    size = round_up(plan.buffer_bytes, ALIGN_BYTES)
    ranks = tuple(-(direct[m] - costs[m]) / max(size, 1) if direct[m] > costs[m] else None for m in METRICS)
    return direct, Held(costs, size, plan, ranks)


def options_ending_at(space: SearchSpace, e: int, chain: tuple[int, int] | None) -> dict[int, list[Option]]:
    """Every step ending at op ``e``, by its first op."""
    found = {e: single_options(space, e)}
    if chain is None:
        return found
    first, last = chain
    op = space.net.npu_ops[e]
    consumer = space.net.npu_ops[e + 1] if e < last else None
    heights = search_heights(stripe_candidates(op.ofm_shape.h, min_stripe_rows(op, consumer)), op.ofm_shape.h)
    for s in range(max(first, e - MAX_CASCADE_OPS + 1), e):
        found[s] = cascade_options(space, s, e, heights)
    return found


def search_heights(candidates: list[int], height: int) -> list[int]:
    """The cascade search's stripe heights thinned to the smallest, the largest, the powers of two
    and the divisors of ``height`` (even stripes): each height costs a block-config search per op."""
    if len(candidates) <= 3:
        return candidates
    ends = (candidates[0], candidates[-1])
    return [h for h in candidates if h in ends or h & (h - 1) == 0 or height % h == 0]


def extend(plan: Point[Trail], option: Option, metric: int) -> Point[Trail]:
    """``plan`` followed by ``option``: costs add, peaks take the maximum (with the prefetch)."""
    return extend_all([plan], [option], metric)[0]


def extend_all(plans: list[Point[Trail]], options: list[Option], metric: int, *,
               lean: bool = False) -> list[Point[Trail]]:
    """Each plan followed by each option (``extend``), plan by plan, in one loop: the search
    makes tens of thousands of these. With ``lean`` (``plans`` cheapest first, as fronts are),
    the points ``pareto_front`` would drop for an earlier one no worse are left out: an option
    without a prefetch gives a plan beaten by an earlier one in cost and peak (shadowed) a point
    no better than that one's, so a shadowed plan is followed only by options with a prefetch
    (its tail matters to those alone); and such an option follows no plan after the first one
    within its peak (the later ones cost no less, and their points have its peak and tail)."""
    found: list[Point[Trail]] = []
    fields = [(o.costs[metric], o.peak_bytes, o.tail_bytes, o.prefetch_bytes, o.step) for o in options]
    prefetching = [f for f in fields if f[3]]
    live = fields  # lean: the options still worth following the next plan with
    least = None  # lean: the least peak of the plans so far
    for cost, plan_peak, plan_tail, trail in plans:
        followed = live
        if lean and least is not None:
            if least <= plan_peak:
                followed = prefetching
            else:
                live = followed = [f for f in live if f[3] or f[1] < least]
        for step_cost, step_peak, tail, prefetch, step in followed:
            peak = step_peak if step_peak > plan_peak else plan_peak
            if prefetch and plan_tail + prefetch > peak:
                peak = plan_tail + prefetch
            found.append(Point(cost + step_cost, peak, tail, (step, trail)))
        if least is None or plan_peak < least:
            least = plan_peak
    return found


Catalogue = list[dict[int, list[Option]]]  # per op ``e``: the steps ending at ``e``, by first op


def catalogue(space: SearchSpace) -> Catalogue:
    """Every step of the search, proposed once (they do not depend on the budget)."""
    chain_of = {k: run for run in chains(space.net) for k in range(run[0], run[1] + 1)}
    return [options_ending_at(space, e, chain_of.get(e)) for e in range(len(space.net.npu_ops))]


def search_frontier(space: SearchSpace, steps: Catalogue, limit_bytes: int, metric: int, *,
                    staging: bool = False) -> list[Point[Trail]]:
    """The DP on ``metric``: the frontier of complete plans within ``limit_bytes`` (or the smallest);
    with ``staging``, single ops may also have their IFM staged (``staging.staged_bases``).

    Under a hard cap the peak so far never limits what may follow, so the cheapest plan within
    the budget at each position is always kept (``frontier.spread``) and the cheapest complete
    plan is optimal for the metric; the peak axis keeps smaller alternatives beside it. ``steps`` is
    ``catalogue(space)``: the undominated steps are memoised in ``space``."""
    net = space.net
    npu_times = set(net.times)
    floor = max((u for t, u in enumerate(space.usage) if t not in npu_times), default=0)
    fronts: list[list[Point[Trail]]] = []
    start: list[Point[Trail]] = [Point(0.0, floor, floor, None)]
    for e, ending in enumerate(steps):
        if not staging and e in space.staged:  # only op e's own steps can be staged
            ending = {**ending, e: [o for o in ending[e] if not o.staged]}
        lean = {s: _lean(space, e, s, options, (metric, staging)) for s, options in ending.items()}
        front = prune(_extensions(fronts, start, lean, metric, limit_bytes), limit_bytes=limit_bytes,
                      cap=MAX_FRONTIER)
        if not front or front[0].peak_bytes > limit_bytes:  # nothing fits: the smallest of them all
            front = prune(_extensions(fronts, start, ending, metric, None), limit_bytes=limit_bytes,
                          cap=MAX_FRONTIER)
        fronts.append(front)
    return fronts[-1] if fronts else start


def _extensions(fronts: list[list[Point[Trail]]], start: list[Point[Trail]], ending: dict[int, list[Option]],
                metric: int, limit_bytes: int | None) -> list[Point[Trail]]:
    """The plans of ``fronts`` extended by the steps of ``ending``; with ``limit_bytes``, only
    the plans and steps within it (the others cannot make a plan within it, so ``prune`` keeps
    the same points from these as from every extension whenever any of them fits)."""
    found: list[Point[Trail]] = []
    for s, options in ending.items():
        plans = fronts[s - 1] if s > 0 else start
        if limit_bytes is not None:
            plans = [plan for plan in plans if plan.peak_bytes <= limit_bytes]
            options = [option for option in options if option.peak_bytes <= limit_bytes]
        found += extend_all(plans, options, metric, lean=limit_bytes is not None)
    return found


def _lean(space: SearchSpace, e: int, s: int, options: list[Option], run: tuple[int, bool]) -> list[Option]:
    """``undominated(options, metric)`` for the steps ``s..e`` offered in ``run`` (metric,
    staging), memoised: Size searches twice."""
    key = (e, s, *run)
    if key not in space.lean_options:
        space.lean_options[key] = undominated(options, run[0])
    return space.lean_options[key]


def undominated(options: list[Option], metric: int) -> list[Option]:
    """``options`` less those another one beats on ``metric``: no worse in cost, peak, tail and
    prefetch, and earlier in the list or with a smaller tail. Whatever plan both extend, the
    beaten option's point is then no better and sorts after the other's, so ``pareto_front``
    never keeps it (and within a budget, the other fits whenever it does)."""
    keys = [(o.costs[metric], o.peak_bytes, o.tail_bytes, o.prefetch_bytes, i) for i, o in enumerate(options)]
    by_cost = sorted(keys)  # only the options no dearer can beat one: a prefix of these
    costs = [k[0] for k in by_cost]
    kept: list[Option] = []
    for cost, peak, tail, prefetch, j in keys:
        for c, p, t, f, i in by_cost[:bisect_right(costs, cost)]:  # plain loops: asked thousands of times
            if p <= peak and t <= tail and f <= prefetch and (i < j or t < tail) and i != j:
                break
        else:
            kept.append(options[j])
    return kept


def steps_of(trail: Trail) -> list[Step]:
    found: list[Step] = []
    while trail is not None:
        step, trail = trail
        found.append(step)
    return found[::-1]


def to_decisions(base: Decisions, steps: list[Step]) -> Decisions:
    """The max schedule with each step's rows, weights and cascade applied."""
    rows, weights = list(base.ofm_rows), list(base.weights)
    spans: list[CascadeSpan] = []
    for step in steps:
        rows[step.start:step.end + 1] = step.rows
        weights[step.start:step.end + 1] = step.weights
        if step.end > step.start:
            spans.append(CascadeSpan(len(spans), step.start, step.end, step.rolling))
    return replace(base, ofm_rows=tuple(rows), weights=tuple(weights), cascades=tuple(spans))


def pareto_decisions(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> Decisions:
    """Search, then choose (see the module docstring). Raises ``InfeasiblePlan`` when nothing fits."""
    base = max_decisions(net, arch)
    space = SearchSpace(net, arch, oracle, base, tuple(usage_by_time(net, fast_buffers(net, base))),
                        _context(net, base, arch, oracle, with_weights=False),
                        staged=staged_bases(net, base, arch, oracle) if options.fm_staging else {})
    steps = catalogue(space)
    runs = [(metric, staging) for metric, staging in RUNS if space.staged or not staging]  # else the same DP

    def fronts(limit_bytes: int) -> list[Point[Trail]]:
        return [p for metric, staging in runs for p in search_frontier(space, steps, limit_bytes, metric,
                                                                        staging=staging)]

    front = fronts(limits.sram_budget_bytes)
    least = min(p.peak_bytes for p in front)
    if options.optimise is Optimise.SIZE and least < limits.sram_budget_bytes:  # and the cheapest within the least peak
        front += fronts(least)
    # the runs' fronts often hold the same plan: each is measured once (the first kept, as ``choose`` would)
    proposals = list(dict.fromkeys(to_decisions(base, steps_of(p.payload)) for p in front))
    fitting = [d for d in proposals if limits.fits(peak_bytes(net, d))]
    if not fitting:
        smallest = min(proposals, key=lambda d: peak_bytes(net, d))
        limits.check_fits(net, smallest)
        fitting = [smallest]
    log.debug("pareto: %d plans on the last frontier, %d within %d bytes", len(front), len(fitting),
              limits.sram_budget_bytes)
    return choose(net, fitting, arch, options, oracle, limits)


def choose(
    net: Network, proposals: list[Decisions], arch: Architecture, options: PlanOptions, oracle: CostOracle,
    limits: Limits,
) -> Decisions:
    """The fastest proposal (Performance), or Size's trade of peak for cycles, by exact costing;
    on Dedicated_Sram after placing feature maps (and staging inputs) in the cache left."""
    memo = ChoiceMemo()  # the proposals share most ops' contexts
    if options.optimise is Optimise.SIZE:
        return _smallest(net, proposals, arch, options, oracle, limits, memo)
    # every proposal also with its weights chosen again: re-choosing only the fastest few let a
    # larger budget, which changes which are fastest, plan slower (bench/budget_sweep.py)
    unique = list(dict.fromkeys(proposals))
    rechosen = [rebuffered(net, d, arch, oracle, limits.sram_budget_bytes, memo) for d in unique]
    finalists = list(dict.fromkeys(unique + rechosen))
    placed = [_cache_fms(net, d, arch, options, oracle, limits.sram_budget_bytes, memo) for d in finalists]
    return fastest(net, placed, arch, oracle)


def _smallest(
    net: Network, proposals: list[Decisions], arch: Architecture, options: PlanOptions, oracle: CostOracle,
    limits: Limits, memo: ChoiceMemo,
) -> Decisions:
    """Size's trade of peak for cycles; weights are buffered only in the memory left below the peak
    of the plan without them (seed 004): the DP's own weights are kept only when they stay below it."""
    unique = list(dict.fromkeys(proposals))  # by value: proposals recur (both metrics' fronts)
    figures = {d: (peak_bytes(net, d), cycles)
               for d, cycles in zip(unique, total_cycles_each(net, unique, arch, oracle))}

    def exact(d: Decisions) -> tuple[int, int]:
        if d not in figures:
            figures[d] = peak_bytes(net, d), total_cycles(net, d, arch, oracle)
        return figures[d]

    chosen = proposals[limits.size_trade([exact(d) for d in proposals])]
    below = peak_bytes(net, rebuffered(net, chosen, arch, oracle, 0, memo))
    finalists = [rebuffered(net, chosen, arch, oracle, below, memo)]
    finalists += [chosen] if exact(chosen)[0] <= below else []
    chosen = min(finalists, key=lambda d: exact(d)[::-1])
    return _cache_fms(net, chosen, arch, options, oracle, exact(chosen)[0], memo)


def rebuffered(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit: int, memo: ChoiceMemo,
) -> Decisions:
    """``dec``'s stripes and cascades with weights chosen again, op by op, by the exact costing of
    ``weights.propose_weight_buffering`` (the DP prices a prefetch with an estimated slack). That
    choice reads nothing of ``dec``'s own weight plans, so the proposals differing only in those
    (the fronts of the DP's runs often do) share it: memoised in ``memo`` on ``dec`` without them."""
    key = (replace(dec, weights=()), limit)
    found = memo.rechosen.get(key)
    if found is None:
        found = memo.rechosen[key] = propose_weight_buffering(net, dec, arch, oracle, limit, memo=memo)
    return found  # type: ignore[no-any-return]


def _cache_fms(
    net: Network, dec: Decisions, arch: Architecture, options: PlanOptions, oracle: CostOracle, limit: int,
    memo: ChoiceMemo,
) -> Decisions:
    """Dedicated_Sram: feature maps in the cache within ``limit``, then staged inputs (as the
    cascade search); other memory modes: ``dec``."""
    if not arch.is_dedicated_sram:
        return dec

    def place(d: Decisions) -> Decisions:
        return place_feature_maps(net, d, arch, oracle, limit, memo=memo)
    if not options.fm_staging:
        return place(dec)
    if options.optimise is Optimise.PERFORMANCE:
        return place_and_stage(net, dec, arch, oracle, limit, lambda d: [place(d)])
    return stage_inputs(net, place(dec), arch, oracle, limit)
