"""Fast-storage placement of feature maps when the arena is off-chip (Dedicated_Sram).

The arena lives in DRAM and fast storage (SRAM) is a cache of ``budget`` bytes. Candidates are the
OFMs of NPU ops outside cascades that another NPU op reads and that leave no subgraph (cascade
rolling buffers are already in fast storage and counted against the budget). ``placement_groups``
keeps what always fits, evicts what never fits and solves the competing groups; each candidate's
score is the NPU cycles its producer and consumers save when it is in fast storage.

``place_with_weights`` proposes two orders and keeps the faster: weight buffers first and feature
maps in the memory left (Vela's order), or feature maps first and weight buffers in what is left
(trading weight-buffer size for feature maps). Usage never exceeds ``budget`` at any time step.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.schedule.costing import cost_op
from npuplan.schedule.decisions import Decisions
from npuplan.schedule.network import FeatureMap, Network
from npuplan.schedule.oracle import ALIGN_BYTES, CostOracle, round_up
from npuplan.schedule.placement_groups import Candidate, choose
from npuplan.schedule.usage import fast_buffers, usage_by_time
from npuplan.schedule.weights import ScoreMemo

log = logging.getLogger(__name__)


def candidate_fms(net: Network, dec: Decisions) -> list[FeatureMap]:
    """Feature maps that may move to fast storage: NPU-produced, NPU-consumed, not a subgraph
    boundary, not produced inside a cascade, not a rolling buffer."""
    rolling = {r.tensor_name for c in dec.cascades for r in c.rolling}
    return [
        fm for fm in net.fms.values()
        if fm.producer >= 0 and fm.consumers and not fm.whole_reason and fm.name not in rolling
        and dec.cascade_of(fm.producer) is None
    ]


def _span(net: Network, dec: Decisions, fm: FeatureMap) -> tuple[int, int]:
    """Time steps over which ``fm`` occupies fast storage (cascades read their input throughout)."""
    start, end = fm.start, fm.end
    for c in dec.cascades:
        if c.start in fm.consumers:
            end = max(end, net.times[c.end])
    return start, end


def _users(fm: FeatureMap) -> tuple[int, ...]:
    return tuple(sorted({fm.producer, *fm.consumers}))


def _cycles(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, ops: tuple[int, ...]) -> int:
    return sum(cost_op(net, dec, arch, oracle, i).cycles for i in ops)


def score_candidates(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, fms: list[FeatureMap],
) -> list[Candidate]:
    """Each candidate with the cycles its users save when it alone moves to fast storage
    (all the other candidates in fast storage too, so shared ops are costed realistically)."""
    names = frozenset(fm.name for fm in fms)
    inside = replace(dec, fast_fms=dec.fast_fms | names)
    # the users' cycles with every candidate inside, once per op (ops use several candidates)
    inside_cycles = {i: cost_op(net, inside, arch, oracle, i).cycles for fm in fms for i in _users(fm)}
    found: list[Candidate] = []
    for fm in fms:
        outside = replace(dec, fast_fms=inside.fast_fms - {fm.name})
        users = _users(fm)
        saved = _cycles(net, outside, arch, oracle, users) - sum(inside_cycles[i] for i in users)
        start, end = _span(net, dec, fm)
        found.append(Candidate(fm.name, start, end, round_up(fm.size_bytes, ALIGN_BYTES), saved))
    return found


def place_feature_maps(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int,
) -> Decisions:
    """``dec`` with the best set of candidate feature maps in fast storage, on top of the buffers
    ``dec`` already holds there (rolling buffers, weight buffers), within ``budget`` bytes."""
    fms = candidate_fms(net, dec)
    base = replace(dec, fast_fms=dec.fast_fms - {fm.name for fm in fms})
    usage = usage_by_time(net, fast_buffers(net, base))
    if not fms or max(usage, default=0) > budget:
        return base
    candidates = score_candidates(net, base, arch, oracle, fms)
    kept = choose(candidates, usage, budget)
    log.debug("fast storage: %d of %d feature maps kept", len(kept), len(fms))
    return replace(base, fast_fms=base.fast_fms | kept)


def cascade_for_cache(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int,
) -> Decisions:
    """Cascades where the chain's feature maps, were they all in fast storage, would not fit the
    cache: rolling buffers then keep those chains in fast storage (the FMs go back to the arena)."""
    from npuplan.options import Optimise
    from npuplan.schedule.cascades import build_cascades

    names = frozenset(fm.name for fm in candidate_fms(net, dec))
    optimistic = replace(dec, fast_fms=dec.fast_fms | names)
    cascaded = replace(build_cascades(net, optimistic, arch, oracle, budget, Optimise.PERFORMANCE),
                       fast_fms=dec.fast_fms)
    usage = usage_by_time(net, fast_buffers(net, cascaded))
    rows = list(cascaded.ofm_rows)
    kept = []
    for c in cascaded.cascades:
        if c in dec.cascades or max(usage[net.times[c.start]:net.times[c.end] + 1]) <= budget:
            kept.append(c)
        else:  # its rolling buffers alone overflow the cache: run those ops whole instead
            rows[c.start:c.end + 1] = dec.ofm_rows[c.start:c.end + 1]
    return replace(cascaded, ofm_rows=tuple(rows), cascades=tuple(kept))


def _both_orders(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, limit_bytes: int,
    memo: ScoreMemo,
) -> list[Decisions]:
    from npuplan.schedule.weights import propose_weight_buffering

    weights_first = place_feature_maps(
        net, propose_weight_buffering(net, dec, arch, oracle, limit_bytes, memo=memo), arch, oracle, budget)
    fms_first = propose_weight_buffering(net, place_feature_maps(net, dec, arch, oracle, limit_bytes),
                                         arch, oracle, limit_bytes, memo=memo)
    return [weights_first, fms_first]


def place_with_weights(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, budget: int, limit_bytes: int, *,
    try_cascades: bool = False,
) -> Decisions:
    """Weight buffers and fast-storage feature maps together: propose both orders (and, with
    ``try_cascades``, both on ``cascade_for_cache(dec)``), keep the faster, then the smaller peak.
    ``limit_bytes`` caps weight buffering (``<= budget``)."""
    from npuplan.schedule.assemble import total_cycles

    memo: ScoreMemo = {}
    proposals = _both_orders(net, dec, arch, oracle, budget, limit_bytes, memo)
    if try_cascades:
        cascaded = cascade_for_cache(net, dec, arch, oracle, budget)
        if cascaded.cascades != dec.cascades:
            proposals += _both_orders(net, cascaded, arch, oracle, budget, limit_bytes, memo)

    def key(d: Decisions) -> tuple[int, int]:
        return total_cycles(net, d, arch, oracle), max(usage_by_time(net, fast_buffers(net, d)), default=0)

    return min(proposals, key=key)
