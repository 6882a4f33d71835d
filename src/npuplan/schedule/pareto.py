"""The Pareto search (seed ``000_*``): dynamic programming over the NPU op sequence.

Position ``e`` of the DP holds a Pareto frontier (``frontier.prune``) of plans for NPU ops
``0..e``. A plan reaches ``e`` by appending one step:

* weight streaming: op ``e`` alone with its whole IFM and OFM, its weights read directly, copied
  whole, or single/double buffered in OFM depth slices, optionally prefetched under op ``e-1``
  (the proposals of ``weights.candidate_plans``);
* IFM streaming: ops ``s..e`` of one chain run as a cascade with rolling buffers between them, for
  each final stripe height of ``cascades.stripe_candidates``, weights read directly or kept whole
  (full depth) in fast storage for the whole cascade. ``cascades._segment`` gives the stripe rows,
  the rolling buffers and the exact fast-storage peak over the cascade's time steps.

A step's cost is the seed's search metric: bytes moved weighted by memory (SRAM 1, DRAM 10,
on-chip flash 2, off-chip flash 20) plus 40 x cycles, all from the one cost model via
``costing.cost_op``. Plans over the budget are dropped and each frontier is capped.

Choosing is a separate step: the last frontier's plans become ``Decisions``; on Dedicated_Sram
feature maps are placed in the fast storage left (``fast_storage.place_feature_maps``); the
fastest plan by the exact costing (``assemble.total_cycles``) wins for Performance, the smallest
peak (then the fastest) for Size. Nothing fits: ``check_fits`` raises ``InfeasiblePlan`` for the
smallest plan found, exactly as the cascade search does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Optional

from npuplan.hw.memory import Architecture, MemArea
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule.cascades import MAX_CASCADE_OPS, _segment, chains, stripe_candidates
from npuplan.schedule.costing import Costed, cost_op
from npuplan.schedule.decisions import NO_WEIGHT_BUFFER, CascadeSpan, Decisions, RollingBuffer, WeightPlan
from npuplan.schedule.frontier import Point, prune
from npuplan.schedule.geometry import min_stripe_rows
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import ALIGN_BYTES, CostOracle, round_up
from npuplan.schedule.usage import fast_buffers, usage_by_time
from npuplan.schedule.weights import candidate_plans, full_depth_plan, needs_dma

log = logging.getLogger(__name__)

MAX_FRONTIER = 16  # plans kept per position (the seed's cap)
MAX_STEP_OPTIONS = 12  # cascade options kept per (start, end) after their own frontier


@dataclass(frozen=True, slots=True)
class SearchWeights:
    """The seed's search metric: ``cycles`` per cycle plus ``per_byte[area]`` per byte moved."""

    cycles: float
    per_byte: Mapping[MemArea, float]


SEED_WEIGHTS = SearchWeights(40.0, MappingProxyType({
    MemArea.SRAM: 1.0, MemArea.DRAM: 10.0, MemArea.ON_CHIP_FLASH: 2.0, MemArea.OFF_CHIP_FLASH: 20.0,
}))


def search_cost(costed: Costed, weights: SearchWeights = SEED_WEIGHTS) -> float:
    """The search metric of one costed op (cycles alone when the cost record has no bytes)."""
    moved = getattr(costed.cost, "bytes", None) or {}
    return weights.cycles * costed.cycles + sum(v * weights.per_byte.get(key[0], 0.0) for key, v in moved.items())


@dataclass(frozen=True, slots=True)
class Step:
    """NPU ops ``start..end`` (one op, or a cascade when ``end > start``) with their OFM stripe
    rows, the rolling buffers between them and each op's weight plan."""

    start: int
    end: int
    rows: tuple[int, ...]
    rolling: tuple[RollingBuffer, ...]
    weights: tuple[WeightPlan, ...]


@dataclass(frozen=True, slots=True)
class Option:
    """A step with its search cost and fast-storage use: ``peak_bytes`` over its own time steps,
    ``tail_bytes`` at its last one, ``prefetch_bytes`` added at the previous op's time step."""

    step: Step
    cost: float
    peak_bytes: int
    tail_bytes: int
    prefetch_bytes: int = 0


