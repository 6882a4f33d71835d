"""The per-op cost model: ``op_cost(query, arch) -> OpCost``.

Combines datapath cycles (``cycles``), element accesses (``access``) and memory-transfer timing
(``transfer``) the way Vela 5.2.0 does for its per-layer report: the op's "NPU" cycles are the
datapath cycles plus any weight/LUT DMA it has to wait for; each memory area's access cycles are
its burst-scaled bytes over its bandwidth; the op's total is the maximum of these.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from types import MappingProxyType

from npuplan.cost.access import ElementAccess, element_access
from npuplan.cost.cycles import hw_macs, nn_macs, op_cycles
from npuplan.cost.query import BandwidthKey, CostQuery, Direction, OpCost, Purpose, WeightAccess, WeightFetch
from npuplan.cost.tables import output_timing
from npuplan.cost.transfer import burst_scaled_bytes, dma_cycles
from npuplan.hw.memory import Architecture, MemArea


def _const_area(query: CostQuery) -> MemArea | None:
    """Where scales and biases are read from (``None`` for ops without them)."""
    return query.weights.read_area if query.weights is not None else None


# Datapath cycles read only the op, its block and operands and where its constants come from, not
# the weight fetch plan or the previous op's slack, which is what a search mostly varies: a caller
# costing many such variants of one op may pass a dict to memoise them in (keyed on ``id(op)``,
# so one dict must only see ops that stay alive while it is used, e.g. one network's)
CyclesMemo = dict[tuple[object, ...], int]


def _memo_op_cycles(query: CostQuery, arch: Architecture, const_area: MemArea | None, memo: CyclesMemo | None) -> int:
    timing = output_timing(arch.accelerator.name)
    if memo is None:
        return op_cycles(query, arch, timing, const_area=const_area)
    key = (id(query.op), id(arch), query.block, query.ifm, query.ofm, query.ifm2, const_area)
    found = memo.get(key)
    if found is None:
        found = memo[key] = op_cycles(query, arch, timing, const_area=const_area)
    return found


def datapath_cycles(query: CostQuery, arch: Architecture, *, memo: CyclesMemo | None = None) -> int:
    """NPU datapath cycles of ``query`` alone (no DMA waits)."""
    return _memo_op_cycles(query, arch, _const_area(query), memo)


def _tail_slack_cycles(query: CostQuery, arch: Architecture, cycles: int, memo: CyclesMemo | None) -> float:
    """Cycles of the op's last weight slice: the window in which the next op's weights can stream."""
    w = query.weights
    if w is not None and w.slack_npu_cycles is not None:
        return w.slack_npu_cycles
    if w is None or len(w.depth_slices) <= 2:
        return float(cycles)
    tail_depth = w.depth_slices[-1] - w.depth_slices[-2]
    tail = dataclasses.replace(query, ofm=dataclasses.replace(query.ofm, shape=query.ofm.shape.with_c(tail_depth)))
    return float(_memo_op_cycles(tail, arch, arch.fast_area, memo))


class _Bytes:
    """Accumulates raw and burst-scaled bytes per (area, purpose, direction)."""

    def __init__(self) -> None:
        self.raw: dict[BandwidthKey, float] = defaultdict(float)
        self.scaled: dict[MemArea, float] = defaultdict(float)

    def add(self, key: BandwidthKey, raw: float, scaled: float | None) -> None:
        self.raw[key] += raw
        if scaled is not None:
            self.scaled[key[0]] += scaled


def _feature_map_bytes(query: CostQuery, arch: Architecture, acc: ElementAccess, out: _Bytes) -> None:
    block = query.block
    moves = [(query.ofm, acc.ofm_elements, False, block.ofm_block), (query.ifm, acc.ifm_elements, True, block.ifm_block)]
    if query.ifm2 is not None:
        moves.append((query.ifm2, acc.ifm2_elements, True, block.ifm_block))
    for operand, elements, is_read, blk in moves:
        raw = elements * operand.bits // 8
        scaled = burst_scaled_bytes(
            arch, operand.area, is_read=is_read, fmt=operand.format, element_bits=operand.bits,
            block=blk, shape=operand.shape, raw_bytes=raw,
        )
        direction = Direction.READ if is_read else Direction.WRITE
        out.add((operand.area, Purpose.FEATURE_MAP, direction), raw, scaled)


def _weight_bytes(query: CostQuery, w: WeightAccess, acc: ElementAccess, out: _Bytes) -> None:
    direct = w.fetch is WeightFetch.DIRECT
    scale_bytes = acc.scale_entries * w.scale_bytes_per_channel
    original = query.op.weights.size if query.op.weights is not None else 0
    if acc.weight_elements > 0 and original > 0:
        # weight bytes fetched scale with the stream's compression ratio (alignment ignored)
        ratio = (w.stream_bytes - scale_bytes) / original
        raw = acc.weight_elements * ratio
        out.add((w.read_area, Purpose.WEIGHTS, Direction.READ), raw, raw if direct else None)
    if scale_bytes > 0:
        out.add((w.read_area, Purpose.SCALES, Direction.READ), scale_bytes, scale_bytes if direct else None)
    if not direct and w.buffer_area is not None:
        out.add((w.source_area, Purpose.WEIGHTS, Direction.READ), w.stream_bytes, None)
        out.add((w.buffer_area, Purpose.WEIGHTS, Direction.WRITE), w.stream_bytes, None)


def _npu_cycles(
    query: CostQuery, arch: Architecture, cycles: int, lut_cycles: float, memo: CyclesMemo | None,
) -> tuple[float, float, float]:
    """(NPU cycles including DMA waits, weight DMA cycles, own slack cycles)."""
    w = query.weights
    slack_own = _tail_slack_cycles(query, arch, cycles, memo)
    if w is None or w.fetch is WeightFetch.DIRECT or w.buffer_area is None:
        return cycles + max(lut_cycles - query.prev_slack_npu_cycles, 0.0), 0.0, slack_own
    full_bytes = w.full_stream_bytes if w.full_stream_bytes is not None else w.stream_bytes
    full = dma_cycles(arch, w.source_area, w.buffer_area, full_bytes) if w.charge_full_transfer else 0.0
    first = dma_cycles(arch, w.source_area, w.buffer_area, w.first_slice_bytes)
    slack = query.prev_slack_npu_cycles
    if w.fetch is WeightFetch.DOUBLE_BUFFERED:
        npu = max(full - slack + slack_own, cycles + max(first - slack, 0.0))
    else:
        npu = cycles + full - min(first, slack)
    return npu + lut_cycles, full, slack_own


def _staging(query: CostQuery, arch: Architecture, out: _Bytes) -> float:
    """DMA cycles the op waits for its staged feature map (bytes counted, timed as a DMA)."""
    s = query.staging
    if s is None or s.size_bytes <= 0:
        return 0.0
    out.add((s.source_area, Purpose.FEATURE_MAP, Direction.READ), s.size_bytes, None)
    out.add((s.dest_area, Purpose.FEATURE_MAP, Direction.WRITE), s.size_bytes, None)
    return dma_cycles(arch, s.source_area, s.dest_area, s.size_bytes)


def op_cost(query: CostQuery, arch: Architecture, *, cycles_memo: CyclesMemo | None = None) -> OpCost:
    """Cycles, MACs and memory traffic of one op (or one stripe of it) on ``arch``
    (``cycles_memo``: see ``CyclesMemo``)."""
    cycles = datapath_cycles(query, arch, memo=cycles_memo)
    acc = element_access(query)
    traffic = _Bytes()
    _feature_map_bytes(query, arch, acc, traffic)
    if query.weights is not None:
        _weight_bytes(query, query.weights, acc, traffic)
    lut_cycles = 0.0
    if query.lut is not None:
        lut_cycles = dma_cycles(arch, query.lut.source_area, None, query.lut.size_bytes)
        traffic.add((query.lut.source_area, Purpose.LUT, Direction.READ), query.lut.size_bytes, None)
    staging_cycles = _staging(query, arch, traffic)
    npu, weight_dma, slack = _npu_cycles(query, arch, cycles, lut_cycles, cycles_memo)
    npu += staging_cycles
    access_cycles = {area: traffic.scaled.get(area, 0.0) / arch.bytes_per_cycle(area) for area in MemArea}
    accel = arch.accelerator
    return OpCost(
        nn_macs=nn_macs(query),
        hw_macs=hw_macs(query, accel.ofm_ublock, accel.ifm_ublock.depth),
        op_cycles=cycles,
        npu_cycles=npu,
        access_cycles=MappingProxyType(access_cycles),
        total_cycles=max([npu, *access_cycles.values()]),
        bytes=MappingProxyType(dict(traffic.raw)),
        dma_cycles=weight_dma + lut_cycles + staging_cycles,
        slack_npu_cycles=slack,
    )
