"""Fast-storage placement of feature maps when the arena is off-chip (Dedicated_Sram).

The arena lives in DRAM and fast storage (SRAM) is a cache of ``budget`` bytes. Candidates are the
OFMs of NPU ops outside cascades that another NPU op reads and that leave no subgraph (cascade
rolling buffers are already in fast storage and counted against the budget). ``placement_groups``
keeps what always fits, evicts what never fits and solves the competing groups by score: the NPU
cycles a candidate's producer and consumers save when it is in fast storage (only the competing
candidates are costed).

``placements_with_weights`` proposes two orders: weight buffers first and feature maps in the
memory left (Vela's order), or feature maps first and weight buffers in what is left (trading
weight-buffer size for feature maps); the caller keeps the faster. Usage never exceeds ``budget`` at any time step.
``size_on_cache`` does the same for Size within the peak of its minimal schedule (``size_cascades``).
``place_and_stage`` also stages inputs (``staging``) on every proposal, placing first or staging first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from npuplan.hw.memory import Architecture
from npuplan.options import Optimise
from npuplan.schedule.pricing.assemble import fastest
from npuplan.schedule.moves.cascade_split import build_cascades
from npuplan.schedule.moves.cascades import one_row_producers
from npuplan.schedule.moves.choice_memo import ChoiceMemo
from npuplan.schedule.pricing.costing import cost_op, op_context
from npuplan.schedule.model.decisions import CascadeSpan, Decisions
from npuplan.schedule.model.geometry import storage_bytes
from npuplan.schedule.model.network import FeatureMap, Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.units import ALIGN_BYTES, round_up
from npuplan.schedule.moves.placement_groups import Candidate, choose_partitioned, partition
from npuplan.schedule.moves.staging import stage_inputs
from npuplan.schedule.moves.weights import propose_weight_buffering
from npuplan.schedule.model.usage import fast_buffers, peak_bytes, usage_by_time

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
        if any(c.start <= k <= c.end for k in fm.consumers):
            end = max(end, net.times[c.end])
        if c.start <= fm.producer <= c.end:
            start = min(start, net.times[c.start])
    return start, end


def _users(fm: FeatureMap) -> tuple[int, ...]:
    return tuple(sorted({fm.producer, *fm.consumers}))


def _candidates(
    net: Network, dec: Decisions, memo: ChoiceMemo,
) -> tuple[tuple[FeatureMap, ...], tuple[Candidate, ...]]:
    """``candidate_fms`` and each one's ``Candidate`` with score 0; both read only ``dec``'s
    cascades, so ``memo`` holds them by those."""
    found = memo.fm_candidates.get(dec.cascades)
    if found is None:
        fms = tuple(candidate_fms(net, dec))
        unscored = tuple(Candidate(fm.name, *_span(net, dec, fm), round_up(fm.size_bytes, ALIGN_BYTES), 0)
                         for fm in fms)
        found = memo.fm_candidates[dec.cascades] = fms, unscored
    return found


def savings(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, fms: Sequence[FeatureMap],
    scored: Collection[str], memo: ChoiceMemo,
) -> dict[str, int]:
    """The cycles the users of each candidate named in ``scored`` save when it alone moves to fast
    storage (all the candidates ``fms`` in fast storage too, so shared ops are costed realistically).
    ``memo`` may be shared by callers placing feature maps for many decisions of one network."""
    inside = replace(dec, fast_fms=dec.fast_fms | {fm.name for fm in fms})
    costed = [fm for fm in fms if fm.name in scored]
    cycles = _user_cycles(net, inside, arch, oracle, costed, memo.fm_cycles)
    return {fm.name: sum(cycles[i, fm.name] - cycles[i, None] for i in _users(fm)) for fm in costed}


def _user_cycles(
    net: Network, inside: Decisions, arch: Architecture, oracle: CostOracle, fms: list[FeatureMap],
    memo: dict[tuple[Any, ...], int],
) -> dict[tuple[int, str | None], int]:
    """The cycles of each user ``i`` of the candidates ``fms``, by ``(i, None)`` under ``inside``
    (every candidate in fast storage) and by ``(i, name)`` with candidate ``name`` left out;
    ``memo`` holds them by the op's context under ``inside``, its weight plan and what is left out."""
    found: dict[tuple[int, str | None], int] = {}
    contexts: dict[int, tuple[Any, ...]] = {}
    for fm in fms:
        outside: Decisions | None = None
        for i in _users(fm):
            if i not in contexts:
                contexts[i] = (op_context(net, inside, i), inside.weights[i])
                if (contexts[i], None) not in memo:
                    memo[contexts[i], None] = cost_op(net, inside, arch, oracle, i).cycles
                found[i, None] = memo[contexts[i], None]
            if (contexts[i], fm.name) not in memo:
                if outside is None:
                    outside = replace(inside, fast_fms=inside.fast_fms - {fm.name})
                memo[contexts[i], fm.name] = cost_op(net, outside, arch, oracle, i).cycles
            found[i, fm.name] = memo[contexts[i], fm.name]
    return found


