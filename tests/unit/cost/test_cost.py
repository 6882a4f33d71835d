from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from npuplan.cost import (
    BlockChoice, CostQuery, Direction, LutAccess, Operand, Purpose, StripeRows, WeightAccess, WeightFetch, op_cost,
)
from npuplan.codec.size import palette_histogram, stream_bytes
from npuplan.codec.weight_order import StreamPadding
from npuplan.cost.model import CostMemo, datapath_cycles, least_cycles, weight_read_bytes, weight_read_total
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
    # (its legacy core: 5904, without the pipeline's fill and drain); SRAM AC 4702 (the weights read from
    # their buffer three times, once per OFM block position), and npuplan also counts the scales read with
    # them, 3 x 640 bytes at 8 bytes a cycle
    op = _conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64))
    w = WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 4752)
    cost = op_cost(_query(op, w), arch)
    assert cost.nn_macs == 25 * 5 * 64 * 64
    assert cost.hw_macs >= cost.nn_macs
    assert cost.op_cycles == 5944
    assert cost.access_cycles[MemArea.SRAM] == pytest.approx(4702 + 3 * 640 / 8)
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


def test_weights_fetched_slice_by_slice_cost_one_operation_per_slice(arch):
    # the command stream runs an operation per OFM depth slice of buffered weights, and each one
    # reads the whole IFM again: four slices of 16 under a 32-deep block read the IFM four times
    op = _conv(Shape4D(1, 28, 28, 64), Shape4D(1, 28, 28, 64))
    sliced = WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.DOUBLE_BUFFERED, MemArea.SRAM, 1200,
                          depth_slices=(0, 16, 32, 48, 64))
    whole = op_cost(_query(op), arch)
    cost = op_cost(_query(op, sliced), arch)
    piece = op_cost(CostQuery(op, BlockChoice(Block(9, 6, 32), Block(9, 6, 32)),
                              Operand(op.ifm_shape, MemArea.SRAM, "NHCWB16"),
                              Operand(op.ofm_shape.with_c(16), MemArea.SRAM, "NHCWB16")), arch)
    ifm_bytes = 28 * 28 * 64
    assert cost.op_cycles == 4 * piece.op_cycles > whole.op_cycles
    read = cost.bytes[(MemArea.SRAM, Purpose.FEATURE_MAP, Direction.READ)]
    assert read == 4 * piece.bytes[(MemArea.SRAM, Purpose.FEATURE_MAP, Direction.READ)] >= 4 * ifm_bytes
    assert read == 2 * whole.bytes[(MemArea.SRAM, Purpose.FEATURE_MAP, Direction.READ)]


def test_depthwise_slices_read_their_own_channels(arch):
    op = _conv(Shape4D(1, 28, 28, 64), Shape4D(1, 28, 28, 64), k=3, block_type=BlockType.DEPTHWISE)
    sliced = WeightAccess(1000, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 250,
                          depth_slices=(0, 16, 32, 48, 64))
    whole = op_cost(_query(op), arch)
    cost = op_cost(_query(op, sliced), arch)
    key = (MemArea.SRAM, Purpose.FEATURE_MAP, Direction.READ)
    assert cost.bytes[key] == pytest.approx(whole.bytes[key], rel=0.05)
    assert cost.op_cycles > whole.op_cycles  # a pipeline fill and drain per slice


def test_a_striped_op_costs_one_operation_per_stripe(arch):
    # a cascade runs each op stripe by stripe, one NPU operation each with its own pipeline fill and
    # drain, each reading the IFM rows its kernel needs (two rows of halo read again per stripe)
    op = _conv(Shape4D(1, 16, 16, 16), Shape4D(1, 16, 16, 16), k=3, block_type=BlockType.DEPTHWISE)
    block = BlockChoice(Block(2, 16, 16), Block(4, 18, 16))
    whole = CostQuery(op, block, Operand(op.ifm_shape, MemArea.SRAM, "NHCWB16"),
                      Operand(op.ofm_shape, MemArea.SRAM, "NHCWB16"))
    striped = dataclasses.replace(whole, stripes=(StripeRows(2, 2, 3), StripeRows(6, 2, 4)))

    def piece(ofm_rows: int, ifm_rows: int):
        return op_cost(dataclasses.replace(whole, ifm=Operand(op.ifm_shape.with_h(ifm_rows), MemArea.SRAM, "NHCWB16"),
                                           ofm=Operand(op.ofm_shape.with_h(ofm_rows), MemArea.SRAM, "NHCWB16")), arch)

    cost, edge, middle = op_cost(striped, arch), piece(2, 3), piece(2, 4)
    assert cost.op_cycles == 2 * edge.op_cycles + 6 * middle.op_cycles > op_cost(whole, arch).op_cycles
    key = (MemArea.SRAM, Purpose.FEATURE_MAP, Direction.READ)
    assert cost.bytes[key] == 2 * edge.bytes[key] + 6 * middle.bytes[key] == (2 * 3 + 6 * 4) * 16 * 16
    assert cost.nn_macs == op_cost(whole, arch).nn_macs


