"""Cost of one op under a set of decisions (stripes, areas, weight fetch), via the oracle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.shape import Shape4D
from npuplan.schedule.decisions import CascadeSpan, Decisions, WeightPlan
from npuplan.schedule.geometry import ifm2_stripe_for, ifm_stripe_for
from npuplan.schedule.network import Network
from npuplan.schedule.oracle import CostOracle, CostQuery
from npuplan.schedule.types import WeightBuffering


@dataclass(frozen=True, slots=True)
class Costed:
    """One op's block config, stripes and cost, with the NPU cycles the next op may prefetch under."""

    block_config: Any
    ofm_stripe: Shape4D
    ifm_stripe: Shape4D
    ifm2_stripe: Shape4D | None
    cost: Any
    cycles: int
    slack_cycles: int


def rolling_names(cascades: tuple[CascadeSpan, ...]) -> frozenset[str]:
    """Names of the cascades' rolling buffers. Asked for on every costing, so memoised on the
    tuple's identity (hashing it again each time cost as much as the scan); the memo keeps the
    tuple alive, so an identity is never reused while it is stored."""
    found = _ROLLING.get(id(cascades))
    if found is not None and found[0] is cascades:
        return found[1]
    names = frozenset(r.tensor_name for c in cascades for r in c.rolling)
    if len(_ROLLING) >= _ROLLING_ENTRIES:
        _ROLLING.clear()
    _ROLLING[id(cascades)] = (cascades, names)
    return names


_ROLLING_ENTRIES = 1024
_ROLLING: dict[int, tuple[tuple[CascadeSpan, ...], frozenset[str]]] = {}


class _Place(NamedTuple):
    """Where the costing sees one feature map: in fast storage or the arena, and in which format."""

    fast: bool
    format: str


def _place(net: Network, dec: Decisions, name: str, rolling: frozenset[str]) -> _Place:
    """Rolling buffers are NHCWB16 in fast storage; other feature maps are where ``dec`` put them."""
    if name in rolling:
        return _Place(True, "NHCWB16")
    fm = net.fms.get(name)
    return _Place(name in dec.fast_fms, fm.format if fm is not None else "NHWC")


def _rolling(dec: Decisions) -> frozenset[str]:
    return rolling_names(dec.cascades) if dec.cascades else frozenset()


def fm_area(net: Network, dec: Decisions, arch: Architecture, name: str | None) -> MemArea:
    """Where a feature map lives: fast storage if placed or rolling there, else the arena."""
    if name is not None and _place(net, dec, name, _rolling(dec)).fast:
        return arch.fast_area
    return arch.arena_area


def fm_format(net: Network, dec: Decisions, name: str) -> str:
    return _place(net, dec, name, _rolling(dec)).format


def cost_op(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, index: int, *,
    weights: WeightPlan | None = None, prev_slack_cycles: int = 0,
) -> Costed:
    """Cost op ``index`` with its stripe from ``dec`` and ``weights`` (default ``dec``'s plan).

    With a ``MemoOracle``, results are memoised on everything the costing reads from ``dec``."""
    op = net.npu_ops[index]
    plan = dec.weights[index] if weights is None else weights
    rolling = _rolling(dec)
    staged = op.ifm.name in dec.staged_fms
    ifm = _place(net, dec, op.ifm.name, rolling)
    ofm = _place(net, dec, op.ofm.name, rolling)
    ifm2 = None if op.ifm2 is None or op.ifm2.is_constant else _place(net, dec, op.ifm2.name, rolling)
    in_cascade = dec.cascade_of(index) is not None
    memo: dict[tuple[Any, ...], Costed] | None = getattr(oracle, "costed", None)
    key = (id(op), id(arch), dec.ofm_rows[index], plan, prev_slack_cycles, staged, ifm, ofm, ifm2, in_cascade)
    found = None if memo is None else memo.get(key)
    if found is not None:
        return found
    fast, arena = arch.fast_area, arch.arena_area
    ifm_area = fast if staged or ifm.fast else arena
    ofm_area = fast if ofm.fast else arena
    if ifm2 is not None:
        ifm2_area: MemArea | None = fast if ifm2.fast else arena
    else:
        ifm2_area = None if op.ifm2 is None else arch.const_area
    ofm_stripe = op.ofm_shape.with_h(min(dec.ofm_rows[index], op.ofm_shape.h))
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
    if memo is not None:
        memo[key] = costed
    return costed