def place_feature_maps(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, *,
    memo: ChoiceMemo | None = None,
) -> Decisions:
    """``dec`` with the best set of candidate feature maps in fast storage, on top of the buffers
    ``dec`` already holds there (rolling buffers, weight buffers), within ``limit_bytes`` bytes.
    Callers placing feature maps for many decisions of one network may share ``memo``."""
    memo = ChoiceMemo() if memo is None else memo
    fms, unscored = _candidates(net, dec, memo)
    base = replace(dec, fast_fms=dec.fast_fms - {fm.name for fm in fms})
    usage = usage_by_time(net, fast_buffers(net, base))
    if not fms or max(usage, default=0) > limit_bytes:
        return base
    # most candidates usually fit whatever the others do: only those competing for room are costed
    kept, competing = partition(list(unscored), usage, limit_bytes)
    saved = savings(net, base, arch, oracle, fms, {c.name for c in competing}, memo)
    chosen = choose_partitioned(kept, [replace(c, score_cycles=saved[c.name]) for c in competing], usage, limit_bytes)
    log.debug("fast storage: %d of %d feature maps kept", len(chosen), len(fms))
    return replace(base, fast_fms=base.fast_fms | chosen)


def cascade_for_cache(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int,
) -> Decisions:
    """Cascades where the chain's feature maps, were they all in fast storage, would not fit the
    cache: rolling buffers then keep those chains in fast storage (the FMs go back to the arena)."""
    return _cascaded_as_if_cached(net, dec, arch, oracle, limit_bytes, Optimise.PERFORMANCE)


def size_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int,
) -> tuple[Decisions, int]:
    """Size on a cache (Dedicated_Sram): Vela's minimal schedule, and the fast-storage bytes it
    holds at its peak (within ``limit_bytes``), which Size then spends on speed (weight buffers, feature
    maps) as Vela spends its minimal schedule's peak.

    The least peak itself is 0 on a cache (every map may stay in the arena), which would leave Size
    nothing to trade against (``strategy.size_trade``). Vela guides its minimal schedule by
    ``whole_floor_bytes``: it cascades (rolling buffers in the cache, all else in the arena) only
    ops whose own input and output maps together exceed it, and only while the rolling buffers fit
    it, with producers making the fewest rows their readers' strides allow. Here: the chains that
    overflow that floor were their maps in fast storage are cascaded as Performance cascades them;
    a cascade is kept when an op it cascades (any but its first) has maps that alone exceed the
    floor (an op writing a slice of a concatenation counts its slice, which Vela writes to a map
    of its own) and its rolling buffers fit the floor; its ops then make one row at a time.
    """
    guide = min(limit_bytes, whole_floor_bytes(net))

    def needed(c: CascadeSpan) -> bool:
        return any(_own_bytes(net, k) >= guide for k in range(c.start + 1, c.end + 1))

    cascaded = _cascaded_as_if_cached(net, dec, arch, oracle, guide, Optimise.PERFORMANCE, keep=needed)
    cascaded = one_row_producers(net, cascaded, set(cascaded.cascades) - set(dec.cascades))
    return cascaded, min(limit_bytes, peak_bytes(net, cascaded))


def whole_floor_bytes(net: Network) -> int:
    """The most feature-map bytes one NPU op must hold whole (bytes): its input maps that may not be
    striped (network inputs and outputs, maps the CPU touches) and its output map when that may
    not be striped, has several readers or several writers (a concatenation written in slices).
    No schedule of the arena needs less. A map stored linear (NHWC) counts whole too, as input and
    as output: Vela reads and writes a linear map whole (its minimal schedule's guide)."""
    def whole(fm: FeatureMap | None, *, output: bool) -> int:
        if fm is None:
            return 0
        if fm.whole_reason or fm.format == "NHWC" or (output and (len(fm.consumers) > 1 or fm.writers > 1)):
            return fm.size_bytes
        return 0

    return max((whole(net.fm(op.ifm), output=False) + whole(net.fm(op.ifm2), output=False)
                + whole(net.fm(op.ofm), output=True) for op in net.npu_ops), default=0)


def _own_bytes(net: Network, k: int) -> int:
    """Bytes of NPU op ``k``'s own input and output feature maps, whole; of an output written in
    slices (a concatenation's input written in place), the slice this op writes: Vela writes it
    to a map of its own, which the concatenation then copies."""
    op = net.npu_ops[k]
    ifm, ofm = net.fm(op.ifm), net.fm(op.ofm)
    written = 0
    if ofm is not None:
        written = ofm.size_bytes if op.ofm_write_shape is None else storage_bytes(
            op.ofm_write_shape, op.ofm.dtype.size_bytes, ofm.format)
    return (0 if ifm is None else ifm.size_bytes) + written


