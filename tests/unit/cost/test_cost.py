from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from npuplan.cost import BlockChoice, CostQuery, Operand, WeightAccess, WeightFetch, op_cost
from npuplan.codec.size import palette_histogram, stream_bytes
from npuplan.codec.weight_order import StreamPadding
from npuplan.cost.weights import encoded_weight_size
from npuplan.hw import build_architecture
from npuplan.hw.accelerator import Block, accelerator
from npuplan.hw.memory import MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.options import PlanOptions


@pytest.fixture(scope="module")
def arch():
    return build_architecture(
        PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    )


def _conv(ifm: Shape4D, ofm: Shape4D, k: int = 1, block_type: BlockType = BlockType.CONV) -> NpuOp:
    wshape = (ofm.c, k, k, 1 if block_type is BlockType.DEPTHWISE else ifm.c)
    return NpuOp(
        "conv", "CONV_2D", "Conv2DBias", block_type,
        Tensor("i", tuple(ifm.as_list()), DataType.INT8), ifm, Tensor("o", tuple(ofm.as_list()), DataType.INT8), ofm,
        weights=np.ones(wshape, np.int8), kernel=Kernel(k, k), activation=Activation.RELU,
    )


def _query(op: NpuOp, weights: WeightAccess | None = None, fmt: str = "NHCWB16") -> CostQuery:
    return CostQuery(
        op=op, block=BlockChoice(Block(9, 6, 32), Block(9, 6, 32)),
        ifm=Operand(op.ifm_shape, MemArea.SRAM, fmt), ofm=Operand(op.ofm_shape, MemArea.SRAM, fmt), weights=weights,
    )


def test_pointwise_conv_matches_vela_ds_cnn_layer(arch):
    # ds_cnn_kws conv2d_1_2: 25x5x64 -> 25x5x64, 1x1, block 9x6x32; Vela 5.2.0's default core: NPU 5944 cycles
    # (its legacy core: 5904, without the pipeline's fill and drain); SRAM AC 3160 as the legacy core counts
    # this stream (weights in flash)
    op = _conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64))
    w = WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 4752)
    cost = op_cost(_query(op, w), arch)
    assert cost.nn_macs == 25 * 5 * 64 * 64
    assert cost.hw_macs >= cost.nn_macs
    assert cost.op_cycles == 5944
    assert cost.access_cycles[MemArea.SRAM] == pytest.approx(3160)
    assert cost.total_cycles == max(cost.npu_cycles, *cost.access_cycles.values())


def test_buffered_weights_add_transfer_cycles(arch):
    op = _conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64))
    direct = op_cost(_query(op, WeightAccess(4752, MemArea.OFF_CHIP_FLASH)), arch)
    buffered = op_cost(
        _query(op, WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 4752)), arch
    )
    assert buffered.npu_cycles > direct.npu_cycles
    assert buffered.bytes_in(MemArea.OFF_CHIP_FLASH) == 4752
    # direct weights are read by the NPU from flash, buffered ones are not charged to flash access
    assert direct.access_cycles[MemArea.OFF_CHIP_FLASH] > 0
    assert buffered.access_cycles[MemArea.OFF_CHIP_FLASH] == 0


def test_stripe_costs_less_than_whole_op(arch):
    op = _conv(Shape4D(1, 24, 24, 16), Shape4D(1, 24, 24, 16), k=3, block_type=BlockType.DEPTHWISE)
    whole = op_cost(_query(op), arch)
    stripe = op_cost(
        CostQuery(op, BlockChoice(Block(8, 8, 16), Block(10, 10, 16)), Operand(Shape4D(1, 10, 24, 16), MemArea.SRAM),
                  Operand(Shape4D(1, 8, 24, 16), MemArea.SRAM)),
        arch,
    )
    assert 0 < stripe.npu_cycles < whole.npu_cycles
    assert whole.nn_macs == 24 * 24 * 16 * 9


def test_weight_stream_alignment_and_slices():
    rng = np.random.default_rng(0)
    op = _conv(Shape4D(1, 8, 8, 32), Shape4D(1, 8, 8, 64))
    op = NpuOp(**{**{f: getattr(op, f) for f in op.__dataclass_fields__}, "weights": rng.integers(-128, 128, (64, 1, 1, 32)).astype(np.int8)})
    whole = encoded_weight_size(op, accelerator("ethos-u55-128"))
    sliced = encoded_weight_size(op, accelerator("ethos-u55-128"), depth_step=16)
    assert whole.depth_offsets == (0, 64) and sliced.depth_offsets == (0, 16, 32, 48, 64)
    assert all(s.weight_bytes % 16 == 0 for s in sliced.slices)
    assert whole.scale_bytes == sliced.scale_bytes == 640
    assert sliced.weight_bytes >= whole.weight_bytes
    # random int8 weights do not compress: -128 needs 9 bits (palette value 257), the codec's
    # Golomb-Rice codes come to ~9 bits a value (Vela 5.2.0's encoder: 2320 bytes)
    assert 64 * 32 <= whole.weight_bytes <= 64 * 32 * 9 / 8 + 64
    two_cores = encoded_weight_size(op, accelerator("ethos-u65-512"))
    assert {s.core for s in two_cores.slices} == {0, 1}


