"""Weight buffering: propose fetch plans per op (whole, single, double-buffered depth slices,
prebuffered under the previous op) and choose the fastest that fits the memory left at that op.

Ops are visited in order because prefetching under op ``i-1`` uses its slack cycles and memory.
Inside a cascade weights are kept whole (full depth) for the whole cascade; which of its ops hold
them is chosen for the cascade at once (``best_weight_subset``), by the same figures and rule the
cascade search priced the cascade with, so the plan it chose is the plan it gets.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.schedule.moves.choice_memo import ChoiceMemo
from npuplan.schedule.pricing.costing import cost_op, least_cycles, op_context
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, CascadeSpan, Decisions, WeightPlan
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import OFM_SPLIT_DEPTH, CostOracle
from npuplan.units import ALIGN_BYTES, round_up
from npuplan.schedule.model.types import WeightBuffering
from npuplan.schedule.model.usage import fast_buffers, usage_by_time


def needs_dma(op: NpuOp, arch: Architecture) -> bool:
    """Whether copying ``op``'s weights into fast storage can pay (Vela never buffers FC weights)."""
    if op.weights is None:
        return False
    return arch.const_area in (MemArea.DRAM, MemArea.OFF_CHIP_FLASH) and arch.const_area != arch.fast_area


def slicings(depth: int, block_depth: int) -> list[tuple[int, ...]]:
    """Candidate OFM depth slicings: whole, and even slices of 16..depth/2 channels
    (plus a first slice of 16 followed by block-depth slices, good for prefetching)."""
    found: list[tuple[int, ...]] = [(0, depth)]
    step = OFM_SPLIT_DEPTH
    while step < depth:
        found.append(tuple(range(0, depth, step)) + (depth,))
        step *= 2
    rest = max(round_up(block_depth, OFM_SPLIT_DEPTH), OFM_SPLIT_DEPTH)
    if OFM_SPLIT_DEPTH < depth:
        found.append((0,) + tuple(range(OFM_SPLIT_DEPTH, depth, rest)) + (depth,))
        found.append((0, OFM_SPLIT_DEPTH, depth))
    return list(dict.fromkeys(found))


def candidate_plans(op: NpuOp, block_config: object, oracle: CostOracle) -> list[WeightPlan]:
    """Every fetch plan worth costing for ``op`` (buffer sizes in bytes)."""
    depth = op.ofm_shape.c
    block_depth = int(getattr(getattr(block_config, "ofm_block", block_config), "depth", OFM_SPLIT_DEPTH))
    plans: list[WeightPlan] = []
    # a fully-connected op's slices each re-read its IFM and pay the pipeline's fill: whole only
    whole_only = op.block_type is BlockType.VECTOR_PRODUCT
    for slices in [(0, depth)] if whole_only else slicings(depth, block_depth):
        sizes = oracle.weight_slice_bytes(op, block_config, slices)
        total = sum(sizes)
        if len(sizes) == 1:
            plans.append(WeightPlan(WeightBuffering.FULL, total, slices, sizes, total))
            continue
        single = max(sizes)
        double = max(sizes[0::2]) + max(sizes[1::2])
        plans.append(WeightPlan(WeightBuffering.DOUBLE, total, slices, sizes, double))
        plans.append(WeightPlan(WeightBuffering.SINGLE, total, slices, sizes, single))
    return plans


def full_depth_plan(op: NpuOp, block_config: object, oracle: CostOracle) -> WeightPlan:
    sizes = oracle.weight_slice_bytes(op, block_config, (0, op.ofm_shape.c))
    return WeightPlan(WeightBuffering.FULL, sum(sizes), (0, op.ofm_shape.c), sizes, sum(sizes))


def held_bytes(plan: WeightPlan) -> int:
    """Fast-storage bytes ``plan`` holds, aligned as ``usage.fast_buffers`` counts them."""
    return round_up(plan.buffer_bytes, ALIGN_BYTES)


def cascade_weight_option(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, k: int, *, prev_slack_cycles: int = 0,
    rows: int | None = None,
) -> tuple[WeightPlan, int] | None:
    """Op ``k`` (in a cascade of ``dec``) holding its whole weights: the plan and the cycles it saves
    over reading them in place, by ``cost_op`` alone (after an op leaving ``prev_slack_cycles``;
    with OFM stripes of ``rows`` when given, else ``dec``'s); None when that costs cycles."""
    op = net.npu_ops[k]
    if not needs_dma(op, arch):
        return None
    stripe_rows = dec.ofm_rows[k] if rows is None else rows
    plan = full_depth_plan(op, oracle.block_config(op, op.ofm_shape.with_h(min(stripe_rows, op.ofm_shape.h))), oracle)
    saved = (cost_op(net, dec, arch, oracle, k, weights=NO_WEIGHT_BUFFER, prev_slack_cycles=prev_slack_cycles,
                     rows=rows).cycles
             - cost_op(net, dec, arch, oracle, k, weights=plan, prev_slack_cycles=prev_slack_cycles, rows=rows).cycles)
    return (plan, saved) if saved >= 0 else None


