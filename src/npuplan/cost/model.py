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


def datapath_cycles(query: CostQuery, arch: Architecture) -> int:
    """NPU datapath cycles of ``query`` alone (no DMA waits)."""
    timing = output_timing(arch.accelerator.name)
    return op_cycles(query, arch, timing, const_area=_const_area(query))


def _tail_slack_cycles(query: CostQuery, arch: Architecture, cycles: int) -> float:
    """Cycles of the op's last weight slice: the window in which the next op's weights can stream."""
    w = query.weights
    if w is not None and w.slack_npu_cycles is not None:
        return w.slack_npu_cycles
    if w is None or len(w.depth_slices) <= 2:
        return float(cycles)
    tail_depth = w.depth_slices[-1] - w.depth_slices[-2]
    tail = dataclasses.replace(query, ofm=dataclasses.replace(query.ofm, shape=query.ofm.shape.with_c(tail_depth)))
    timing = output_timing(arch.accelerator.name)
    return float(op_cycles(tail, arch, timing, const_area=arch.fast_area))


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


def _npu_cycles(query: CostQuery, arch: Architecture, cycles: int, lut_cycles: float) -> tuple[float, float, float]:
    """(NPU cycles including DMA waits, weight DMA cycles, own slack cycles)."""
    w = query.weights
    slack_own = _tail_slack_cycles(query, arch, cycles)
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


def op_cost(query: CostQuery, arch: Architecture) -> OpCost:
    """Cycles, MACs and memory traffic of one op (or one stripe of it) on ``arch``."""
    cycles = datapath_cycles(query, arch)
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
    npu, weight_dma, slack = _npu_cycles(query, arch, cycles, lut_cycles)
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