# The steps of a partial plan, last first, shared between plans: (step, earlier steps) or None.
Trail = Optional[tuple[Step, "Trail"]]


@dataclass(frozen=True)
class SearchSpace:
    """What every step proposal reads: the max schedule and its fast-storage use per time step."""

    net: Network
    arch: Architecture
    oracle: CostOracle
    base: Decisions
    usage: tuple[int, ...]


def single_options(space: SearchSpace, i: int) -> list[Option]:
    """Weight streaming of op ``i``: every weight plan, with and without prefetch under op ``i-1``."""
    net, base, usage = space.net, space.base, space.usage
    op, t = net.npu_ops[i], net.times[i]
    whole = (op.ofm_shape.h,)
    direct = cost_op(net, base, space.arch, space.oracle, i)
    found = [Option(Step(i, i, whole, (), (NO_WEIGHT_BUFFER,)), search_cost(direct), usage[t], usage[t])]
    if not needs_dma(op, space.arch):
        return found
    prefetch = i > 0 and net.times[i - 1] == t - 1  # no prefetch across a CPU op
    slack = cost_op(net, base, space.arch, space.oracle, i - 1).slack_cycles if prefetch else 0
    block = space.oracle.block_config(op, op.ofm_shape)
    for plan in candidate_plans(op, block, space.oracle):
        size = round_up(plan.buffer_bytes, ALIGN_BYTES)
        for variant in [plan, replace(plan, prebuffer=True)] if prefetch else [plan]:
            c = cost_op(net, base, space.arch, space.oracle, i, weights=variant,
                        prev_slack_cycles=slack if variant.prebuffer else 0)
            found.append(Option(Step(i, i, whole, (), (variant,)), search_cost(c), usage[t] + size, usage[t] + size,
                                size if variant.prebuffer else 0))
    return found


def cascade_options(space: SearchSpace, s: int, e: int, heights: list[int]) -> list[Option]:
    """IFM streaming of ops ``s..e`` as one cascade, per final stripe height and per set of ops
    whose weights are kept whole in fast storage for the cascade. The tail is the cascade's peak
    (a safe bound for a prefetch under its last op)."""
    net, base = space.net, space.base
    found: list[Point[Option]] = []
    for h in heights:
        seg = _segment(net, base, space.arch, space.oracle, space.usage, s, e, h)  # type: ignore[arg-type]
        trial = replace(base, ofm_rows=base.ofm_rows[:s] + seg.rows + base.ofm_rows[e + 1:],
                        cascades=(CascadeSpan(-1, s, e, seg.rolling),))
        for held in weight_sets(space, trial, s, e):
            peak = seg.peak_bytes + held.peak_bytes
            option = Option(Step(s, e, seg.rows, seg.rolling, held.payload), held.cost, peak, peak)
            found.append(Point(held.cost, peak, peak, option))
    if not found:
        return []
    return [p.payload for p in prune(found, budget_bytes=max(p.peak_bytes for p in found), cap=MAX_STEP_OPTIONS)]


def weight_sets(space: SearchSpace, trial: Decisions, s: int, e: int) -> list[Point[tuple[WeightPlan, ...]]]:
    """Which ops of cascade ``s..e`` keep their weights whole in fast storage: the Pareto set of
    (search cost of the ops, weight-buffer bytes), built op by op (an op's cost depends only on
    its own weights)."""
    net, arch, oracle = space.net, space.arch, space.oracle
    sets: list[Point[tuple[WeightPlan, ...]]] = [Point(0.0, 0, 0, ())]
    for k in range(s, e + 1):
        op = net.npu_ops[k]
        choices = [(search_cost(cost_op(net, trial, arch, oracle, k)), 0, NO_WEIGHT_BUFFER)]
        if needs_dma(op, arch):
            stripe = op.ofm_shape.with_h(min(trial.ofm_rows[k], op.ofm_shape.h))
            plan = full_depth_plan(op, oracle.block_config(op, stripe), oracle)
            choices.append((search_cost(cost_op(net, trial, arch, oracle, k, weights=plan)),
                            round_up(plan.buffer_bytes, ALIGN_BYTES), plan))
        grown = [Point(p.cost + cost, p.peak_bytes + size, 0, p.payload + (plan,))
                 for p in sets for cost, size, plan in choices]
        sets = prune(grown, budget_bytes=max(p.peak_bytes for p in grown), cap=MAX_STEP_OPTIONS)
    return sets


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


