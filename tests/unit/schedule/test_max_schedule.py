from __future__ import annotations

from dataclasses import replace

import pytest

from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.options import PlanOptions, Search
from npuplan.schedule import Schedule, WeightBuffering, plan_schedule

from .chains import conv_chain

SHARED = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                     memory_mode="Shared_Sram")


def _plan(options: PlanOptions = SHARED, layers=((16, 1), (32, 2), (32, 1), (64, 2))) -> Schedule:
    return plan_schedule(conv_chain(list(layers)), build_architecture(options), options)


def test_max_schedule_keeps_whole_feature_maps_and_reports_usage() -> None:
    s = _plan(replace(SHARED, search=Search.CASCADE))  # the Pareto search may cascade to hide weight DMA
    assert [o.ofm_stripe for o in s.ops] == [o.op.ofm_shape for o in s.ops]
    assert all(o.cascade_id == -1 for o in s.ops)
    # every op's usage holds at least its whole IFM and OFM
    for o in s.ops:
        assert o.sram_usage_bytes >= o.op.ifm_shape.elements + o.op.ofm_shape.elements
    assert s.sram_peak_bytes >= max(o.sram_usage_bytes for o in s.ops)
    assert s.placements["t1"].size_bytes == 16 * 16 * 32


def test_weights_are_buffered_in_fast_storage_when_it_pays() -> None:
    s = _plan()
    assert any(o.weight_buffering is not WeightBuffering.NONE for o in s.ops)
    for o in s.ops:
        if o.weight_buffering is WeightBuffering.NONE:
            assert o.weight_buffer_bytes == 0


def test_tiny_budget_raises_infeasible_naming_the_op() -> None:
    tiny = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                       memory_mode="Shared_Sram", arena_cache_size_bytes=4096)
    with pytest.raises(InfeasiblePlan) as err:
        _plan(tiny)
    assert err.value.budget_bytes == 4096
    assert err.value.needed_bytes > 4096
    assert "input" in err.value.why or "output" in err.value.why


def test_a_pad_fill_is_costed_on_the_rows_it_writes_not_the_whole_output() -> None:
    """Vela costs an op that writes at an offset on its write shape (a 1-row fill is cheap)."""
    from dataclasses import replace as copy_with

    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
    from npuplan.ir.shape import Shape4D

    from .chains import fm

    x, out = fm("x", 32, 32, 16), fm("padded", 34, 34, 16)
    main = NpuOp(name="main", tflite_type="PAD", op_type="AvgPool", block_type=BlockType.POOLING, ifm=x,
                 ifm_shape=Shape4D.of(x.shape), ofm=out, ofm_shape=Shape4D.of(out.shape), pool=PoolKind.AVERAGE,
                 ofm_write_offset=Shape4D(0, 1, 1, 0), ofm_write_shape=Shape4D.of(x.shape))
    whole = copy_with(main, name="whole", ofm_write_shape=None)

    def cycles(op: NpuOp) -> float:
        schedule = plan_schedule(LoweredGraph("pad", (op,), (x,), (out,)), build_architecture(SHARED), SHARED)
        return float(schedule.ops[0].cost.total_cycles)

    assert cycles(main) < cycles(whole)


def test_the_fastest_candidate_goes_first_and_exact_ties_by_smaller_peak() -> None:
    """Performance takes the fastest plan: a candidate slower by any amount goes after it, though
    its peak is smaller (a tolerance lets a bigger budget plan slower, bench/budget_sweep.py)."""
    from npuplan.schedule.search.planner import EQUAL_SPEED_FRACTION, order_by_speed

    assert EQUAL_SPEED_FRACTION == 0.0
    scored = [(1000, 9000, 0), (1001, 5000, 1), (1100, 1000, 2), (1000, 7000, 3)]
    assert order_by_speed(scored) == [3, 0, 1, 2]
    assert order_by_speed([]) == []


