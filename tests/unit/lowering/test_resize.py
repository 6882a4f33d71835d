"""RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR lowering: x2 nearest upscaling steps on pooling ops."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.cost import BlockChoice, CostQuery, Operand, op_cost
from npuplan.hw import build_architecture
from npuplan.hw.block_config import choose_block_config
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import BlockType, CpuOp, LoweredGraph, NpuOp, Padding, Resampling
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.resize import half_pixel_kernels
from npuplan.options import PlanOptions

from ._build import const, fm, graph, model, op

ARCH = build_architecture(PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                                      memory_mode="Shared_Sram"))


def resize(kind: str, ifm_hw: tuple[int, int], ofm_hw: tuple[int, int], *, corners: bool = False,
           half_pixel: bool = False, c: int = 8) -> LoweredGraph:
    x, y = fm("x", (1, *ifm_hw, c)), fm("y", (1, *ofm_hw, c))
    size = const("size", list(ofm_hw), DataType.INT32, None)
    r = op(f"RESIZE_{kind}", [x, size], [y], 0, align_corners=corners, half_pixel_centers=half_pixel)
    return lower(model(graph([r], [x], [y])), ARCH.accelerator)


def datapath_cycles(npu: NpuOp) -> int:
    config = choose_block_config(npu, ARCH.accelerator)
    area = MemArea.OFF_CHIP_FLASH if npu.ifm.is_constant else MemArea.SRAM
    ifm2 = None if npu.ifm2_shape is None else Operand(npu.ifm2_shape, MemArea.SRAM)
    query = CostQuery(op=npu, block=BlockChoice.of(config), ifm=Operand(npu.ifm_shape, area),
                      ofm=Operand(npu.ofm_shape, MemArea.SRAM), ifm2=ifm2)
    return op_cost(query, ARCH).op_cycles


def test_nearest_x2_is_one_upscaling_average_pool() -> None:
    (npu,) = resize("NEAREST_NEIGHBOR", (16, 16), (32, 32)).npu_ops
    assert (npu.op_type, npu.block_type, npu.resampling) == ("ResizeNearestNeighbor", BlockType.POOLING,
                                                             Resampling.NEAREST)
    assert (npu.ifm_shape.h, npu.ofm_shape.h, npu.kernel.height) == (16, 32, 1)
    # the IFM is read at 16x16 (11x22 OFM blocks from 6x11 IFM blocks): Vela 5.2.0 legacy, 6501 cycles
    assert datapath_cycles(npu) == 6501


def test_x8_is_a_chain_of_three_doublings() -> None:
    ops = resize("NEAREST_NEIGHBOR", (8, 8), (64, 64)).npu_ops
    assert [o.name for o in ops] == ["y", "y_1", "y_2"]
    assert [o.ofm_shape.h for o in ops] == [16, 32, 64] and ops[-1].ofm.name == "y"
    assert all(o.resampling is Resampling.NEAREST for o in ops) and ops[1].ifm is ops[0].ofm


def test_bilinear_last_step_averages_over_the_factor() -> None:
    ops = resize("BILINEAR", (16, 16), (64, 64)).npu_ops
    assert [o.op_type for o in ops] == ["ResizeBilinear", "ResizeBilinear"]
    assert (ops[0].kernel.height, ops[1].kernel.height, ops[1].kernel.width) == (1, 4, 4)
    assert ops[1].kernel.padding == Padding(bottom=3, right=3)
    (corners,) = resize("BILINEAR", (16, 16), (31, 31), corners=True).npu_ops
    assert corners.kernel.padding == Padding() and corners.kernel.height == 2
    (x2,) = resize("BILINEAR", (16, 16), (32, 32)).npu_ops
    assert datapath_cycles(x2) == 6774  # Vela 5.2.0 legacy, u55-128


def test_nearest_align_corners_picks_with_a_one_hot_depthwise_conv() -> None:
    (npu,) = resize("NEAREST_NEIGHBOR", (16, 16), (31, 31), corners=True).npu_ops
    assert npu.op_type == "DepthwiseConv2DBias" and npu.resampling is Resampling.NEAREST
    assert npu.weights is not None and npu.weights.shape == (1, 2, 2, 8)
    assert npu.weights[0, 1, 1].tolist() == [1] * 8 and int(np.abs(npu.weights).sum()) == 8


def test_half_pixel_bilinear_is_a_copy_and_four_phase_convs() -> None:
    ops = resize("BILINEAR", (16, 16), (32, 32), half_pixel=True).npu_ops
    assert [o.op_type for o in ops] == ["AvgPool"] + ["DepthwiseConv2DBias"] * 4
    assert all(o.ofm.name == "y" and o.ofm_shape.h == 32 and o.ofm_write_shape is not None
               and o.ofm_write_shape.h == 16 for o in ops[1:])
    assert ops[1].kernel.padding == Padding(1, 1, 0, 0) and ops[4].kernel.padding == Padding(0, 0, 1, 1)
    # phase TL of a 2x half-pixel resize: 0.75 * 0.75 of the nearest pixel
    assert half_pixel_kernels(16, 16)[0][1, 1] == pytest.approx(0.5625)


def test_1x1_ifm_is_an_add_to_zeros() -> None:
    (npu,) = resize("NEAREST_NEIGHBOR", (1, 1), (7, 7)).npu_ops
    assert (npu.op_type, npu.name) == ("Add", "y_add") and npu.ifm.is_constant and npu.ifm2 is not None
    assert npu.ifm_shape.h == 7 and npu.ifm2.name == "x"
    assert datapath_cycles(npu) == 1583  # Vela 5.2.0 legacy (zeros read from flash)


@pytest.mark.parametrize("kind, ifm_hw, ofm_hw, opts, words", [
    ("NEAREST_NEIGHBOR", (16, 16), (48, 48), {}, "must match one of the following criteria"),
    ("NEAREST_NEIGHBOR", (16, 16), (32, 64), {}, "must match one of the following criteria"),
    ("BILINEAR", (16, 16), (64, 64), {"half_pixel": True}, "For half_pixel_centers"),
])
def test_unsupported_resizes_stay_on_cpu_with_reason(kind, ifm_hw, ofm_hw, opts, words) -> None:
    lg = resize(kind, ifm_hw, ofm_hw, **opts)
    (cpu,) = lg.ops
    assert isinstance(cpu, CpuOp) and words in cpu.reason


def test_resize_to_the_same_shape_is_removed() -> None:
    x, y, z = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 4)), fm("z", (1, 8, 8, 4))
    size = const("size", [8, 8], DataType.INT32, None)
    ops = [op("RESIZE_BILINEAR", [x, size], [y], 0), op("ADD", [y, x], [z], 1)]
    lg = lower(model(graph(ops, [x], [z])), ARCH.accelerator)
    assert [o.tflite_type for o in lg.ops] == ["ADD"] and lg.removed[0][0] == "y"