def size_on_cache(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int,
) -> tuple[Decisions, int]:
    """Size on a cache: the faster of ``dec`` and its ``size_cascades``, each with weight buffers
    and feature maps placed within that limit (both orders), and the limit (bytes)."""
    cascaded, limit = size_cascades(net, dec, arch, oracle, limit_bytes)
    memo = ChoiceMemo()
    proposals = [p for d in dict.fromkeys((dec, cascaded))
                 for p in _both_orders(net, d, arch, oracle, limit, limit, memo)]
    return fastest(net, proposals, arch, oracle), limit


def _cascaded_as_if_cached(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, optimise: Optimise, *,
    keep: Callable[[CascadeSpan], bool] = lambda _c: True,
) -> Decisions:
    """``dec`` with the cascades ``build_cascades`` chooses were its candidate feature maps in fast
    storage, those back in the arena, and only the new cascades ``keep`` accepts whose rolling
    buffers alone fit ``limit_bytes`` (the others' ops run whole)."""
    names = frozenset(fm.name for fm in candidate_fms(net, dec))
    optimistic = replace(dec, fast_fms=dec.fast_fms | names)
    cascaded = replace(build_cascades(net, optimistic, arch, oracle, limit_bytes, optimise),
                       fast_fms=dec.fast_fms)
    usage = usage_by_time(net, fast_buffers(net, cascaded))
    rows = list(cascaded.ofm_rows)
    kept = []
    for c in cascaded.cascades:
        if c in dec.cascades or (keep(c) and max(usage[net.times[c.start]:net.times[c.end] + 1]) <= limit_bytes):
            kept.append(c)
        else:  # its rolling buffers alone overflow the cache, or it is not wanted: run those ops whole
            rows[c.start:c.end + 1] = dec.ofm_rows[c.start:c.end + 1]
    return replace(cascaded, ofm_rows=tuple(rows), cascades=tuple(kept))


def _both_orders(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, weight_limit_bytes: int,
    memo: ChoiceMemo,
) -> list[Decisions]:
    weights_first = place_feature_maps(
        net, propose_weight_buffering(net, dec, arch, oracle, weight_limit_bytes, memo=memo), arch, oracle, limit_bytes,
        memo=memo)
    fms_first = propose_weight_buffering(net, place_feature_maps(net, dec, arch, oracle, weight_limit_bytes, memo=memo),
                                         arch, oracle, weight_limit_bytes, memo=memo)
    return [weights_first, fms_first]


def placements_with_weights(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, weight_limit_bytes: int, *,
    try_cascades: bool = False,
) -> list[Decisions]:
    """Weight buffers and fast-storage feature maps together, proposed in both orders (and, with
    ``try_cascades``, both on ``cascade_for_cache(dec)``); the caller chooses.
    ``weight_limit_bytes`` caps weight buffering (``<= limit_bytes``)."""
    memo = ChoiceMemo()
    proposals = _both_orders(net, dec, arch, oracle, limit_bytes, weight_limit_bytes, memo)
    if try_cascades:
        cascaded = cascade_for_cache(net, dec, arch, oracle, limit_bytes)
        if cascaded.cascades != dec.cascades:
            proposals += _both_orders(net, cascaded, arch, oracle, limit_bytes, weight_limit_bytes, memo)
    return list(dict.fromkeys(proposals))


def place_and_stage(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int,
    propose: Callable[[Decisions], list[Decisions]],
) -> Decisions:
    """The placements ``propose(dec)`` makes (feature maps and weights in the cache), each with
    inputs staged in what is left, or inputs staged first and ``propose`` in what is left: the
    faster, then the smaller peak. Placing first only, a larger cache could fill with a feature map
    that saves little where a smaller one left room for a staged input that saves much, and plan
    slower (random network 0 of ``bench/random_graphs.py``, U65-256: 159,734 cycles within 64 KiB,
    223,018 within 256 KiB). Staging only the placement fastest unstaged, a larger cache that made
    a cascade the fastest before staging lost the uncascaded placement that staging made faster
    (the same network: 156,790 cycles within 64 KiB, 157,058 within 80 KiB)."""
    placed_first = fastest(net, [stage_inputs(net, p, arch, oracle, limit_bytes) for p in propose(dec)], arch, oracle)
    staged = stage_inputs(net, dec, arch, oracle, limit_bytes)
    # even where placing first left room for every input worth staging, placing around the staged
    # copies may place better (random network 0, U65-256, 48 KiB: 187,339 cycles placing first,
    # 187,305 staging first): only where no input is worth staging is staging first the same
    if staged == dec:
        return placed_first
    # staged again on what ``propose`` made: a map it moved to the cache or a reader it cascaded
    # stages nothing, and the room the staged copies held is what is left for them
    staged_first = [stage_inputs(net, replace(p, staged_fms=dec.staged_fms), arch, oracle, limit_bytes)
                    for p in propose(staged)]
    return fastest(net, [placed_first, *staged_first], arch, oracle)