def test_a_concatenation_copy_is_costed_on_the_channels_it_writes() -> None:
    """A copy writing 8 of 24 channels costs a third of the elements (Vela: 2048 MACs, 2413 cycles
    for each copy of a 16x16x8 slice into a 16x16x24 concatenation on ethos-u55-128)."""
    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
    from npuplan.ir.shape import Shape4D

    from .chains import fm

    x, out = fm("x", 16, 16, 8), fm("cat", 16, 16, 24)
    copy = NpuOp(name="cat0_avgpool", tflite_type="CONCATENATION", op_type="AvgPool", block_type=BlockType.POOLING,
                 ifm=x, ifm_shape=Shape4D.of(x.shape), ofm=out, ofm_shape=Shape4D.of(out.shape),
                 pool=PoolKind.AVERAGE, ofm_write_offset=Shape4D(0, 0, 0, 8), ofm_write_shape=Shape4D.of(x.shape))
    schedule = plan_schedule(LoweredGraph("cat", (copy,), (x,), (out,)), build_architecture(SHARED), SHARED)
    assert schedule.ops[0].cost.nn_macs == 2048


def test_a_copy_into_an_nhwc_slice_in_dram_gets_blocks_as_deep_as_its_slice() -> None:
    """A copy writing 8 of 24 channels of a network output in DRAM (U65 Dedicated_Sram): blocks
    16 deep (sized by the whole map, Vela legacy) write 16-byte bursts to each pixel's 8 channels,
    8x the burst-scaled bytes of 8-deep blocks (sized by the slice, as Vela's default core): the
    plan prices both and keeps the cheaper (op_concat_channels on U65-512: 4369 -> 1664 cycles a copy)."""
    from npuplan.api import make_options
    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
    from npuplan.ir.shape import Shape4D
    from npuplan.schedule.pricing.cost_adapter import CostModelOracle, default_oracle

    from .chains import fm

    options = make_options(accelerator_config="ethos-u65-512", system_config="Ethos_U65_High_End",
                           memory_mode="Dedicated_Sram")
    arch = build_architecture(options)
    x, out = fm("x", 16, 16, 8), fm("cat", 16, 16, 24)
    copy = NpuOp(name="cat1_avgpool", tflite_type="CONCATENATION", op_type="AvgPool", block_type=BlockType.POOLING,
                 ifm=x, ifm_shape=Shape4D.of(x.shape), ofm=out, ofm_shape=Shape4D.of(x.shape),
                 pool=PoolKind.AVERAGE, ofm_write_offset=Shape4D(0, 0, 0, 8), ofm_write_shape=Shape4D.of(x.shape))
    oracle = default_oracle(arch)
    assert oracle.block_config(copy, copy.ofm_shape).ofm_block.depth == 16  # sized by the 24-deep map
    assert oracle.block_alternatives(copy, copy.ofm_shape)[0].ofm_block.depth == 8
    graph = LoweredGraph("cat", (copy,), (x,), (out,))
    schedule = plan_schedule(graph, arch, options, oracle=oracle)
    assert schedule.ops[0].block_config.ofm_block.depth == 8

    class MapSized(type(oracle)):  # type: ignore[misc]
        def block_alternatives(self, op, ofm_stripe):
            return ()

    legacy = plan_schedule(graph, arch, options, oracle=MapSized(CostModelOracle(arch)))
    assert legacy.ops[0].block_config.ofm_block.depth == 16
    assert schedule.ops[0].cost.total_cycles < 0.7 * legacy.ops[0].cost.total_cycles