def best_weight_subset(options: Sequence[tuple[int, int]], room_bytes: int) -> tuple[int, ...]:
    """Indices of the ``(bytes, cycles saved)`` options that, taken together, save the most cycles
    within ``room_bytes`` (fewest bytes among equals). Exact: the best subset for any room lies on
    the frontier of bytes against saving over every subset, so more room never saves less. The
    frontier is memoised per options: the cascade search asks for many rooms. Note that a negative
    room (usage already over the limit) gives the last, largest subset."""
    frontier = weight_frontier(tuple(options))
    return frontier[bisect.bisect_right(frontier, (room_bytes, math.inf)) - 1][2]


@functools.lru_cache(maxsize=1 << 14)
def weight_frontier(options: tuple[tuple[int, int], ...]) -> tuple[tuple[int, float, tuple[int, ...]], ...]:
    """``(bytes, -saving, indices)`` of the subsets of ``(bytes, saving)`` options that save more
    than every smaller one, by bytes (strictly increasing; the first is the empty subset)."""
    frontier: list[tuple[int, int, tuple[int, ...]]] = [(0, 0, ())]
    for k, (size, saved) in enumerate(options):
        grown = frontier + [(b + size, s + saved, taken + (k,)) for b, s, taken in frontier]
        frontier = []
        for point in sorted(grown, key=lambda f: (f[0], -f[1])):
            if not frontier or point[1] > frontier[-1][1]:
                frontier.append(point)
    return tuple((b, -s, taken) for b, s, taken in frontier)


Scored = tuple[int, int, int, WeightPlan]  # (cycles, bytes ranked by, bytes held, plan)


def propose_weight_buffering(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int, *,
    memo: ChoiceMemo | None = None, always: bool = False,
) -> Decisions:
    """Choose each op's weight plan in order; usage never exceeds ``limit_bytes`` at any step
    where it did not already. Returns new decisions (``dec`` is not changed). Callers choosing
    weights for many decisions of one network (same ``arch`` and ``oracle``) may share ``memo``:
    an op's plans are then costed once per context (``costing.op_context``). With ``always``, an
    op outside a cascade copies its weights into SRAM wherever a plan fits, even where reading
    them in place is faster (as Vela does)."""
    weights = [NO_WEIGHT_BUFFER] * len(net.npu_ops)
    # costing never reads the weight plans of the decisions it is given past the one it is told
    # (``costing.op_context``): ``bare`` stands for the decisions chosen so far with ``weights``
    bare = replace(dec, weights=tuple(weights))
    usage = usage_by_time(net, fast_buffers(net, bare))
    cascade_at = {k: c for c in dec.cascades for k in range(c.start, c.end + 1)}
    prev_slack = 0
    memo = ChoiceMemo() if memo is None else memo
    for i, op in enumerate(net.npu_ops):
        t = net.times[i]
        cascade = cascade_at.get(i)
        if cascade is not None and i == cascade.start:
            weights[i:cascade.end + 1] = _cascade_weights(net, bare, arch, oracle, cascade, usage, limit_bytes,
                                                          prev_slack, memo.cascade_offers)
        if cascade is None and needs_dma(op, arch):
            chosen = (_buffered(net, bare, arch, oracle, i, limit_bytes - usage[t], prev_slack, memo) if always
                      else None) \
                or _looked_ahead(net, bare, arch, oracle, i, usage, limit_bytes, prev_slack, memo,
                                 free_next=i + 1 < len(net.npu_ops) and i + 1 not in cascade_at)
            usage[t] += held_bytes(chosen)
            if chosen.prebuffer and i > 0:
                usage[net.times[i - 1]] += held_bytes(chosen)
            weights[i] = chosen
        prev_slack = cost_op(net, bare, arch, oracle, i, weights=weights[i], prev_slack_cycles=prev_slack).slack_cycles
    return replace(dec, weights=tuple(weights))