def extend(plan: Point[Trail], option: Option) -> Point[Trail]:
    """``plan`` followed by ``option``: costs add, peaks take the maximum (with the prefetch)."""
    peak = max(plan.peak_bytes, option.peak_bytes)
    if option.prefetch_bytes:
        peak = max(peak, plan.tail_bytes + option.prefetch_bytes)
    return Point(plan.cost + option.cost, peak, option.tail_bytes, (option.step, plan.payload))


Catalogue = list[dict[int, list[Option]]]  # per op ``e``: the steps ending at ``e``, by first op


def catalogue(space: SearchSpace) -> Catalogue:
    """Every step of the search, proposed once (they do not depend on the budget)."""
    chain_of = {k: run for run in chains(space.net) for k in range(run[0], run[1] + 1)}
    return [options_ending_at(space, e, chain_of.get(e)) for e in range(len(space.net.npu_ops))]


def search_frontier(space: SearchSpace, steps: Catalogue, budget_bytes: int) -> list[Point[Trail]]:
    """The DP: the frontier of complete plans within ``budget_bytes`` (or the smallest one).

    Under a hard cap the peak so far never limits what may follow, so the cheapest plan within
    the budget at each position is always kept (``frontier.spread``) and the cheapest complete
    plan is optimal for the metric; the peak axis keeps smaller alternatives beside it."""
    net = space.net
    npu_times = set(net.times)
    floor = max((u for t, u in enumerate(space.usage) if t not in npu_times), default=0)
    fronts: list[list[Point[Trail]]] = []
    start: list[Point[Trail]] = [Point(0.0, floor, floor, None)]
    for ending in steps:
        candidates = [
            extend(plan, option)
            for s, options in ending.items()
            for plan in (fronts[s - 1] if s > 0 else start)
            for option in options
        ]
        fronts.append(prune(candidates, budget_bytes=budget_bytes, cap=MAX_FRONTIER))
    return fronts[-1] if fronts else start


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


def _peak(net: Network, dec: Decisions) -> int:
    return max(usage_by_time(net, fast_buffers(net, dec)), default=0)


def pareto_decisions(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, budget: int,
) -> Decisions:
    """Search, then choose (see the module docstring). Raises ``InfeasiblePlan`` when nothing fits."""
    from npuplan.schedule.assemble import total_cycles
    from npuplan.schedule.planner import max_decisions
    from npuplan.schedule.strategy import check_fits

    base = max_decisions(net, arch)
    space = SearchSpace(net, arch, oracle, base, tuple(usage_by_time(net, fast_buffers(net, base))))
    steps = catalogue(space)
    front = search_frontier(space, steps, budget)
    size = options.optimise is Optimise.SIZE
    least = min(p.peak_bytes for p in front)
    if size and least < budget:  # Size: the cheapest plans within the smallest peak found
        front = search_frontier(space, steps, least)
    proposals = [to_decisions(base, steps_of(p.payload)) for p in front]
    fitting = [d for d in proposals if _peak(net, d) <= budget]
    if not fitting:
        smallest = min(proposals, key=lambda d: _peak(net, d))
        check_fits(net, smallest, budget)
        fitting = [smallest]
    log.debug("pareto: %d plans on the last frontier, %d within %d bytes", len(front), len(fitting), budget)
    if size:
        least = min(_peak(net, d) for d in fitting)
        fitting = [d for d in fitting if _peak(net, d) == least]
    if arch.is_dedicated_sram:
        from npuplan.schedule.fast_storage import place_feature_maps

        fitting = [place_feature_maps(net, d, arch, oracle, _peak(net, d) if size else budget) for d in fitting]

    def key(d: Decisions) -> tuple[int, int]:
        cycles, peak = total_cycles(net, d, arch, oracle), _peak(net, d)
        return (peak, cycles) if size else (cycles, peak)

    return min(fitting, key=key)