def test_a_weight_dma_runs_under_the_previous_op_only_into_a_buffer_held_there(arch):
    op = _conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64))
    held = WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 4752)
    shared = dataclasses.replace(held, prefetched=False)
    after = 10_000.0  # the previous op leaves this many cycles to fetch under
    prefetched = op_cost(dataclasses.replace(_query(op, held), prev_slack_npu_cycles=after), arch)
    waiting = op_cost(dataclasses.replace(_query(op, shared), prev_slack_npu_cycles=after), arch)
    assert prefetched.npu_cycles == prefetched.op_cycles  # the whole copy ran under the previous op
    assert waiting.npu_cycles == op_cost(_query(op, held), arch).npu_cycles > waiting.op_cycles


def test_the_dma_wait_comes_before_the_memory_traffic(arch):
    # a memory-bound op: its memory time follows the wait for its weights rather than hiding it
    op = _conv(Shape4D(1, 64, 64, 8), Shape4D(1, 64, 64, 8))
    cost = op_cost(_query(op, WeightAccess(400, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 400)),
                   arch)
    wait = cost.npu_cycles - cost.op_cycles
    assert wait > 0 and cost.access_cycles[MemArea.SRAM] > cost.op_cycles
    assert cost.total_cycles == pytest.approx(wait + cost.access_cycles[MemArea.SRAM])


def test_a_double_buffer_fetches_only_its_first_slice_under_the_previous_op():
    from npuplan.cost.model import double_buffer_wait_cycles

    # two slices of 100 cycles, 300 cycles of DMA each: without slack the first waits 300, the
    # second's DMA (issued as the first starts) ends at 600
    assert double_buffer_wait_cycles(200, (16, 16), (300, 300), 0) == 700 - 200
    # a long previous op hides the first slice's DMA, not the second's: it is issued when the first
    # slice starts, and the second slice waits for it
    assert double_buffer_wait_cycles(200, (16, 16), (300, 300), 1000) == 400 - 200
    # compute-bound slices wait for nothing once the first has arrived
    assert double_buffer_wait_cycles(2000, (16, 16, 16, 16), (100, 100, 100, 100), 0) == 100


def test_a_double_buffers_next_slice_waits_for_its_slice_before_to_free_the_source_memory():
    from npuplan.cost.model import double_buffer_wait_cycles

    # slices of 1000 cycles each, all of it traffic in the memory the weights come from (an OFM
    # written to DRAM, weights in DRAM): the second slice's 300-cycle DMA starts when the first
    # slice's traffic there ends (1000), not when it starts, and the second slice waits 300
    # (the estimator's timeline holds the DMA back by the same rule)
    assert double_buffer_wait_cycles(2000, (16, 16), (300, 300), 1000, source_busy_cycles=2000) == 300
    # half of each slice in that memory: the DMA runs in the other half, no wait
    assert double_buffer_wait_cycles(2000, (16, 16), (300, 300), 1000, source_busy_cycles=1000) == 0
    # no traffic there: as before
    assert double_buffer_wait_cycles(2000, (16, 16), (300, 300), 1000) == 0


def test_a_table_loads_under_the_previous_op_unless_its_stream_starts_with_it(arch):
    op = dataclasses.replace(_conv(Shape4D(1, 8, 8, 16), Shape4D(1, 8, 8, 16)), activation=Activation.LUT)
    query = dataclasses.replace(_query(op), prev_slack_npu_cycles=10_000.0)
    under = op_cost(dataclasses.replace(query, lut=LutAccess(256, MemArea.OFF_CHIP_FLASH)), arch)
    first = op_cost(dataclasses.replace(query, lut=LutAccess(256, MemArea.OFF_CHIP_FLASH, prefetched=False)), arch)
    assert under.npu_cycles == under.op_cycles < first.npu_cycles


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


def test_an_op_streaming_its_weights_from_flash_leaves_no_window_to_prefetch_from_flash(arch):
    # one memory's bandwidth is shared: a fully-connected op reading 64 KiB of weights in place from
    # flash keeps flash busy for its whole time, so the next op's weight DMA from flash cannot run
    # under it (autoencoder_ad once planned below the physical floor on that overlap)
    fc = _conv(Shape4D(1, 1, 1, 256), Shape4D(1, 1, 1, 256), block_type=BlockType.VECTOR_PRODUCT)
    in_place = op_cost(_query(fc, WeightAccess(256 * 256, MemArea.OFF_CHIP_FLASH)), arch)
    flash = in_place.access_cycles[MemArea.OFF_CHIP_FLASH]
    assert flash >= in_place.total_cycles - 1e-6 and in_place.op_cycles > 0
    assert in_place.slack_npu_cycles == 0.0
    # the same op with its weights already in SRAM leaves flash free under its datapath time
    buffered = op_cost(_query(fc, WeightAccess(256 * 256, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED,
                                               MemArea.SRAM, 256 * 256)), arch)
    assert buffered.slack_npu_cycles == pytest.approx(buffered.op_cycles)


