"""``plan_schedule``: the top-level driver, as named steps.

1. index the graph; 2. the max schedule (whole feature maps, placed by memory mode);
3. if it does not fit, cascades under the budget; 4. fast-storage placement of feature maps
(Dedicated_Sram); 5. weight buffering in the memory left (the budget for Performance, the peak
for Size); 6. assemble the frozen ``Schedule`` and check the real allocated peak against the budget.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from npuplan.errors import InfeasiblePlan
from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import LoweredGraph
from npuplan.options import Optimise, PlanOptions, Search
from npuplan.schedule.pricing.assemble import assemble, total_cycles, total_cycles_each
from npuplan.schedule.moves.branch_cascades import with_branch_cascades
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, Decisions, max_decisions
from npuplan.schedule.moves.fast_storage import place_feature_maps, size_cascades
from npuplan.schedule.search.floor import branched_floor, floor_decisions, infeasible
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.model.network import Network, build_network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.search.strategy import (
    cascade_search,
    cascades_where_faster,
    pareto_search,
    size_cascade_searches,
)
from npuplan.schedule.moves.trim import trim_peak
from npuplan.schedule.model.types import Schedule
from npuplan.schedule.model.usage import peak_bytes
from npuplan.schedule.moves.weights import propose_weight_buffering

log = logging.getLogger(__name__)


def plan_schedule(
    lowered: LoweredGraph, arch: Architecture, options: PlanOptions, *, oracle: CostOracle | None = None,
    limits: Limits | None = None,
) -> Schedule:
    """Plan the NPU ops of ``lowered`` on ``arch`` within ``limits`` (``Limits.of(arch)`` when not
    given: the arena cache size, ``--arena-cache-size`` applied by ``hw.build``).

    The budget is a cap: the fastest candidate whose allocated peak fits is returned; if none does,
    the floor schedule (``schedule.floor``) with weight buffers in what is left. Size stores feature
    maps of unaligned depth packed (NHWC, ``build_network``) when the arena is in fast storage
    (``packs_unaligned``); Performance plans both layouts where the budget binds and keeps the
    faster (``_fastest_layout``). Raises ``InfeasiblePlan`` naming the floor's allocated peak when
    even that does not fit.
    """
    oracle = oracle or default_oracle(arch, optimise=options.optimise)
    limits = limits or Limits.of(arch)
    if options.optimise is Optimise.SIZE:
        return _plan(build_network(lowered, pack_unaligned=packs_unaligned(arch, options)), arch, options, oracle,
                     limits)
    return _fastest_layout(lowered, arch, options, oracle, limits)


PACKED_NOTE = "feature maps of unaligned depth kept NHWC"


def _fastest_layout(
    lowered: LoweredGraph, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> Schedule:
    """Performance: the network with its maps of unaligned depth in bricks, and packed (NHWC), are
    two candidates at every budget. The layout whose roomiest plan (``roomiest``) is faster is
    planned first (an order that does not depend on the budget), the other too wherever the budget
    binds on the first (that roomiest plan does not fit, or nothing does) or the first's plan is
    slower than the other's roomiest, and the faster plan is kept, the first on a tie. Of two roomiest
    plans of equal cycles, the layout of fewer feature-map bytes goes first. Planning one layout only
    let a larger budget plan slower: where bricks first fit, it lost the faster packed plan a smaller
    budget had to take. Raises the smaller
    floor's ``InfeasiblePlan`` when neither layout plans."""
    bricks, packed = build_network(lowered), build_network(lowered, pack_unaligned=True)
    if not packed.packed:
        return _plan(bricks, arch, options, oracle, limits)
    # on equal cycles the layout of fewer feature-map bytes first: the roomiest plans do not show the
    # fast storage smaller maps win in a budgeted plan (U65 Dedicated_Sram: the arena is off-chip)
    (first_cycles, _, _, first, first_roomy), (second_cycles, _, _, second, second_roomy) = sorted(
        (total_cycles(n, roomy, arch, oracle), sum(fm.size_bytes for fm in n.fms.values()), k, n, roomy)
        for k, n in enumerate((bricks, packed)) for roomy in (roomiest(n, arch, oracle),))
    plans: list[Schedule] = []
    errors: list[InfeasiblePlan] = []
    try:
        plans.append(_noted(first, _plan(first, arch, options, oracle, limits)))
    except InfeasiblePlan as error:
        errors.append(error)
    # the second layout is planned too where the budget binds on the first (its roomiest plan does
    # not fit) or the first's plan is slower than the second's roomiest
    if (not plans or not limits.fits(peak_bytes(first, first_roomy))
            or plans[0].total_npu_cycles > second_cycles):
        try:
            plans.append(_noted(second, _plan(second, arch, options, oracle, limits)))
        except InfeasiblePlan as error:
            errors.append(error)
    if not plans:  # name the smaller of the floors: that budget plans
        raise min(errors, key=lambda e: e.needed_bytes)
    return min(plans, key=lambda p: p.total_npu_cycles)


