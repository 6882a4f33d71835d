"""Strategies that propose complete decision sets: the cascade search and the Pareto DP."""

from __future__ import annotations

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule.moves.cascade_split import plan_cascades, size_cascade_plans
from npuplan.schedule.model.decisions import Decisions, max_decisions
from npuplan.schedule.moves.fast_storage import place_and_stage, placements_with_weights, size_on_cache
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.pricing.assemble import fastest
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.search.pareto import pareto_decisions
from npuplan.schedule.moves.staging import stage_inputs
from npuplan.schedule.model.usage import peak_bytes
from npuplan.schedule.moves.weights import propose_weight_buffering


def cascade_search(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits, *,
    every_chain: bool = False,
) -> Decisions:
    """Max schedule; cascades when it does not fit (or to shrink the peak for Size; with
    ``every_chain``, Performance also cascades chains that fit where that is faster);
    fast-storage FMs (Dedicated_Sram); then weight buffering in the memory left. Size on a cache
    (Dedicated_Sram) spends the peak of its minimal schedule (``fast_storage.size_on_cache``)."""
    dec = max_decisions(net, arch)
    limit = limits.sram_budget_bytes
    if options.optimise is Optimise.SIZE and arch.is_dedicated_sram:
        placed, limit = size_on_cache(net, dec, arch, oracle, limits.sram_budget_bytes)
        return stage_inputs(net, placed, arch, oracle, limit) if options.fm_staging else placed
    if options.optimise is Optimise.SIZE:
        return size_cascade_searches(net, arch, options, oracle, limits, with_least=False)[0]
    if every_chain or not limits.fits(peak_bytes(net, dec)):
        dec = plan_cascades(net, dec, arch, oracle, limits.sram_budget_bytes, options.optimise,
                            every_chain=every_chain)[0]
    return _finish(net, dec, arch, options, oracle, limits, limit)


def size_cascade_searches(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits, *,
    with_least: bool = True,
) -> list[Decisions]:
    """Size with the arena in fast storage: ``cascade_search``'s plan (cascades at the limit Size
    trades memory for speed at), then (``with_least``), where that limit is above the least peak,
    the plan at the least peak (``cascade_split.size_cascade_plans``), each with weight buffers
    within its limit."""
    start, budget, weight = max_decisions(net, arch), limits.sram_budget_bytes, limits.size_memory_weight
    plans = (size_cascade_plans(net, start, arch, oracle, budget, memory_weight=weight) if with_least
             else (plan_cascades(net, start, arch, oracle, budget, Optimise.SIZE, memory_weight=weight),))
    found = []
    for dec, limit in plans:
        limit = min(limits.sram_budget_bytes, max(limit, peak_bytes(net, dec)))
        found.append(_finish(net, dec, arch, options, oracle, limits, limit))
    return found


def cascades_where_faster(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> Decisions | None:
    """Performance: ``cascade_search`` with ``every_chain``, or None where that is the plain
    search's plan (whole feature maps fit and no chain is faster cascaded: nothing to finish twice)."""
    dec = max_decisions(net, arch)
    cascaded = plan_cascades(net, dec, arch, oracle, limits.sram_budget_bytes, options.optimise, every_chain=True)[0]
    if cascaded == dec and limits.fits(peak_bytes(net, dec)):
        return None
    return _finish(net, cascaded, arch, options, oracle, limits, limits.sram_budget_bytes)


def _finish(
    net: Network, dec: Decisions, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
    limit: int,
) -> Decisions:
    """``dec``'s cascades with fast-storage feature maps and staged inputs (Dedicated_Sram) and
    weight buffers within ``limit`` bytes (``InfeasiblePlan`` when ``dec`` itself does not fit)."""
    limits.check_fits(net, dec)
    if arch.is_dedicated_sram:
        def propose(d: Decisions) -> list[Decisions]:
            return placements_with_weights(net, d, arch, oracle, limits.sram_budget_bytes, limit,
                                           try_cascades=options.optimise is Optimise.PERFORMANCE)
        if options.fm_staging:
            return place_and_stage(net, dec, arch, oracle, limit, propose)
        return fastest(net, propose(dec), arch, oracle)
    return propose_weight_buffering(net, dec, arch, oracle, limit, always=options.buffer_weights)


def pareto_search(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, limits: Limits,
) -> Decisions:
    """The Pareto DP over streaming strategies (``InfeasiblePlan`` when nothing fits ``limits``)."""
    return pareto_decisions(net, arch, options, oracle, limits)
