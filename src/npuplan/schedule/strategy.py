"""Strategies that propose complete decision sets: the cascade search and the Pareto DP."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from npuplan.errors import InfeasiblePlan
from npuplan.hw.memory import Architecture
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule.decisions import Decisions
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle
from npuplan.schedule.usage import fast_buffers, peak_bytes, usage_by_time
from npuplan.schedule.weights import propose_weight_buffering


# Size keeps the least peak unless more memory buys disproportionate speed: a percent of extra SRAM
# must save more than this many percent of cycles (ds_cnn_kws: +17% SRAM for -75% cycles is taken)
SIZE_MEMORY_WEIGHT = 3.0


def cascade_search(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, budget: int, *,
    every_chain: bool = False,
) -> Decisions:
    """Max schedule; cascades when it does not fit (or to shrink the peak for Size; with
    ``every_chain``, Performance also cascades chains that fit where that is faster);
    fast-storage FMs (Dedicated_Sram); then weight buffering in the memory left. Size on a cache
    (Dedicated_Sram) spends the peak of its minimal schedule (``fast_storage.size_on_cache``)."""
    from npuplan.schedule.cascades import plan_cascades
    from npuplan.schedule.fast_storage import place_with_weights, size_on_cache
    from npuplan.schedule.staging import stage_inputs
    from npuplan.schedule.planner import max_decisions

    dec = max_decisions(net, arch)
    limit = budget
    if options.optimise is Optimise.SIZE and arch.is_dedicated_sram:
        placed, limit = size_on_cache(net, dec, arch, oracle, budget)
        return stage_inputs(net, placed, arch, oracle, limit) if options.fm_staging else placed
    if options.optimise is Optimise.SIZE:
        dec, limit = plan_cascades(net, dec, arch, oracle, budget, options.optimise,
                                   memory_weight=SIZE_MEMORY_WEIGHT)
        limit = min(budget, max(limit, peak_bytes(net, dec)))
    elif every_chain or peak_bytes(net, dec) > budget:
        dec = plan_cascades(net, dec, arch, oracle, budget, options.optimise, every_chain=every_chain)[0]
    check_fits(net, dec, budget)
    if arch.is_dedicated_sram:
        placed = place_with_weights(net, dec, arch, oracle, budget, limit,
                                    try_cascades=options.optimise is Optimise.PERFORMANCE)
        return stage_inputs(net, placed, arch, oracle, limit) if options.fm_staging else placed
    return propose_weight_buffering(net, dec, arch, oracle, limit, always=options.buffer_weights)


def pareto_search(
    net: Network, arch: Architecture, options: PlanOptions, oracle: CostOracle, budget: int,
) -> Decisions | None:
    """The Pareto DP over streaming strategies (``None`` when it finds nothing within budget)."""
    try:
        from npuplan.schedule.pareto import pareto_decisions
    except ImportError:
        return None
    return pareto_decisions(net, arch, options, oracle, budget)


def size_trade(figures: Sequence[tuple[int, int]], memory_weight: float = SIZE_MEMORY_WEIGHT, *,
               free_bytes: int = 0) -> int:
    """Index of Size's choice among ``(peak bytes, cycles)`` pairs: the least peak unless more
    memory buys disproportionate speed, i.e. the least ``cycles / C + memory_weight * (peak / P - 1)``
    where ``P`` is the least peak and ``C`` the fewest cycles at it (as ``cascades.plan_cascades``).
    Peaks up to ``free_bytes`` count as the least (``P`` is at least that; on a cache it is
    ``fast_storage.size_cascades``' limit, the least peak itself being 0)."""
    least = max(min(p for p, _ in figures), free_bytes, 1)
    fewest = max(min(c for p, c in figures if p <= least), 1)

    def score(i: int) -> tuple[float, int, int]:
        peak, cycles = figures[i]
        return cycles / fewest + memory_weight * (max(peak, least) / least - 1), peak, cycles

    return min(range(len(figures)), key=score)


def check_fits(net: Network, dec: Decisions, budget: int) -> None:
    """Raise ``InfeasiblePlan`` naming the op at the peak, what it needs, and why."""
    usage = usage_by_time(net, fast_buffers(net, dec))
    if not usage or max(usage) <= budget:
        return
    t = max(range(len(usage)), key=usage.__getitem__)
    op_name, why = _blame(net, dec, t)
    raise InfeasiblePlan(
        op=op_name, needed_bytes=usage[t], budget_bytes=budget, why=why,
        hint=f"raise --arena-cache-size to at least {usage[t]} bytes, or use a memory mode "
             "with the arena off-chip (Dedicated_Sram)",
    )


def _blame(net: Network, dec: Decisions, t: int) -> tuple[str, str]:
    name = f"time step {t}"
    for i, when in enumerate(net.times):
        if when == t:
            name = net.npu_ops[i].name
    live = [b for b in fast_buffers(net, dec) if b.start <= t <= b.end]
    whole = [b for b in live if b.kind == "fm" and net.fms[b.name].whole_reason]
    if whole:
        big = max(whole, key=lambda b: b.size_bytes)
        return name, f"{net.fms[big.name].whole_reason}: '{big.name}' is {big.size_bytes} bytes"
    big = max(live, key=lambda b: b.size_bytes)
    return name, f"smallest stripes leave '{big.name}' at {big.size_bytes} bytes ({len(live)} buffers live)"
