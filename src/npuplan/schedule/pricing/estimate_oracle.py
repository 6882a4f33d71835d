"""A roofline stand-in for the cost model: ``EstimateOracle`` answers the scheduler's ``CostOracle``
questions with max(MAC cycles, memory cycles), so scheduler tests need no cost model. A plan never
uses it (``cost_adapter.default_oracle`` adapts ``npuplan.cost``), so it lives apart from the
protocol the plan loads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from npuplan.cost.model import weight_wait_npu_cycles
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.schedule.pricing.oracle import Costed, OracleMemos, StripeQuery
from npuplan.units import ALIGN_BYTES, round_up


@record
class EstimateCost:
    """The built-in estimate's cost record."""

    total_cycles: int
    npu_cycles: int
    access_cycles: int
    slack_npu_cycles: int = 0
    datapath_cycles: int = 0  # the NPU cycles before any DMA wait


@record
class EstimateBlock:
    """The block shape the roofline estimate reports (elements)."""

    height: int
    width: int
    depth: int


class EstimateOracle(OracleMemos):
    """A roofline estimate: max(MAC cycles, memory cycles). Used in tests and before ``cost`` lands."""

    def __init__(self, arch: Architecture) -> None:
        self._arch = arch
        OracleMemos.__init__(self)

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any:
        return EstimateBlock(min(16, ofm_stripe.h), min(16, ofm_stripe.w), min(32, round_up(ofm_stripe.c, 8)))

    def block_alternatives(self, op: NpuOp, ofm_stripe: Shape4D) -> tuple[Any, ...]:
        return ()

    def charges_weight_rereads(self) -> bool:
        return True

    def _macs(self, op: NpuOp, ofm: Shape4D, depth: int) -> int:
        k = op.kernel.elements
        out = ofm.n * ofm.h * ofm.w * depth
        if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT):
            return out * k * op.ifm_shape.c
        return out * k

    def op_cost(self, query: StripeQuery) -> EstimateCost:
        op, arch = query.op, self._arch
        ofm = op.ofm_shape
        depth = min(query.ofm_depth, ofm.c)
        ratio = depth / max(ofm.c, 1)
        macs = self._macs(op, ofm, depth)
        npu = math.ceil(macs / arch.accelerator.macs_per_cycle) + 16 * math.ceil(ofm.h / max(query.ofm_stripe.h, 1))
        elem = op.ofm.dtype.size_bytes
        traffic: dict[MemArea, float] = {}
        traffic[query.ifm_area] = traffic.get(query.ifm_area, 0) + op.ifm_shape.elements * elem
        if query.ifm2_area is not None and op.ifm2_shape is not None:
            traffic[query.ifm2_area] = traffic.get(query.ifm2_area, 0) + op.ifm2_shape.elements * elem
        traffic[query.ofm_area] = traffic.get(query.ofm_area, 0) + ofm.elements * elem * ratio
        if op.weights is not None:
            wbytes = op.weights.size * ratio
            traffic[query.weight_area] = traffic.get(query.weight_area, 0) + wbytes
        access = max((b / max(arch.bytes_per_cycle(a), 1e-9) for a, b in traffic.items()), default=0.0)
        datapath = npu
        npu += _weight_dma_cycles(query, npu, self.transfer_cycles)
        if query.staged_ifm_bytes:
            npu += self.transfer_cycles(self._arch.arena_area, self._arch.fast_area, query.staged_ifm_bytes)
        total = max(npu, math.ceil(access))
        tail = query.depth_slices[-1] - query.depth_slices[-2] if len(query.depth_slices) > 2 else ofm.c
        return EstimateCost(int(total), int(npu), int(math.ceil(access)), int(npu * tail / max(ofm.c, 1)), datapath)

    def screen_blocks(self, query: StripeQuery, blocks: Sequence[Any], *,
                      most_weight_read_bytes: float | None) -> tuple[tuple[int, float] | None, ...]:
        return tuple((0, 0.0) for _ in blocks)  # one block per op: never asked

    def weight_wait_cycles(self, query: StripeQuery) -> int:
        return 0  # its screens are no bound to add a wait to

    def reads_prev_slack(self, op: NpuOp, *, weight_fetch: str, weight_prefetched: bool, lut_prefetched: bool,
                         loads_table: bool) -> bool:
        """Only a weight DMA waits less after the previous op's slack (``_weight_dma_cycles``)."""
        return weight_fetch not in ("none", "")

    def cycles(self, cost: Any) -> int:
        return int(cost.total_cycles)

    def weight_read_bytes(self, cost: Any) -> float:
        return 0.0  # one block per op: the stream is read once

    def query_weight_read_bytes(self, query: StripeQuery) -> float:
        return 0.0

    def weight_slice_bytes(self, op: NpuOp, block_config: Any, depth_slices: tuple[int, ...]) -> tuple[int, ...]:
        if op.weights is None:
            return tuple(0 for _ in depth_slices[1:])
        per_channel = op.weights.size / max(op.ofm_shape.c, 1)
        return tuple(
            round_up(int(per_channel * (b - a)) + 10 * (b - a), ALIGN_BYTES)
            for a, b in zip(depth_slices, depth_slices[1:])
        )

    def transfer_cycles(self, src: MemArea, dst: MemArea, size_bytes: int) -> int:
        bw = min(self._arch.bytes_per_cycle(src), self._arch.bytes_per_cycle(dst))
        return int(math.ceil(size_bytes / max(bw, 1e-9)))


def _weight_dma_cycles(query: StripeQuery, op_cycles: int, transfer: Any) -> int:
    """Cycles the op waits for weight DMA (``cost.model.weight_wait_npu_cycles``, Vela's rule)."""
    if query.weight_fetch in ("none", "") or query.weight_stream_bytes == 0:
        return 0
    src, dst = query.weight_source_area or query.weight_area, query.weight_area
    full = transfer(src, dst, query.weight_stream_bytes)
    first = transfer(src, dst, query.first_slice_bytes or query.weight_stream_bytes)
    npu = weight_wait_npu_cycles(op_cycles, full, first, query.prev_slack_cycles,
                                 double_buffered=query.weight_fetch == "double")
    return int(npu) - op_cycles
