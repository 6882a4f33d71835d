"""Block-config search against Vela 5.2.0's choices, the SHRAM layout, helpers and caching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npuplan.hw.accelerator import Block, accelerator
from npuplan.hw.block_config import (
    BlockQuery,
    alternative_block_configs,
    KernelGeometry,
    Resampling,
    choose_block_config,
    find_block_config,
    ifm_area_required,
    ifm_block_for,
    least_padded_block_configs,
    query_for,
    try_block_config,
    uses_part_kernel,
)
from npuplan.hw.shram import AccType, ElementwiseUse, try_layout
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization

CASES = json.loads((Path(__file__).parent / "data" / "vela_block_configs.json").read_text())
_TYPES = {
    "Conv2DBias": BlockType.CONV,
    "DepthwiseConv2DBias": BlockType.DEPTHWISE,
    "FullyConnected": BlockType.VECTOR_PRODUCT,
    "AvgPool": BlockType.POOLING,
    "MaxPool": BlockType.POOLING,
    "ReduceSum": BlockType.REDUCE_SUM,
}
U55_128 = accelerator("ethos-u55-128")
U65_256 = accelerator("ethos-u65-256")
Q = Quantization(scale=(0.1,), zero_point=(0,))


def _query(case: dict) -> BlockQuery:
    return BlockQuery(
        block_type=_TYPES.get(case["type"], BlockType.ELEMENTWISE),
        ofm=Shape4D(*case["ofm"]),
        ifm=Shape4D(*case["ifm"]),
        ifm2=Shape4D(*case["ifm2"]) if case.get("ifm2") else None,
        kernel=KernelGeometry(*case["kernel"]),
        uses_scalar=case.get("uses_scalar", False),
        lut_banks=case.get("lut_banks", 0),
    )


@pytest.mark.parametrize("model", ["ds_cnn_kws", "mobilenet_v1_025_96", "mobilenet_v3_small_224"])
@pytest.mark.parametrize("accel_name", ["ethos-u55-128", "ethos-u65-256", "ethos-u55-64"])
def test_matches_vela_schedule(model: str, accel_name: str) -> None:
    cases = [c for c in CASES if c["model"] == model and c["accel"] == accel_name]
    assert len(cases) > 40
    accel = accelerator(accel_name)
    wrong = []
    for case in cases:
        config = find_block_config(_query(case), accel)
        got = list(config.vela_repr) if config else None
        if got != case["vela"]:
            wrong.append((case["name"], case["vela"], got))
    assert not wrong, wrong[:5]


def _t(name: str, shape: tuple[int, ...], dtype: DataType = DataType.INT8) -> Tensor:
    return Tensor(name, shape, dtype, Q)


def _op(block_type: BlockType, ifm: tuple[int, ...], ofm: tuple[int, ...], kernel: Kernel = Kernel(), **kw: object) -> NpuOp:
    return NpuOp(
        name="op", tflite_type="X", op_type="X", block_type=block_type,
        ifm=_t("i", ifm), ifm_shape=Shape4D.of(ifm), ofm=_t("o", ofm), ofm_shape=Shape4D.of(ofm),
        kernel=kernel, **kw,  # type: ignore[arg-type]
    )


def test_ds_cnn_ops_from_npu_ops() -> None:
    pw = _op(BlockType.CONV, (1, 25, 5, 64), (1, 25, 5, 64))
    assert choose_block_config(pw, U55_128).vela_repr == (9, 6, 32, 32)
    dw = _op(BlockType.DEPTHWISE, (1, 25, 5, 64), (1, 25, 5, 64), Kernel(3, 3))
    assert choose_block_config(dw, U55_128).vela_repr == (14, 6, 16, 16)
    pool = _op(BlockType.POOLING, (1, 25, 5, 64), (1, 1, 1, 64), Kernel(25, 5))
    assert choose_block_config(pool, U55_128).vela_repr == (1, 2, 64, 64)
    fc = _op(BlockType.VECTOR_PRODUCT, (1, 64), (1, 12))
    assert choose_block_config(fc, U55_128).vela_repr == (1, 2, 32, 16)


def test_u55_128_micro_block_is_one_high_two_wide() -> None:
    config = choose_block_config(_op(BlockType.CONV, (1, 25, 5, 64), (1, 25, 5, 64)), U55_128)
    assert config.ofm_block.width % 2 == 0
    assert U55_128.ofm_ublock == Block(1, 2, 8)


def test_stripe_box_reduces_ifm_and_changes_choice() -> None:
    op = _op(BlockType.CONV, (1, 48, 48, 16), (1, 48, 48, 32), Kernel(3, 3))
    q = query_for(op, ofm_box=Shape4D(1, 4, 48, 32))
    assert q.ifm == Shape4D(1, 6, 48, 16)
    stripe = choose_block_config(op, U55_128, ofm_box=Shape4D(1, 4, 48, 32))
    assert stripe.ofm_block.height <= 4


def test_layout_elementwise_and_accumulators() -> None:
    layout = try_layout(U55_128, ElementwiseUse.NONE, Block(9, 6, 32), Block(9, 6, 32), 8, AccType.ACC32, 0)
    assert layout is not None
    assert layout.ib_start == 2 and layout.lut_start == 22  # 24 banks, 2 reserved at the top
    assert layout.ib_end <= layout.ab_start < layout.lut_start
    ew = try_layout(U55_128, ElementwiseUse.FULL, Block(4, 4, 16), Block(4, 4, 16), 8, AccType.ACC32, 0)
    assert ew is not None and ew.ib_end == ew.ab_start == ew.lut_start  # no accumulators
    too_big = try_layout(U55_128, ElementwiseUse.NONE, Block(32, 64, 128), Block(32, 64, 128), 8, AccType.ACC32, 0)
    assert too_big is None


def test_16_bit_scaled_uses_acc40_and_lut_reserves_banks() -> None:
    q8 = BlockQuery(BlockType.CONV, Shape4D(1, 8, 8, 16), Shape4D(1, 8, 8, 16), None, KernelGeometry())
    q16 = BlockQuery(BlockType.CONV, Shape4D(1, 8, 8, 16), Shape4D(1, 8, 8, 16), None, KernelGeometry(), ifm_bits=16)
    c8, c16 = find_block_config(q8, U55_128), find_block_config(q16, U55_128)
    assert c8 is not None and c16 is not None
    assert (c8.acc_type, c16.acc_type) == (AccType.ACC32, AccType.ACC40)
    u55_64 = accelerator("ethos-u55-64")  # 16 banks, nothing reserved at the top unless a LUT is used
    lut = BlockQuery(BlockType.ELEMENTWISE, Shape4D(1, 8, 8, 16), Shape4D(1, 8, 8, 16), None, KernelGeometry(), lut_banks=2)
    config = find_block_config(lut, u55_64)
    assert config is not None and config.layout.lut_start == 14


def test_helpers() -> None:
    k = KernelGeometry(3, 3, 2, 2)
    assert ifm_area_required(4, 4, k, Resampling.NONE) == (9, 9)
    assert ifm_area_required(4, 4, KernelGeometry(), Resampling.NEAREST) == (3, 3)
    assert ifm_block_for(Block(4, 4, 16), k, U55_128) == Block(9, 10, 16)  # width rounded to the 2-wide ublock
    big = KernelGeometry(16, 16)
    assert ifm_block_for(Block(2, 2, 8), big, U65_256) == Block(10, 10, 8)  # sub-kernel limit 8x8
    assert uses_part_kernel(8, 8, KernelGeometry(3, 3))
    assert not uses_part_kernel(64, 8, KernelGeometry(1, 1))


def test_try_block_config_validates_and_fits() -> None:
    q = BlockQuery(BlockType.CONV, Shape4D(1, 25, 5, 64), Shape4D(1, 25, 5, 64), None, KernelGeometry())
    assert try_block_config(q, U55_128, Block(9, 6, 32), is_partkernel=False) is not None
    assert try_block_config(q, U55_128, Block(9, 5, 32), is_partkernel=False) is None  # width not a ublock multiple
    assert try_block_config(q, U55_128, Block(32, 64, 128), is_partkernel=False) is None  # does not fit


def test_cached_on_geometry_not_identity() -> None:
    a = _op(BlockType.CONV, (1, 20, 20, 8), (1, 20, 20, 8))
    b = _op(BlockType.CONV, (1, 20, 20, 8), (1, 20, 20, 8))
    assert a is not b and choose_block_config(a, U65_256) is choose_block_config(b, U65_256)


def test_lut_activation_and_scalar_detected_from_op() -> None:
    op = NpuOp(
        name="hs", tflite_type="HARD_SWISH", op_type="Add", block_type=BlockType.ELEMENTWISE,
        ifm=_t("i", (1, 14, 14, 96)), ifm_shape=Shape4D(1, 14, 14, 96), ofm=_t("o", (1, 14, 14, 96)),
        ofm_shape=Shape4D(1, 14, 14, 96), ifm2=_t("s", ()), ifm2_shape=Shape4D(), activation=Activation.LUT,
    )
    q = query_for(op)
    assert q.lut_banks == 2 and q.uses_scalar
    assert choose_block_config(op, accelerator("ethos-u55-64")).vela_repr == (8, 12, 64, 64)


def _search_setup(case):  # type: ignore[no-untyped-def]
    """A case's accelerator, query, traits, row and column axes, SHRAM budget and block depths, as
    the block search lists them."""
    from npuplan.hw.block_config import _axes, _depths, _traits
    from npuplan.hw.shram import ShramBudget
    from npuplan.units import round_up as up

    accel, q = accelerator(case["accel"]), _query(case)
    t = _traits(q, accel)
    rows, cols = _axes(q, accel)
    budget = ShramBudget.of(accel, t.ew, q.ifm_bits, t.acc, q.lut_banks)
    depths = _depths(q, accel, up(min(q.ofm.c, accel.ofm_block_max.depth), accel.ofm_ublock.depth))
    return accel, q, t, rows, cols, budget, depths


def test_cost_floor_bounds_every_row_it_may_skip() -> None:
    """The search skips costing a row whose floor exceeds the best cost so far: the floor must be
    no more than any block's cost in the row, or the block chosen could change."""
    from npuplan.hw.block_config import _cost_floor, _fitting, _floors, _relative_costs

    checked = 0
    for case in CASES[::7]:
        accel, q, t, rows, cols, budget, depths = _search_setup(case)
        floors = _floors(q.ofm.w, q.kernel, accel, q.resampling)
        for r in _fitting(q, t, budget, rows, cols, depths):
            costs = _relative_costs(q, t, r.row, r.cols, r.depth, r.ifm_depth)
            assert _cost_floor(q, t, floors, r) <= min(costs, default=float("inf"))
            checked += 1
    assert checked > 1000


