"""Turn decisions into the frozen ``Schedule`` the reports consume (costs, usage, placements)."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from npuplan.hw.memory import Architecture
from npuplan.schedule.pricing.costing import cost_op, fm_area, rolling_format
from npuplan.schedule.model.decisions import Decisions
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.types import (
    BufferMode,
    Cascade,
    Schedule,
    ScheduledOp,
    TensorPlacement,
    WeightBuffering,
)
from npuplan.schedule.model.usage import allocated_peak_bytes, fast_buffers, peak_bytes, usage_by_time


def total_cycles(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle) -> int:
    """Sum of op cycles, costing ops in order so weight prefetch sees the previous op's slack."""
    total, slack = 0, 0
    for i in range(len(net.npu_ops)):
        c = cost_op(net, dec, arch, oracle, i, prev_slack_cycles=slack)
        total += c.cycles
        slack = c.slack_cycles
    return total


def fastest(net: Network, proposals: Sequence[Decisions], arch: Architecture, oracle: CostOracle) -> Decisions:
    """The proposal with the fewest cycles, then the smallest fast-storage peak, the first among
    equals; peaks are gathered only for the proposals tied on cycles (they decide nothing else)."""
    cycles: dict[Decisions, int] = {}  # by value: placing often makes the same decisions from several
    for d in proposals:
        if d not in cycles:
            cycles[d] = total_cycles(net, d, arch, oracle)
    fewest = min(cycles.values())
    return min((d for d in proposals if cycles[d] == fewest), key=lambda d: peak_bytes(net, d))


def assemble(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, *,
    allocator: object, notes: tuple[str, ...] = (),
) -> Schedule:
    buffers = fast_buffers(net, dec)
    usage = usage_by_time(net, buffers)
    ops: list[ScheduledOp] = []
    slack = 0
    for i, op in enumerate(net.npu_ops):
        c = cost_op(net, dec, arch, oracle, i, prev_slack_cycles=slack)
        plan = dec.weights[i]
        cascade = dec.cascade_of(i)
        slices = plan.depth_slices
        ops.append(ScheduledOp(
            op=op, block_config=c.block_config, ofm_stripe=c.ofm_stripe, ifm_stripe=c.ifm_stripe,
            ifm2_stripe=c.ifm2_stripe, cascade_id=-1 if cascade is None else cascade.id,
            weight_buffering=plan.buffering, weight_buffer_bytes=plan.buffer_bytes,
            weight_depth_slice=(slices[1] - slices[0]) if plan.buffering is not WeightBuffering.NONE else 0,
            prebuffered_weight_bytes=plan.first_buffer_bytes if plan.prebuffer else 0,
            cost=c.cost, sram_usage_bytes=usage[net.times[i]],
            weight_depth_slices=slices if plan.buffering is not WeightBuffering.NONE else (),
            weight_slice_bytes=plan.slice_bytes if plan.buffering is not WeightBuffering.NONE else (),
        ))
        slack = c.slack_cycles
    placements: dict[str, TensorPlacement] = {}
    for fm in net.fms.values():
        placements[fm.name] = TensorPlacement(fm.name, fm_area(net, dec, arch, fm.name), fm.size_bytes, fm.format)  # type: ignore[arg-type]
    cascades: list[Cascade] = []
    for cascade in dec.cascades:
        rolling = tuple(TensorPlacement(r.tensor_name, arch.fast_area, r.size_bytes,
                                        rolling_format(net, r.tensor_name),  # type: ignore[arg-type]
                                        BufferMode.ROLLING, r.rows) for r in cascade.rolling)
        for p in rolling:
            placements[p.tensor_name] = p
        span = range(net.times[cascade.start], net.times[cascade.end] + 1)
        members = tuple(net.npu_ops[k].name for k in range(cascade.start, cascade.end + 1))
        cascades.append(Cascade(cascade.id, members, rolling, max(usage[t] for t in span)))
    peak = allocated_peak_bytes(buffers, allocator, oracle.placements)
    aliases = tuple(inplace_outputs(net, dec).items())
    return Schedule(tuple(ops), MappingProxyType(placements), tuple(cascades), peak, notes, aliases,
                    tuple(sorted(dec.staged_fms)))
