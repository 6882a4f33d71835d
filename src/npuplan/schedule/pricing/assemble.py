"""Turn decisions into the frozen ``Schedule`` the reports consume (costs, usage, placements)."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from npuplan.hw.memory import Architecture
from npuplan.schedule.pricing.costing import cost_op, differing_ops, fm_area, rolling_format
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


def total_cycles_each(net: Network, decs: Sequence[Decisions], arch: Architecture, oracle: CostOracle) -> list[int]:
    """``total_cycles`` of each of ``decs``: the first's costed op by op, each other's only at the
    ops where its costings may differ from the first's (``costing.differing_ops``) and after them
    until the slack it passes on is the first's again (from there on it costs as the first does,
    up to the next such op). Decision sets of one search differ in a few stretches of ops."""
    if not decs:
        return []
    count = len(net.npu_ops)
    first = decs[0]
    before = [0] * (count + 1)  # the first's cycles of the ops before each op
    slack_into = [0] * (count + 1)  # the slack the first passes on to each op
    for i in range(count):
        c = cost_op(net, first, arch, oracle, i, prev_slack_cycles=slack_into[i])
        before[i + 1] = before[i] + c.cycles
        slack_into[i + 1] = c.slack_cycles
    totals = [before[count]]
    for dec in decs[1:]:
        differing = differing_ops(net, first, dec)
        totals.append(total_cycles(net, dec, arch, oracle) if differing is None else
                      _total_beside(net, dec, arch, oracle, differing, before, slack_into))
    return totals


def _total_beside(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, differing: list[int],
                  before: list[int], slack_into: list[int]) -> int:
    """``total_cycles`` of ``dec``, whose costings may differ from a first decision set's only at
    ``differing`` (ascending), from that set's cycles ``before`` each op and the slack it passes on
    into each (``total_cycles_each``)."""
    count = len(net.npu_ops)
    total, slack, i = 0, 0, 0
    for stop in [*differing, count]:
        while i < stop:  # ops costing as the first's: at its slack, the whole stretch does
            if slack == slack_into[i]:
                total += before[stop] - before[i]
                slack, i = slack_into[stop], stop
                break
            c = cost_op(net, dec, arch, oracle, i, prev_slack_cycles=slack)
            total, slack, i = total + c.cycles, c.slack_cycles, i + 1
        if stop < count:
            c = cost_op(net, dec, arch, oracle, stop, prev_slack_cycles=slack)
            total, slack, i = total + c.cycles, c.slack_cycles, stop + 1
    return total


def fastest(net: Network, proposals: Sequence[Decisions], arch: Architecture, oracle: CostOracle) -> Decisions:
    """The proposal with the fewest cycles, then the smallest fast-storage peak, the first among
    equals; peaks are gathered only for the proposals tied on cycles (they decide nothing else)."""
    unique = list(dict.fromkeys(proposals))  # by value: placing often makes the same decisions from several
    cycles = dict(zip(unique, total_cycles_each(net, unique, arch, oracle)))
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
