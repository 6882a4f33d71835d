"""Cost of one op under a set of decisions (stripes, areas, weight fetch), via the oracle."""

from __future__ import annotations

from typing import NamedTuple

from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.shape import Shape4D
from npuplan.schedule.decisions import Decisions, WeightPlan
from npuplan.schedule.geometry import ifm2_stripe_for, ifm_stripe_for
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle, CostQuery, Costed
from npuplan.schedule.types import WeightBuffering


class _Place(NamedTuple):
    """Where the costing sees one feature map: in fast storage or the arena, and in which format."""

    fast: bool
    format: str


def _place(net: Network, dec: Decisions, name: str) -> _Place:
    """Rolling buffers are NHCWB16 in fast storage; other feature maps are where ``dec`` put them."""
    if name in dec.rolling_fms:
        return _Place(True, "NHCWB16")
    fm = net.fms.get(name)
    return _Place(name in dec.fast_fms, fm.format if fm is not None else "NHWC")


def fm_area(net: Network, dec: Decisions, arch: Architecture, name: str | None) -> MemArea:
    """Where a feature map lives: fast storage if placed or rolling there, else the arena."""
    if name is not None and _place(net, dec, name).fast:
        return arch.fast_area
    return arch.arena_area


def fm_format(net: Network, dec: Decisions, name: str) -> str:
    return _place(net, dec, name).format


def cost_op(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, index: int, *,
    weights: WeightPlan | None = None, prev_slack_cycles: int = 0,
) -> Costed:
    """Cost op ``index`` with its stripe from ``dec`` and ``weights`` (default ``dec``'s plan).

    Results are memoised in ``oracle.costed`` on everything the costing reads from ``dec``."""
    op = net.npu_ops[index]
    plan = dec.weights[index] if weights is None else weights
    staged = op.ifm.name in dec.staged_fms
    ifm = _place(net, dec, op.ifm.name)
    ofm = _place(net, dec, op.ofm.name)
    ifm2 = None if op.ifm2 is None or op.ifm2.is_constant else _place(net, dec, op.ifm2.name)
    in_cascade = dec.cascade_of(index) is not None
    rows = min(dec.ofm_rows[index], op.ofm_shape.h)
    memo = oracle.costed
    # only what the query below reads: plans that differ in buffer size or prebuffering cost the same
    key = (op, id(arch), rows, plan.buffering, plan.stream_bytes, plan.first_buffer_bytes, plan.depth_slices,
           prev_slack_cycles, staged, ifm, ofm, ifm2, in_cascade)
    found = memo.get(key)
    if found is not None:
        return found
    fast, arena = arch.fast_area, arch.arena_area
    ifm_area = fast if staged or ifm.fast else arena
    ofm_area = fast if ofm.fast else arena
    if ifm2 is not None:
        ifm2_area: MemArea | None = fast if ifm2.fast else arena
    else:
        ifm2_area = None if op.ifm2 is None else arch.const_area
    ofm_stripe = op.ofm_shape.with_h(rows)
    ifm_stripe = ifm_stripe_for(op, ofm_stripe)
    ifm2_stripe = ifm2_stripe_for(op, ifm_stripe)
    block = oracle.block_config(op, ofm_stripe)
    buffered = plan.buffering is not WeightBuffering.NONE
    query = CostQuery(
        op=op, block_config=block, ofm_stripe=ofm_stripe, ifm_stripe=ifm_stripe, ifm2_stripe=ifm2_stripe,
        ofm_depth=op.ofm_shape.c,
        ifm_area=ifm_area,
        ifm2_area=ifm2_area,
        ofm_area=ofm_area,
        weight_area=arch.fast_area if buffered else arch.const_area,
        ifm_format=ifm.format,
        ofm_format=ofm.format,
        ifm2_format="NHWC" if ifm2 is None else ifm2.format,
        weight_source_area=arch.const_area,
        weight_fetch=str(plan.buffering),
        weight_stream_bytes=plan.stream_bytes,
        first_slice_bytes=plan.first_buffer_bytes,
        depth_slices=plan.depth_slices,
        prev_slack_cycles=prev_slack_cycles,
        in_cascade=in_cascade,
        staged_ifm_bytes=net.fms[op.ifm.name].size_bytes if staged else 0,
    )
    cost = oracle.op_cost(query)
    cycles = oracle.cycles(cost)
    slack = int(getattr(cost, "slack_npu_cycles", cycles))  # NPU time of the last depth slice
    costed = Costed(block, ofm_stripe, ifm_stripe, ifm2_stripe, cost, cycles, slack)
    memo[key] = costed
    return costed