def roomiest(net: Network, arch: Architecture, oracle: CostOracle) -> Decisions:
    """The plan of ``net`` within no budget: the max schedule with every weight buffer it gains by."""
    return propose_weight_buffering(net, max_decisions(net, arch), arch, oracle, 1 << 62)


def _noted(net: Network, schedule: Schedule) -> Schedule:
    return replace(schedule, notes=(*schedule.notes, PACKED_NOTE)) if net.packed else schedule


def packs_unaligned(arch: Architecture, options: PlanOptions) -> bool:
    """Whether feature maps of unaligned depth are stored NHWC from the start: for Size when the
    arena is in fast storage (packing saves its bytes). On a cache (Dedicated_Sram) the arena is
    off-chip, where packing saves nothing Size counts and costs DRAM bursts (an 8-channel NHWC map
    moves 8 bytes a pixel per burst, a brick 16)."""
    return options.optimise is Optimise.SIZE and not arch.is_dedicated_sram


def _plan(net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits) -> Schedule:
    try:
        candidates = _search(net, arch, options, oracle, limits)
    except InfeasiblePlan as err:
        log.info("search found no plan within %d bytes (%s); trying the floor schedule", limits.sram_budget_bytes,
                 err.why)
        candidates = []
    if options.optimise is Optimise.SIZE:
        return _size_choice(net, candidates, arch, options, oracle, limits)
    # buffer_weights keeps every weight buffer, as Vela does: no trimming (which may give them back)
    trim = options.optimise is Optimise.PERFORMANCE and not options.buffer_weights
    for dec, notes in _rank(net, candidates, arch, oracle, trim=trim):
        schedule = _fit_allocation(net, dec, arch, options, oracle, limits.sram_budget_bytes, notes)
        if limits.fits(schedule.sram_peak_bytes):
            return _or_floor(net, schedule, arch, options, oracle, limits)
    return _floor_plan(net, arch, options, oracle, limits)


def _size_choice(
    net: Network, candidates: list[tuple[Decisions, tuple[str, ...]]], arch: Architecture, options: PlanOptions,
    oracle: CostOracle, limits: Limits,
) -> Schedule:
    """Size: every candidate allocated (its weight buffers within the peak the feature maps alone
    allocate to), and of those that fit, the one Size's rule (``Limits.size_trade``) chooses by
    allocated peak and cycles; the floor plan when none fits. The search traded on estimates:
    a traded plan whose weight buffers the allocation drops can end larger and slower than the
    least-peak plan (micronet_kws_49x10 u55-64: 82,416 B and 5.08 M cycles against 77,008 B and
    4.05 M)."""
    schedules = []
    for dec, notes in candidates:
        schedule = _fit_allocation(net, dec, arch, options, oracle, limits.sram_budget_bytes, notes)
        schedule = _weights_within_bare_peak(net, dec, schedule, arch, options, oracle, notes)
        if limits.fits(schedule.sram_peak_bytes):
            schedules.append(schedule)
    if len(schedules) < 2:
        return schedules[0] if schedules else _floor_plan(net, arch, options, oracle, limits)
    figures = [(s.sram_peak_bytes, s.total_npu_cycles) for s in schedules]
    return schedules[limits.size_trade(figures, free_bytes=size_free_bytes(net, arch, oracle, limits))]