def test_an_op_with_weights_keeps_blocks_that_read_its_weights_no_more_often() -> None:
    """ds_cnn's 3x3 depthwise (25x5x64) on the U55-128: Vela's 14x6x16 block reads the weight
    stream once per block row (twice); a 5x6x16 block pads no rows but reads it five times. Its own
    cycles are lower (its flash reads hide under the datapath), yet those reads compete with the
    next op's weight prefetch, so the planner does not take it."""
    import numpy as np

    from npuplan.hw.accelerator import Block
    from npuplan.hw.block_config import query_for, try_block_config
    from npuplan.ir.lowered import BlockType, Kernel, LoweredGraph, NpuOp
    from npuplan.ir.shape import Shape4D
    from npuplan.schedule.pricing.cost_adapter import CostModelOracle, default_oracle

    from .chains import fm

    arch = build_architecture(SHARED)
    x, out = fm("x", 25, 5, 64), fm("y", 25, 5, 64)
    dw = NpuOp(name="dw", tflite_type="DEPTHWISE_CONV_2D", op_type="DepthwiseConv2DBias",
               block_type=BlockType.DEPTHWISE, ifm=x, ifm_shape=Shape4D.of(x.shape), ofm=out,
               ofm_shape=Shape4D.of(out.shape), kernel=Kernel(3, 3, padding=_same_3x3()),
               weights=np.random.default_rng(0).integers(-127, 127, (1, 3, 3, 64), dtype=np.int8),
               bias=np.zeros(64, dtype=np.int32))
    oracle = default_oracle(arch)
    vela = oracle.block_config(dw, dw.ofm_shape)
    assert vela.ofm_block == Block(14, 6, 16)
    five = try_block_config(query_for(dw), arch.accelerator, Block(5, 6, 16), is_partkernel=vela.is_partkernel)
    assert five is not None

    class FiveRows(type(oracle)):  # type: ignore[misc]
        def block_alternatives(self, op, ofm_stripe):
            return (five,)

    graph = LoweredGraph("dw", (dw,), (x,), (out,))
    planned = plan_schedule(graph, arch, SHARED, oracle=FiveRows(CostModelOracle(arch)))
    assert planned.ops[0].block_config.ofm_block == Block(14, 6, 16)
    alone = CostModelOracle(arch)
    assert alone.weight_read_bytes(planned.ops[0].cost) > 0


def _same_3x3():
    from npuplan.ir.lowered import Padding

    return Padding(1, 1, 1, 1)


def test_a_small_copy_runs_in_small_blocks() -> None:
    """A 1x1 average pool over a 16x16x8 map (a rescale; op_unpack_pack's copies, int16_ops_16's
    rescales): Vela's block scores keep a 7x14 block (four blocks, 2.3x the map's elements), the
    least padded ones one or two big blocks whose input fill and output drain nothing overlaps.
    The plan also prices small blocks (``small_block_configs``) and keeps one: faster."""
    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
    from npuplan.ir.shape import Shape4D
    from npuplan.hw.block_config import query_for, small_block_configs
    from npuplan.schedule.pricing.cost_adapter import CostModelOracle

    from .chains import fm

    arch = build_architecture(SHARED)
    x, out = fm("x", 16, 16, 8), fm("y", 16, 16, 8)
    copy = NpuOp(name="rescale", tflite_type="QUANTIZE", op_type="AvgPool", block_type=BlockType.POOLING,
                 ifm=x, ifm_shape=Shape4D.of(x.shape), ofm=out, ofm_shape=Shape4D.of(out.shape), pool=PoolKind.AVERAGE)
    graph = LoweredGraph("q", (copy,), (x,), (out,))
    oracle = CostModelOracle(arch)
    schedule = plan_schedule(graph, arch, SHARED, oracle=oracle)
    chosen = schedule.ops[0].block_config
    assert chosen in small_block_configs(query_for(copy), arch.accelerator)
    assert chosen.ofm_block.height * chosen.ofm_block.width < 16 * 16 // 4

    class Large(CostModelOracle):
        def block_alternatives(self, op, ofm_stripe):
            small = small_block_configs(query_for(op), arch.accelerator)
            return tuple(b for b in super().block_alternatives(op, ofm_stripe) if b not in small)

    large = plan_schedule(graph, arch, SHARED, oracle=Large(arch))
    assert schedule.ops[0].cost.total_cycles < 0.9 * large.ops[0].cost.total_cycles