def test_least_padded_blocks_tile_the_map_that_vela_s_choice_pads() -> None:
    """A 1x1 pool over 16x16x6 on the U65-512: Vela's score ties every block that covers the map
    (the blocks along an axis are not rounded up) and its search keeps a 14x14 block: four blocks,
    3x the map's elements computed. The least padded alternatives tile it exactly, 8 deep."""
    accel = accelerator("ethos-u65-512")
    shape = Shape4D(1, 16, 16, 6)
    q = BlockQuery(block_type=BlockType.POOLING, ofm=shape, ifm=shape, ifm2=None,
                   kernel=KernelGeometry.of(Kernel(1, 1, 1, 1)))
    vela = find_block_config(q, accel)
    assert vela is not None and 16 % vela.ofm_block.height and 16 % vela.ofm_block.width  # pads both axes
    found = least_padded_block_configs(q, accel)
    assert found
    for config in found:
        b = config.ofm_block
        assert 16 % b.height == 0 and 16 % b.width == 0 and b.depth == 8


def test_alternatives_for_an_op_with_weights_read_the_same_stream() -> None:
    """ds_cnn's 3x3 depthwise (25x5x64): Vela keeps 14x6x16, which pads 25 rows to 28. The blocks
    priced besides it are as deep and traverse the kernel alike (the weight stream is encoded per
    block depth and traversal, so it is the stream the weight plan was sized for), and tile the
    map with fewer padded elements."""
    import numpy as np

    dw = _op(BlockType.DEPTHWISE, (1, 25, 5, 64), (1, 25, 5, 64), Kernel(3, 3),
             weights=np.ones((1, 3, 3, 64), dtype=np.int8))
    vela = choose_block_config(dw, U55_128)
    found = alternative_block_configs(dw, U55_128)
    assert found
    # Vela's block covers the map in two blocks, so it is also priced cut in half (7x4: whole
    # micro-blocks); the others tile the map with fewer padded elements
    cut = [c for c in found if c.ofm_block.height == 7 and c.ofm_block.width == 4]
    assert len(cut) == 1
    for config in found:
        assert config.ofm_block.depth == vela.ofm_block.depth and config.is_partkernel == vela.is_partkernel
        assert config.ifm_block.depth == vela.ifm_block.depth
        b = config.ofm_block
        padded = -(-25 // b.height) * b.height * -(-5 // b.width) * b.width
        assert config in cut or padded < 28 * 6


def test_an_op_with_weights_in_few_blocks_is_also_priced_in_smaller_blocks() -> None:
    """A 16x16x8 pointwise convolution fits one 16x16 block, whose first IFM fill and last OFM
    drain overlap nothing: its block is also priced cut to 8x8, as deep and alike in traversal (the
    same weight stream); a stripe of it (a cascade's) is not cut, nor a map of many blocks."""
    import numpy as np

    pw = _op(BlockType.CONV, (1, 16, 16, 8), (1, 16, 16, 8), Kernel(1, 1), weights=np.ones((8, 1, 1, 8), dtype=np.int8))
    vela = choose_block_config(pw, U55_128)
    cut = [c for c in alternative_block_configs(pw, U55_128) if c.ofm_block.height < vela.ofm_block.height]
    assert [(c.ofm_block.height, c.ofm_block.width, c.ofm_block.depth) for c in cut] == [(8, 8, vela.ofm_block.depth)]
    assert cut[0].is_partkernel == vela.is_partkernel
    stripe = alternative_block_configs(pw, U55_128, ofm_box=Shape4D(1, 8, 16, 8))
    assert all(c.ofm_block.height >= choose_block_config(pw, U55_128, ofm_box=Shape4D(1, 8, 16, 8)).ofm_block.height
               for c in stripe)
    wide = _op(BlockType.CONV, (1, 64, 64, 8), (1, 64, 64, 8), Kernel(1, 1), weights=np.ones((8, 1, 1, 8), dtype=np.int8))
    assert not alternative_block_configs(wide, U55_128)
    # without ``cut`` (Size's oracle) no block is cut
    assert all(c.ofm_block.height >= vela.ofm_block.height for c in alternative_block_configs(pw, U55_128, cut=False))


def test_only_performance_oracles_price_cut_blocks_and_charge_their_rereads() -> None:
    import numpy as np

    from npuplan.hw import build_architecture
    from npuplan.options import Optimise, PlanOptions
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    arch = build_architecture(PlanOptions(accelerator_config="ethos-u55-128"))
    pw = _op(BlockType.CONV, (1, 16, 16, 8), (1, 16, 16, 8), Kernel(1, 1), weights=np.ones((8, 1, 1, 8), dtype=np.int8))
    vela = choose_block_config(pw, U55_128)
    perf, size = default_oracle(arch), default_oracle(arch, optimise=Optimise.SIZE)
    assert perf.charges_weight_rereads() and not size.charges_weight_rereads()
    smaller = [c for c in perf.block_alternatives(pw, pw.ofm_shape) if c.ofm_block.height < vela.ofm_block.height]
    assert smaller and not [c for c in size.block_alternatives(pw, pw.ofm_shape) if c in smaller]


def test_the_rows_of_one_depth_are_those_every_depth_finds() -> None:
    """``find_block_config`` and ``least_padded_block_configs`` share one listing of the fitting
    rows at every depth (``_scored_rows``): at each depth they must be the rows ``_fitting`` finds
    when asked for that depth alone (what the least padded blocks of one depth were chosen from)."""
    from npuplan.hw.block_config import _fitting, _scored_rows

    checked = 0
    for case in CASES[::5]:
        accel, q, t, rows, cols, budget, depths = _search_setup(case)
        listed = _scored_rows(q, accel).rows
        for depth in depths:
            alone = list(_fitting(q, t, budget, rows, cols, [depth]))
            assert [r for r in listed if r.depth == depth] == alone
            checked += len(alone)
    assert checked > 1000