def _looked_ahead(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, usage: list[int],
    limit_bytes: int, prev_slack: int, memo: ChoiceMemo, *, free_next: bool,
) -> WeightPlan:
    """``_choose``'s plan for op ``i``, or reading its weights in place where that makes ops ``i``
    and ``i + 1`` faster together: a buffered plan may save op ``i`` a few cycles yet leave the
    next op less slack to copy its own weights under (``free_next``: op ``i + 1`` chooses its own
    plan, outside a cascade; each side's next op chooses as ``_choose`` would after it)."""
    chosen = _choose(net, dec, arch, oracle, i, usage, limit_bytes, prev_slack, memo)
    if chosen is NO_WEIGHT_BUFFER or not free_next or not needs_dma(net.npu_ops[i + 1], arch):
        return chosen

    def pair_cycles(plan: WeightPlan) -> int:
        costed = cost_op(net, dec, arch, oracle, i, weights=plan, prev_slack_cycles=prev_slack)
        held = list(usage)
        held[net.times[i]] += held_bytes(plan)
        if plan.prebuffer and i > 0:
            held[net.times[i - 1]] += held_bytes(plan)
        after = _choose(net, dec, arch, oracle, i + 1, held, limit_bytes, costed.slack_cycles, memo)
        return costed.cycles + cost_op(net, dec, arch, oracle, i + 1, weights=after,
                                       prev_slack_cycles=costed.slack_cycles).cycles

    return NO_WEIGHT_BUFFER if pair_cycles(NO_WEIGHT_BUFFER) < pair_cycles(chosen) else chosen


def _cascade_weights(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, cascade: CascadeSpan,
    usage: list[int], limit_bytes: int, prev_slack: int, memo: dict[tuple[Any, ...], Any],
) -> list[WeightPlan]:
    """The weight plans of the cascade's ops (whole or none), chosen together in the room its time
    span leaves below ``limit_bytes``; ``usage`` gains the bytes held over the span. Each op's
    saving is costed after the slack its predecessor leaves with weights read in place (the
    cascade search's figures; ``prev_slack`` is what the op before the cascade leaves; ``memo``
    holds them, ``_cascade_offers``)."""
    span = range(net.times[cascade.start], net.times[cascade.end] + 1)
    offered = _cascade_offers(net, dec, arch, oracle, cascade, prev_slack, memo)
    room = limit_bytes - max(usage[s] for s in span)
    taken = best_weight_subset([(held_bytes(plan), saved) for _, plan, saved in offered], room)
    room -= sum(held_bytes(offered[j][1]) for j in taken)
    for j, (_, plan, saved) in enumerate(offered):  # weights that save no cycles still save flash reads
        if saved == 0 and j not in taken and held_bytes(plan) <= room:
            taken += (j,)
            room -= held_bytes(plan)
    plans = [NO_WEIGHT_BUFFER] * (cascade.end - cascade.start + 1)
    for j in taken:
        k, plan, _ = offered[j]
        plans[k - cascade.start] = plan
        for s in span:
            usage[s] += held_bytes(plan)
    return plans


def _cascade_offers(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, cascade: CascadeSpan, prev_slack: int,
    memo: dict[tuple[Any, ...], Any],
) -> tuple[tuple[int, WeightPlan, int], ...]:
    """``(op index, whole-weights plan, cycles saved)`` of the cascade's ops that may hold their
    weights (``cascade_weight_option``), each after the slack its predecessor leaves reading its
    weights in place; ``memo`` holds them by the ops' contexts and ``prev_slack``."""
    ops = range(cascade.start, cascade.end + 1)
    key = (tuple(op_context(net, dec, k) for k in ops), prev_slack)
    found = memo.get(key)
    if found is None:
        offered: list[tuple[int, WeightPlan, int]] = []
        for k in ops:
            option = cascade_weight_option(net, dec, arch, oracle, k, prev_slack_cycles=prev_slack)
            if option is not None:
                offered.append((k, option[0], option[1]))
            prev_slack = cost_op(net, dec, arch, oracle, k, weights=NO_WEIGHT_BUFFER,
                                 prev_slack_cycles=prev_slack).slack_cycles
        found = memo[key] = tuple(offered)
    return found


def _choose(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, usage: list[int],
    limit_bytes: int, prev_slack: int, memo: ChoiceMemo,
) -> WeightPlan:
    """Search proposes (every candidate, with and without prebuffering), this step chooses the
    fastest that fits the room at op ``i`` (and at op ``i-1`` for a prebuffer), then the smallest."""
    room = limit_bytes - usage[net.times[i]]
    prev_room = limit_bytes - usage[net.times[i - 1]] if i > 0 else -1
    ranked = _scored(net, dec, arch, oracle, i, prev_slack, memo)
    return next(s[3] for k, s in ranked  # reading in place (k 0) always fits
                if k == 0 or (s[2] <= room and (not s[3].prebuffer or s[2] <= prev_room)))