def _or_floor(
    net: Network, schedule: Schedule, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> Schedule:
    """Performance where whole feature maps do not fit: ``schedule`` or the floor plan, the faster
    (``schedule`` on a tie). The floor plan is what a budget too small for any search candidate
    gets; without it here, a budget just large enough for one planned slower than the floor
    (a packed residual-and-concat network: 35,413 cycles within 2880 B, 43,917 within 2928 B)."""
    if options.optimise is Optimise.SIZE or limits.fits(peak_bytes(net, max_decisions(net, arch))):
        return schedule
    try:
        floor = _floor_plan(net, arch, options, oracle, limits)
    except InfeasiblePlan:
        return schedule
    return floor if floor.total_npu_cycles < schedule.total_npu_cycles else schedule


def _weights_within_bare_peak(
    net: Network, dec: Decisions, schedule: Schedule, arch: Architecture, options: PlanOptions,
    oracle: CostOracle, notes: tuple[str, ...],
) -> Schedule:
    """Size: ``schedule`` (``dec`` allocated) unless its weight buffers raise the allocated peak
    above what the feature maps alone allocate to; then those buffers trimmed to that peak, or
    dropped. Size proposes weight buffers within the estimated peak, where they cost nothing, but
    placing them can fragment the allocation (a buffer in the hole a dead input leaves). On a cache
    (Dedicated_Sram) Size places them within its minimal schedule's peak instead
    (``fast_storage.size_on_cache``), where the maps alone may allocate nothing."""
    bare_dec = replace(dec, weights=tuple(NO_WEIGHT_BUFFER for _ in dec.weights))
    if bare_dec == dec or arch.is_dedicated_sram:
        return schedule
    bare = assemble(net, bare_dec, arch, oracle, allocator=options.tensor_allocator,
                    notes=notes + ("weight buffers dropped for allocation",))
    if schedule.sram_peak_bytes <= bare.sram_peak_bytes:
        return schedule
    trimmed = _fit_allocation(net, dec, arch, options, oracle, bare.sram_peak_bytes, notes)
    return trimmed if trimmed.sram_peak_bytes <= bare.sram_peak_bytes else bare


# Candidates within this fraction of the fastest one's cycles count as equally fast: among those,
# the smaller SRAM peak is taken first. Exact ties only: any tolerance lets a larger budget, which
# offers a smaller-peak candidate within it that the smaller budget did not, plan slower
# (mobilenet_v1_025_96 u55-128 took 353,736 cycles within 64 KiB, 354,664 within 128 KiB).
EQUAL_SPEED_FRACTION = 0.0


def _rank(
    net: Network, candidates: list[tuple[Decisions, tuple[str, ...]]], arch: Architecture, oracle: CostOracle, *,
    trim: bool,
) -> list[tuple[Decisions, tuple[str, ...]]]:
    """Candidates in the order to try them (``order_by_speed``); with ``trim``, the first one with
    fast storage at its peak given back where the speed it buys is not worth the memory, as long
    as it stays within the equal-speed bound of the fastest candidate (``schedule.trim``)."""
    cycles = total_cycles_each(net, [d for d, _ in candidates], arch, oracle)
    scored = [(cycles[k], peak_bytes(net, d), k) for k, (d, _) in enumerate(candidates)]
    ranked = [candidates[k] for k in order_by_speed(scored)]
    if trim and ranked:
        dec, notes = ranked[0]
        trimmed = trim_peak(net, dec, arch, oracle, min(scored)[0] * (1 + EQUAL_SPEED_FRACTION))
        if trimmed != dec:
            ranked[0] = (trimmed, notes + ("peak trimmed",))
    return ranked


def order_by_speed(scored: list[tuple[int, int, int]]) -> list[int]:
    """Keys of ``(cycles, peak_bytes, key)`` triples, fastest first, except that the equally fast
    ones (within ``EQUAL_SPEED_FRACTION`` of the fastest) go by smaller peak: speed bought with no
    real gain costs no SRAM."""
    ranked = sorted(scored)
    if not ranked:
        return []
    bound = ranked[0][0] * (1 + EQUAL_SPEED_FRACTION)
    near = sorted((s for s in ranked if s[0] <= bound), key=lambda s: (s[1], s[0], s[2]))
    return [s[2] for s in near] + [s[2] for s in ranked if s[0] > bound]


def _floor_plan(net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits) -> Schedule:
    """The least-peak schedule (chain cascades, or also through branches: the smaller allocated
    peak), with weight buffering in the memory the budget leaves."""
    chains = floor_decisions(net, max_decisions(net, arch), arch, oracle)
    candidates = list(dict.fromkeys((chains, branched_floor(net, chains, arch, oracle))))
    floors = [assemble(net, d, arch, oracle, allocator=options.tensor_allocator, notes=("floor schedule",))
              for d in candidates]
    k = min(range(len(floors)), key=lambda i: (floors[i].sram_peak_bytes, i))
    floor, bare = candidates[k], floors[k]
    if not limits.fits(bare.sram_peak_bytes):
        raise infeasible(net, floor, allocated_bytes=bare.sram_peak_bytes, limits=limits)
    limit = limits.sram_budget_bytes if options.optimise is Optimise.PERFORMANCE else bare.sram_peak_bytes
    buffered = propose_weight_buffering(net, floor, arch, oracle, limit)
    schedule = _fit_allocation(net, buffered, arch, options, oracle, limit, ("floor schedule",))
    return schedule if schedule.sram_peak_bytes <= limit else bare


def _search(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> list[tuple[Decisions, tuple[str, ...]]]:
    """Propose complete decision sets; the caller chooses."""
    found: list[tuple[Decisions, tuple[str, ...]]] = []
    both = options.search is Search.AUTO
    failure: InfeasiblePlan | None = None
    least_peak: list[tuple[Decisions, tuple[str, ...]]] = []
    if options.search in (Search.AUTO, Search.CASCADE):
        try:
            cascaded = _cascade_searches(net, arch, options, oracle, limits)
            found.append((cascaded[0], ("search=cascade",)))
            least_peak = [(d, ("search=cascade", "least peak")) for d in cascaded[1:]]
            if options.optimise is Optimise.PERFORMANCE:
                # chains that fit whole may still be faster cascaded (room for weight buffers elsewhere),
                # at every budget: proposed only where the budget bound, a larger budget where whole
                # maps fit lost the faster cascade a smaller one found (mobilenet_v2_100_224 u55-128)
                faster = cascades_where_faster(net, arch, options, oracle, limits)
                if faster is not None:
                    found.append((faster, ("search=cascade", "cascades where faster")))
        except InfeasiblePlan as err:  # with both searches, the other one may still fit
            if not both:
                raise
            failure = err
    if options.search in (Search.AUTO, Search.PARETO):
        try:
            found.append((pareto_search(net, arch, options, oracle, limits), ("search=pareto",)))
        except InfeasiblePlan:
            if failure is not None:
                raise failure from None
            if not found:
                raise
    if options.optimise is Optimise.SIZE:
        free = size_free_bytes(net, arch, oracle, limits)
        if len(found) > 1:
            cycles = total_cycles_each(net, [d for d, _ in found], arch, oracle)
            figures = [(peak_bytes(net, d), cycles[k]) for k, (d, _) in enumerate(found)]
            found = [found[limits.size_trade(figures, free_bytes=free)]]
        if found and "search=cascade" in found[0][1]:  # its least-peak plan, for ``_size_choice`` to weigh
            found += least_peak
        found = [_through_branches(net, d, notes, arch, oracle, free) for d, notes in found]
    return found


def _cascade_searches(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> list[Decisions]:
    """``cascade_search``'s plan; for Size with the arena in fast storage, where it traded memory
    for speed, its plan at the least peak after it (``strategy.size_cascade_searches``)."""
    if options.optimise is Optimise.SIZE and not arch.is_dedicated_sram:
        return size_cascade_searches(net, arch, options, oracle, limits)
    return [cascade_search(net, arch, options, oracle, limits)]


def size_free_bytes(net: Network, arch: Architecture, oracle: CostOracle, limits: Limits) -> int:
    """The fast-storage bytes Size may use as freely as its least peak: none when the arena is in
    fast storage, ``fast_storage.size_cascades``' limit when it is a cache (Dedicated_Sram)."""
    if not arch.is_dedicated_sram:
        return 0
    return size_cascades(net, max_decisions(net, arch), arch, oracle, limits.sram_budget_bytes)[1]


def _through_branches(
    net: Network, dec: Decisions, notes: tuple[str, ...], arch: Architecture, oracle: CostOracle, free_bytes: int,
) -> tuple[Decisions, tuple[str, ...]]:
    """Size: ``dec`` with cascades through branches where they lower its peak (``branch_cascades``)."""
    branched = with_branch_cascades(net, dec, arch, oracle, free_bytes=free_bytes)
    return (branched, notes + ("cascades through branches",)) if branched != dec else (dec, notes)


def _fit_allocation(
    net: Network, dec: Decisions, arch: Architecture, options: PlanOptions, oracle: CostOracle,
    limit_bytes: int, notes: tuple[str, ...],
) -> Schedule:
    """Assemble; if real allocation (fragmentation) overshoots the limit_bytes, drop weight buffers."""
    schedule = assemble(net, dec, arch, oracle, allocator=options.tensor_allocator, notes=notes)
    if schedule.sram_peak_bytes <= limit_bytes:
        return schedule
    tighter = limit_bytes - (schedule.sram_peak_bytes - peak_bytes(net, dec))
    trimmed = propose_weight_buffering(net, dec, arch, oracle, max(tighter, 0))
    schedule = assemble(net, trimmed, arch, oracle, allocator=options.tensor_allocator,
                        notes=notes + ("weight buffers trimmed for allocation",))
    if schedule.sram_peak_bytes <= limit_bytes:
        return schedule
    bare = propose_weight_buffering(net, dec, arch, oracle, 0)
    schedule = assemble(net, bare, arch, oracle, allocator=options.tensor_allocator,
                        notes=notes + ("weight buffers dropped for allocation",))
    if schedule.sram_peak_bytes > limit_bytes and arch.is_dedicated_sram:
        schedule = _evict_for_allocation(net, bare, arch, options, oracle, limit_bytes, notes)
    return schedule


def _evict_for_allocation(
    net: Network, dec: Decisions, arch: Architecture, options: PlanOptions, oracle: CostOracle,
    limit_bytes: int, notes: tuple[str, ...],
) -> Schedule:
    """Dedicated_Sram: fewer feature maps in the cache until the allocated peak fits the limit_bytes."""
    limit = limit_bytes
    while True:
        schedule = assemble(net, dec, arch, oracle, allocator=options.tensor_allocator,
                            notes=notes + ("feature maps evicted for allocation",))
        if schedule.sram_peak_bytes <= limit_bytes or not (dec.fast_fms or dec.staged_fms):
            return schedule
        if dec.staged_fms:  # staged copies go first: they only speed up one op each
            dec = replace(dec, staged_fms=frozenset())
            continue
        limit -= max(schedule.sram_peak_bytes - limit_bytes, limit // 16, 1)
        dec = place_feature_maps(net, dec, arch, oracle, max(limit, 0))
