"""The project's cost model and block-config chooser behind the scheduler's ``CostOracle``."""

from __future__ import annotations

import logging
from typing import Any

from npuplan.cost import (
    BlockChoice, CostQuery, FmStaging, LutAccess, Operand, WeightAccess, WeightFetch, dma_cycles, op_cost,
)
from npuplan.cost.model import CostMemo
from npuplan.cost.weights import WeightEncodings, encoding_order
from npuplan.hw.block_config import alternative_block_configs, choose_block_config
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import Activation, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.schedule.pricing.oracle import Costed, CostOracle, MemoOracle, StripeQuery

log = logging.getLogger(__name__)

_FETCH = {
    "none": WeightFetch.DIRECT,
    "full": WeightFetch.BUFFERED,
    "single": WeightFetch.BUFFERED,
    "double": WeightFetch.DOUBLE_BUFFERED,
}
# Bytes of an activation lookup table by OFM element size in bits (int8: 256 x 1; the softmax
# exp table: 256 x int32; int16: 512 x int32)
_LUT_BYTES = {8: 256, 16: 2048, 32: 1024}


def lut_access(op: NpuOp, arch: Architecture) -> LutAccess | None:
    """The LUT an op DMAs into the shared buffer before it runs (Vela copies it for every LUT op)."""
    if op.activation is not Activation.LUT:
        return None
    return LutAccess(_LUT_BYTES.get(op.ofm.dtype.bits, 256), arch.const_area)


class CostModelOracle:
    """Adapts ``npuplan.cost.op_cost`` and ``hw.block_config.choose_block_config``."""

    def __init__(self, arch: Architecture, *, encodings: WeightEncodings | None = None) -> None:
        """``encodings`` is the plan's shared weight-encoding memo (a new one when not given)."""
        self._arch = arch
        self._encodings = encodings or WeightEncodings(arch.accelerator)
        self._memo = CostMemo()  # what cost.model may reuse between queries
        self.costed: dict[tuple[Any, ...], Costed] = {}

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any:
        box = None if ofm_stripe == op.ofm_shape else ofm_stripe
        return choose_block_config(op, self._arch.accelerator, ofm_box=box)

    def block_alternatives(self, op: NpuOp, ofm_stripe: Shape4D) -> tuple[Any, ...]:
        box = None if ofm_stripe == op.ofm_shape else ofm_stripe
        return alternative_block_configs(op, self._arch.accelerator, ofm_box=box)

    def op_cost(self, query: StripeQuery) -> Any:
        op = query.op
        bits_in = op.ifm.dtype.bits
        weights = None
        if op.weights is not None:
            stream = query.weight_stream_bytes or sum(
                self.weight_slice_bytes(op, query.block_config, (0, op.ofm_shape.c)))
            fetch = _FETCH.get(query.weight_fetch, WeightFetch.DIRECT)
            weights = WeightAccess(
                stream_bytes=stream,
                source_area=query.weight_source_area or self._arch.const_area,
                fetch=fetch,
                buffer_area=None if fetch is WeightFetch.DIRECT else query.weight_area,
                first_slice_bytes=query.first_slice_bytes,
                depth_slices=query.depth_slices,
            )
        ifm2 = None
        if op.ifm2 is not None and query.ifm2_stripe is not None and query.ifm2_area is not None:
            ifm2 = Operand(query.ifm2_stripe, query.ifm2_area, query.ifm2_format,  # type: ignore[arg-type]
                           op.ifm2.dtype.bits)
        # Vela costs the box an op writes, not all its OFM (a concatenation copy writes its slice)
        written = op.ofm_write_shape if op.ofm_write_shape is not None else op.ofm_shape.with_c(query.ofm_depth)
        model_query = CostQuery(
            op=op,
            block=BlockChoice.of(query.block_config),
            # Vela costs a striped op over its whole OFM with the stripe's block config
            ifm=Operand(op.ifm_shape, query.ifm_area, query.ifm_format, bits_in),  # type: ignore[arg-type]
            ofm=Operand(written, query.ofm_area, query.ofm_format,  # type: ignore[arg-type]
                        op.ofm.dtype.bits),
            ifm2=ifm2,
            weights=weights,
            lut=lut_access(op, self._arch),
            prev_slack_npu_cycles=float(query.prev_slack_cycles),
            staging=FmStaging(query.staged_ifm_bytes, self._arch.arena_area, query.ifm_area)
            if query.staged_ifm_bytes else None,
        )
        return op_cost(model_query, self._arch, memo=self._memo)

    def cycles(self, cost: Any) -> int:
        return int(round(cost.total_cycles))

    def floor_cycles(self, cost: Any) -> int:
        """The datapath cycles and each area's access cycles: with weights buffered the datapath
        reads them from fast storage and their reads and DMA add no access cycles (``cost.model``),
        whatever the plan; the weight DMA wait only adds to the NPU cycles. Rounded as ``cycles``."""
        return int(round(max(cost.op_cycles, *cost.access_cycles.values())))

    def weight_slice_bytes(self, op: NpuOp, block_config: Any, depth_slices: tuple[int, ...]) -> tuple[int, ...]:
        """The encoder's sizes (``cost.weights``), walked in the order ``block_config`` makes the
        encoder use (its OFM block depth and traversal decide the zeros it pads)."""
        if op.weights is None:
            return tuple(0 for _ in depth_slices[1:])
        order = encoding_order(op, block_config)
        return tuple(self._encodings.slice_bytes(op, a, b, order) for a, b in zip(depth_slices, depth_slices[1:]))

    def transfer_cycles(self, src: MemArea, dst: MemArea, size_bytes: int) -> int:
        return int(dma_cycles(self._arch, src, dst, size_bytes))


def default_oracle(arch: Architecture, *, encodings: WeightEncodings | None = None) -> CostOracle:
    """The project's cost model behind the oracle interface, memoised.

    An oracle and its memos serve the plans of one accelerator, system config and memory mode
    (any budget, goal or network variant: the costing memo's keys hold what it reads of those).

    ``encodings`` is the plan's weight-encoding memo, to share with the command stream and report.
    """
    return MemoOracle(CostModelOracle(arch, encodings=encodings))