def _buffered(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, room: int, prev_slack: int,
    memo: ChoiceMemo,
) -> WeightPlan | None:
    """The fastest plan copying op ``i``'s weights into SRAM that fits ``room`` after the previous
    op's ``prev_slack`` cycles, then the one leaving the next op the most slack (whole weights
    fetched under the previous op leave all of this op's cycles, as in Vela, where slices leave
    only the last one's), then the smallest; or None."""
    fitting = [s[3] for s in _plain(net, dec, arch, oracle, i, memo) if s[2] <= room]
    if not fitting:
        return None
    costed = [(cost_op(net, dec, arch, oracle, i, weights=plan, prev_slack_cycles=prev_slack), plan)
              for plan in fitting]
    return min(costed, key=lambda c: (c[0].cycles, -c[0].slack_cycles, c[1].buffer_bytes))[1]


def _scored(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, prev_slack: int,
    memo: ChoiceMemo,
) -> tuple[tuple[int, Scored], ...]:
    """Reading in place (index 0), then every candidate plan, with and without prebuffering
    (``i > 0``): each with its index, fastest first, then by the bytes ranked by, then by index
    (so the first that fits is what ``min`` would choose of those that fit). Plans that can never
    come first are left out uncosted (``_ranked``). Memoised by context and ``prev_slack``."""
    key = (op_context(net, dec, i), prev_slack)
    found = memo.weight_scores.get(key)
    if found is None:
        found = memo.weight_scores[key] = _ranked(net, dec, arch, oracle, i, prev_slack, memo)
    return found


def _ranked(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, prev_slack: int,
    memo: ChoiceMemo,
) -> tuple[tuple[int, Scored], ...]:
    """``_scored``'s ranking, costed. A plan that costs no less than reading in place ranks after
    it and is never chosen (reading in place always fits), nor is a prebuffered plan that costs no
    less than the same plan read without prefetch (that plan ranks first of the two and fits
    whenever the prebuffered one does): a plan whose ``costing.least_cycles`` (a sound lower
    bound, from the screens its costing would start with) says so is left uncosted."""
    base = cost_op(net, dec, arch, oracle, i, weights=NO_WEIGHT_BUFFER, prev_slack_cycles=prev_slack).cycles
    scored: list[Scored] = [(base, 0, 0, NO_WEIGHT_BUFFER)]
    for plan, least in _candidates(net, dec, arch, oracle, i, memo):
        beaten = base  # what the prebuffered plan must cost less than to be chosen
        if least < base:
            cycles = cost_op(net, dec, arch, oracle, i, weights=plan).cycles
            scored.append((cycles, plan.buffer_bytes, held_bytes(plan), plan))
            beaten = min(base, cycles)
        if i > 0:
            ahead = replace(plan, prebuffer=True)
            if least_cycles(net, dec, arch, oracle, i, weights=ahead, prev_slack_cycles=prev_slack) < beaten:
                cycles = cost_op(net, dec, arch, oracle, i, weights=ahead, prev_slack_cycles=prev_slack).cycles
                scored.append((cycles, plan.buffer_bytes * 2, held_bytes(plan), ahead))
    return tuple(sorted(enumerate(scored), key=lambda ks: (ks[1][0], ks[1][1])))


def _candidates(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, memo: ChoiceMemo,
) -> tuple[tuple[WeightPlan, int], ...]:
    """``candidate_plans`` of op ``i`` under ``dec``, each with its ``least_cycles`` read without
    prefetch (the same after any slack), memoised by its context (``_plain``'s key)."""
    context = op_context(net, dec, i)
    found = memo.candidates.get(context)
    if found is None:
        found = memo.candidates[context] = tuple(
            (plan, least_cycles(net, dec, arch, oracle, i, weights=plan))
            for plan in candidate_plans(net.npu_ops[i], _block(net, dec, oracle, i), oracle))
    return found


def _plain(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, memo: ChoiceMemo,
) -> tuple[Scored, ...]:
    """Every candidate plan of op ``i`` read without prefetch, scored; these cost the same after
    any slack, so they are memoised by context alone."""
    context = op_context(net, dec, i)
    plain = memo.plain_scores.get(context)
    if plain is None:
        plain = memo.plain_scores[context] = tuple(
            (cost_op(net, dec, arch, oracle, i, weights=plan).cycles, plan.buffer_bytes, held_bytes(plan), plan)
            for plan in candidate_plans(net.npu_ops[i], _block(net, dec, oracle, i), oracle))
    return plain


def _block(net: Network, dec: Decisions, oracle: CostOracle, i: int) -> Any:
    op = net.npu_ops[i]
    return oracle.block_config(op, op.ofm_shape.with_h(min(dec.ofm_rows[i], op.ofm_shape.h)))
