"""Weight buffering: propose fetch plans per op (whole, single, double-buffered depth slices,
prebuffered under the previous op) and choose the fastest that fits the memory left at that op.

Ops are visited in order because prefetching under op ``i-1`` uses its slack cycles and memory.
Inside a cascade weights are kept whole (full depth) for the whole cascade.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.schedule.costing import cost_op
from npuplan.schedule.decisions import NO_WEIGHT_BUFFER, Decisions, WeightPlan
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import OFM_SPLIT_DEPTH, CostOracle, round_up
from npuplan.schedule.types import WeightBuffering
from npuplan.schedule.usage import fast_buffers, usage_by_time


def needs_dma(op: NpuOp, arch: Architecture) -> bool:
    """Whether copying ``op``'s weights into fast storage can pay (Vela never buffers FC weights)."""
    if op.weights is None or op.block_type is BlockType.VECTOR_PRODUCT:
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
    for slices in slicings(depth, block_depth):
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


def propose_weight_buffering(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int,
) -> Decisions:
    """Choose each op's weight plan in order; usage never exceeds ``limit_bytes`` at any step
    where it did not already. Returns new decisions (``dec`` is not changed)."""
    weights = [NO_WEIGHT_BUFFER] * len(net.npu_ops)
    current = replace(dec, weights=tuple(weights))
    usage = usage_by_time(net, fast_buffers(net, current))
    prev_slack = 0
    for i, op in enumerate(net.npu_ops):
        t = net.times[i]
        cascade = current.cascade_of(i)
        if not needs_dma(op, arch):
            costed = cost_op(net, current, arch, oracle, i, prev_slack_cycles=prev_slack)
            prev_slack = costed.slack_cycles
            continue
        block = oracle.block_config(op, op.ofm_shape.with_h(min(dec.ofm_rows[i], op.ofm_shape.h)))
        if cascade is not None:
            plan = full_depth_plan(op, block, oracle)
            span = range(net.times[cascade.start], net.times[cascade.end] + 1)
            if all(usage[s] + plan.buffer_bytes <= limit_bytes for s in span):
                chosen = plan
                for s in span:
                    usage[s] += plan.buffer_bytes
            else:
                chosen = NO_WEIGHT_BUFFER
        else:
            chosen = _choose(net, current, arch, oracle, i, block, usage, limit_bytes, prev_slack)
            usage[t] += chosen.buffer_bytes
            if chosen.prebuffer and i > 0:
                usage[net.times[i - 1]] += chosen.buffer_bytes
        weights[i] = chosen
        current = replace(current, weights=tuple(weights))
        prev_slack = cost_op(net, current, arch, oracle, i, prev_slack_cycles=prev_slack).slack_cycles
    return current


def _choose(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int, block: object,
    usage: list[int], limit_bytes: int, prev_slack: int,
) -> WeightPlan:
    """Search proposes (every candidate, with and without prebuffering), this step chooses."""
    t = net.times[i]
    room = limit_bytes - usage[t]
    prev_room = limit_bytes - usage[net.times[i - 1]] if i > 0 else -1
    scored: list[tuple[int, int, WeightPlan]] = []
    base = cost_op(net, dec, arch, oracle, i, weights=NO_WEIGHT_BUFFER, prev_slack_cycles=prev_slack)
    scored.append((base.cycles, 0, NO_WEIGHT_BUFFER))
    for plan in candidate_plans(net.npu_ops[i], block, oracle):
        if plan.buffer_bytes > room:
            continue
        options = [replace(plan, prebuffer=False)]
        if i > 0 and plan.buffer_bytes <= prev_room:
            options.append(replace(plan, prebuffer=True))
        for option in options:
            slack = prev_slack if option.prebuffer else 0
            c = cost_op(net, dec, arch, oracle, i, weights=option, prev_slack_cycles=slack)
            scored.append((c.cycles, option.buffer_bytes * (2 if option.prebuffer else 1), option))
    return min(scored, key=lambda s: (s[0], s[1]))[2]
