"""``cost_adapter``: the scheduler's question in the cost model's terms, operands as the NPU
accesses them."""

from __future__ import annotations

import numpy as np

from npuplan.cost import Direction, Purpose
from npuplan.hw import build_architecture
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.options import PlanOptions
from npuplan.schedule.model.geometry import ifm_stripe_for
from npuplan.schedule.pricing.cost_adapter import CostModelOracle
from npuplan.schedule.pricing.oracle import StripeQuery


def test_an_int64_map_is_written_as_its_32_bit_halves() -> None:
    """An ARG_MAX's int64 indices are written as two 32-bit channels (``element_type``): 4 bytes
    each of the view's elements, not 8 (the stream's OFM precision; ``npuplan estimate`` of the
    file prices them so)."""
    arch = build_architecture(PlanOptions("ethos-u65-512", system_config="Ethos_U65_High_End",
                                          memory_mode="Dedicated_Sram"))
    winners = Tensor("winners", (1, 4, 4, 1), DataType.INT16)
    indices = Tensor("indices", (1, 4, 4), DataType.INT64)
    weights = np.array([1, 0], dtype=np.int8).reshape(2, 1, 1, 1)
    op = NpuOp(name="halves", tflite_type="ARG_MAX", op_type="Conv2DBias", block_type=BlockType.CONV,
               ifm=winners, ifm_shape=winners.shape4d, ofm=indices, ofm_shape=Shape4D(1, 4, 4, 2), weights=weights,
               weight_tensor=Tensor("w", weights.shape, DataType.INT8, Quantization((1.0,), (0,)), weights),
               bias=np.zeros(2, dtype=np.int64), rescale=(1, 0))
    oracle = CostModelOracle(arch)
    stripe = op.ofm_shape
    query = StripeQuery(op=op, block_config=oracle.block_config(op, stripe), ofm_stripe=stripe,
                        ifm_stripe=ifm_stripe_for(op, stripe), ifm2_stripe=None, ofm_depth=2,
                        ifm_area=arch.fast_area, ifm2_area=None, ofm_area=arch.arena_area,
                        weight_area=arch.const_area)
    cost = oracle.op_cost(query)
    assert cost.bytes_in(arch.arena_area, Purpose.FEATURE_MAP, Direction.WRITE) == 4 * 4 * 2 * 4