def test_compression_of_skewed_weights():
    no_padding = StreamPadding(0, 0, (), ())
    assert stream_bytes(palette_histogram(np.zeros(1000, np.int8)), no_padding) * 8 < 1000 * 2
    # -128..127 spans 9 bits (palette values up to 257): at most 9 bits a value and the headers
    assert stream_bytes(palette_histogram(np.arange(-128, 128)), no_padding) <= 256 * 9 // 8 + 16


@pytest.mark.parametrize("accel_name", ["ethos-u55-128", "ethos-u65-512"])
def test_slices_from_channel_histograms_match_the_encoder(accel_name):
    """The scheduler sizes arbitrary depth slices from per-channel histograms; every uniform
    slicing must match ``encoded_weight_size`` byte for byte (scales, per-core parts, alignment)."""
    from npuplan.cost.weights import channel_histograms, default_order, slice_bytes_of_histograms, volume_geometry

    rng = np.random.default_rng(1)
    op = _conv(Shape4D(1, 8, 8, 24), Shape4D(1, 8, 8, 72))
    skewed = np.clip(rng.normal(0, 6, (72, 1, 1, 24)), -128, 127).astype(np.int8)
    op = NpuOp(**{**{f: getattr(op, f) for f in op.__dataclass_fields__}, "weights": skewed})
    accel = accelerator(accel_name)
    histograms, geometry, order = channel_histograms(op), volume_geometry(op, accel), default_order(op)
    for step in (16, 32, 72):
        per_slice: dict[int, int] = {}
        for s in encoded_weight_size(op, accel, depth_step=step).slices:
            per_slice[s.depth_offset] = per_slice.get(s.depth_offset, 0) + s.total_bytes
        assert per_slice == {a: slice_bytes_of_histograms(histograms, geometry, a, min(a + step, 72), accel.cores, order)
                             for a in range(0, 72, step)}


@pytest.mark.parametrize("accel_name, system, mode, vela_cycles", [
    ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram", 16640),
    ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram_384KB", 8352),
    ("ethos-u65-512", "Ethos_U65_High_End", "Dedicated_Sram", 4224),
])
def test_table_lookup_rate_scales_with_the_array(accel_name, system, mode, vela_cycles):
    # effnet_lite_se_64's first standalone sigmoid (a 1x1 average pool with a LUT, 32x32x16 NHCWB16,
    # block 4x4x16, SRAM): Vela 5.2.0's default core: 16640, 8352, 4224 cycles (one lookup per element
    # per cycle at 128 MACs, twice that at 256, four times at 512)
    arch = build_architecture(PlanOptions(accel_name, system_config=system, memory_mode=mode))
    shape = Shape4D(1, 32, 32, 16)
    op = NpuOp("lut", "LOGISTIC", "LUT", BlockType.POOLING, Tensor("i", (1, 32, 32, 16), DataType.INT8), shape,
               Tensor("o", (1, 32, 32, 16), DataType.INT8), shape, activation=Activation.LUT, pool=PoolKind.AVERAGE)
    query = CostQuery(op=op, block=BlockChoice(Block(4, 4, 16), Block(4, 4, 16)),
                      ifm=Operand(shape, MemArea.SRAM, "NHCWB16"), ofm=Operand(shape, MemArea.SRAM, "NHCWB16"))
    assert op_cost(query, arch).op_cycles == pytest.approx(vela_cycles, rel=0.01)


def test_a_table_fused_into_a_depthwise_keeps_the_activation_rate():
    # mid_dw (a generated 1x1 conv -> 3x3 depthwise + sigmoid -> 1x1 conv, 32x32x32): the depthwise,
    # NHCWB16 in SRAM, block 12x16x16, on u65-256: Vela 5.2.0's default core 34428 cycles, output-bound
    # at one lookup a cycle (a standalone lookup of the same size: half that)
    arch = build_architecture(PlanOptions("ethos-u65-256", system_config="Ethos_U65_High_End",
                                          memory_mode="Dedicated_Sram_384KB"))
    shape = Shape4D(1, 32, 32, 32)
    op = dataclasses.replace(_conv(shape, shape, 3, BlockType.DEPTHWISE), activation=Activation.LUT)
    query = CostQuery(op=op, block=BlockChoice(Block(12, 16, 16), Block(14, 18, 16)),
                      ifm=Operand(shape, MemArea.SRAM, "NHCWB16"), ofm=Operand(shape, MemArea.SRAM, "NHCWB16"),
                      weights=WeightAccess(480, MemArea.SRAM))
    assert op_cost(query, arch).op_cycles == pytest.approx(34428, rel=0.02)