def _sub(ifm: Shape4D, ifm_dtype: DataType) -> NpuOp:
    return NpuOp(
        "sub", "SUB", "Sub", BlockType.ELEMENTWISE,
        Tensor("i", tuple(ifm.as_list()), ifm_dtype), ifm, Tensor("o", (1, 1, 1, 1), ifm_dtype), Shape4D(1, 1, 1, 1),
        ifm2=Tensor("c", (1, 1, 1, 1), DataType.INT32), ifm2_shape=Shape4D(1, 1, 1, 1), elementwise="SUB",
    )


@pytest.mark.parametrize(("dtype", "bits", "flash_cycles"), [(DataType.INT32, 32, 0), (DataType.INT8, 8, 256)])
def test_a_wide_scalar_ifm_is_read_and_its_ifm2_is_not_counted(arch, dtype, bits, flash_cycles):
    # audio1d_256 (u55-128, Shared_Sram): a SUB of a 1x1x1 int32 map in SRAM (NHCWB16) and an int32
    # constant in flash; Vela 5.2.0's default core: Op Cycles 25, OffFlash AC 0 (its legacy core counts
    # the constant, rounded to 16 elements: 256). An 8-bit scalar IFM is an immediate and the IFM2 is read.
    op = _sub(Shape4D(1, 1, 1, 1), dtype)
    query = CostQuery(
        op=op, block=BlockChoice(Block(1, 2, 8), Block(1, 2, 8)),
        ifm=Operand(op.ifm_shape, MemArea.SRAM, "NHCWB16", bits),
        ofm=Operand(op.ofm_shape, MemArea.SRAM, "NHCWB16", bits),
        ifm2=Operand(op.ifm2_shape, MemArea.OFF_CHIP_FLASH, "NHWC", 32),
    )
    cost = op_cost(query, arch)
    assert cost.access_cycles.get(MemArea.OFF_CHIP_FLASH, 0) == pytest.approx(flash_cycles)
    if bits == 32:
        assert cost.total_cycles == 25


_BOUND_CASES = [  # (op, weights, stripes): whole, buffered and sliced, striped
    (_conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64)), WeightAccess(4752, MemArea.OFF_CHIP_FLASH), ()),
    (_conv(Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64)),
     WeightAccess(4752, MemArea.OFF_CHIP_FLASH, WeightFetch.DOUBLE_BUFFERED, MemArea.SRAM, 1200, (0, 16, 32, 48, 64)), ()),
    (_conv(Shape4D(1, 24, 24, 16), Shape4D(1, 24, 24, 16), k=3, block_type=BlockType.DEPTHWISE),
     WeightAccess(400, MemArea.OFF_CHIP_FLASH, WeightFetch.BUFFERED, MemArea.SRAM, 400),
     (StripeRows(2, 8, 10), StripeRows(1, 8, 9))),
]


@pytest.mark.parametrize("case", range(len(_BOUND_CASES)))
@pytest.mark.parametrize("ofm_block", [Block(9, 6, 32), Block(4, 4, 16), Block(2, 8, 16), Block(16, 16, 16)])
def test_the_bounds_of_a_block_are_the_full_costings_parts(arch, case, ofm_block):
    # costing prices a block alternative in full only when these can beat the best block: the weight
    # reads must be exactly those of the full costing, and the least cycles never above its total
    op, weights, stripes = _BOUND_CASES[case]
    query = dataclasses.replace(_query(op, weights), block=BlockChoice(ofm_block, ofm_block), stripes=stripes)
    memo = CostMemo()
    for m in (None, memo, memo):
        cost = op_cost(query, arch, memo=m)
        reads = weight_read_bytes(query, memo=m)
        assert reads == weight_read_total(cost.bytes) > 0
        assert datapath_cycles(query, arch, memo=m) == cost.op_cycles <= cost.total_cycles
        least = least_cycles(query, arch, memo=m, most_weight_read_bytes=reads)
        assert least is not None and cost.op_cycles <= least <= round(cost.total_cycles)
        # the bound is the memories' access where they, not the datapath, take longest
        assert least == max(cost.op_cycles, round(max(a for a in cost.access_cycles.values())))
        assert least_cycles(query, arch, memo=m, most_weight_read_bytes=reads - 1) is None
