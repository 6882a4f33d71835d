"""TensorFlow's SPACE_TO_BATCH_ND -> conv -> BATCH_TO_SPACE_ND becomes one dilated convolution."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Padding
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import Q, WQ, const, fm, graph, model, op


def _pattern(crops: list[list[int]], out_hw: tuple[int, int], rates: tuple[int, int] = (2, 2)):
    """The pattern with blocks ``rates`` over a 16x16 map padded by ``rate`` on each side."""
    rh, rw = rates
    s2b_h, s2b_w = (16 + 2 * rh) // rh, (16 + 2 * rw) // rw
    x, s2b = fm("x", (1, 16, 16, 4)), fm("s2b", (rh * rw, s2b_h, s2b_w, 4), quant=Q)
    mid, y = fm("mid", (rh * rw, s2b_h - 2, s2b_w - 2, 8)), fm("y", (1, *out_hw, 8))
    block = const("block", list(rates), DataType.INT32, None)
    pads = const("pads", [[rh, rh], [rw, rw]], DataType.INT32, None)
    w = const("w", np.ones((8, 3, 3, 4)), DataType.INT8, WQ)
    b = const("b", np.zeros(8), DataType.INT32, None)
    ops = [
        op("SPACE_TO_BATCH_ND", [x, block, pads], [s2b], 0),
        op("CONV_2D", [s2b, w, b], [mid], 1, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
           dilation_w_factor=1, fused_activation_function="NONE"),
        op("BATCH_TO_SPACE_ND", [mid, const("block2", list(rates), DataType.INT32, None),
                                 const("crops", crops, DataType.INT32, None)], [y], 2),
    ]
    return lower(model(graph(ops, [x], [y])), accelerator("ethos-u55-128"))


def test_space_to_batch_conv_batch_to_space_is_one_dilated_conv() -> None:
    lg = _pattern([[0, 0], [0, 0]], (16, 16))
    (conv,) = lg.npu_ops
    assert not lg.cpu_ops and (conv.kernel.dilation_y, conv.kernel.dilation_x) == (2, 2)
    assert conv.kernel.padding == Padding(2, 2, 2, 2) and conv.ifm.name == "x" and conv.ofm.name == "y"
    assert sum("folded into the dilated convolution" in r for _, r in lg.removed) == 2


def test_blocks_that_differ_per_axis_dilate_each_axis_by_its_own() -> None:
    """Keras' ``Conv2D(dilation_rate=(2, 1))``: the block is (2, 1), the height alone dilated."""
    lg = _pattern([[0, 0], [0, 0]], (16, 16), rates=(2, 1))  # 16 + 4 - 2 * 2 rows, 16 + 2 - 2 columns
    (conv,) = lg.npu_ops
    assert not lg.cpu_ops and (conv.kernel.dilation_y, conv.kernel.dilation_x) == (2, 1)
    assert conv.kernel.padding == Padding(2, 1, 2, 1) and conv.ofm_shape.as_list() == [1, 16, 16, 8]


def test_crops_reduce_the_padding_and_a_mismatch_is_left_alone() -> None:
    (conv,) = _pattern([[0, 1], [1, 0]], (15, 15)).npu_ops
    assert conv.kernel.padding == Padding(top=2, left=1, bottom=1, right=2)
    lg = _pattern([[0, 0], [0, 0]], (14, 14))  # shapes that do not add up: not rewritten
    assert {"SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"} <= {c.tflite_type for c in lg.cpu_ops}


def _conv1d_pattern(rate: int, pads: list[int], crops: list[int], back_rate: int = 0):
    """Keras' dilated Conv1D: 3-D SPACE_TO_BATCH_ND, EXPAND_DIMS, a 1 x 3 VALID conv, RESHAPE to
    3-D, BATCH_TO_SPACE_ND (the batch of the moved tensors is read as 1, as TFLite stores it)."""
    padded = 30 + sum(pads)
    x, y = fm("x", (1, 30, 4)), fm("y", (1, padded - 2 * rate - sum(crops), 8))
    s2b, seen = fm("s2b", (1, padded // rate, 4)), fm("seen", (1, 1, padded // rate, 4))
    mid, back = fm("mid", (1, 1, padded // rate - 2, 8)), fm("back", (1, padded // rate - 2, 8))
    w = const("w", np.ones((8, 1, 3, 4)), DataType.INT8, WQ)
    ops = [
        op("SPACE_TO_BATCH_ND", [x, const("block", [rate], DataType.INT32, None),
                                 const("pads", [pads], DataType.INT32, None)], [s2b], 0),
        op("EXPAND_DIMS", [s2b, const("axis", -3, DataType.INT32, None)], [seen], 1),
        op("CONV_2D", [seen, w, const("b", np.zeros(8), DataType.INT32, None)], [mid], 2, padding="VALID",
           stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE"),
        op("RESHAPE", [mid, const("shape", [-1, padded // rate - 2, 8], DataType.INT32, None)], [back], 3),
        op("BATCH_TO_SPACE_ND", [back, const("block2", [back_rate or rate], DataType.INT32, None),
                                 const("crops", [crops], DataType.INT32, None)], [y], 4),
    ]
    return lower(model(graph(ops, [x], [y])), accelerator("ethos-u55-128"))


def test_dilated_conv1d_pattern_is_one_conv_dilated_along_the_width() -> None:
    lg = _conv1d_pattern(3, [3, 3], [0, 0])  # padding "same": 30 -> 30
    (conv,) = lg.npu_ops
    assert not lg.cpu_ops and (conv.kernel.dilated_height, conv.kernel.dilated_width) == (1, 7)
    assert conv.kernel.padding == Padding(0, 3, 0, 3) and conv.ifm.name == "x" and conv.ofm.name == "y"
    assert conv.ifm_shape.as_list() == [1, 1, 30, 4] and conv.ofm_shape.as_list() == [1, 1, 30, 8]
    (conv,) = _conv1d_pattern(9, [9, 15], [0, 6]).npu_ops  # 30 + 24 padded to a multiple of 9, cropped back
    assert conv.kernel.padding == Padding(0, 9, 0, 9) and conv.kernel.dilated_width == 19
    lg = _conv1d_pattern(3, [3, 3], [0, 0], back_rate=2)  # blocks that differ: not the pattern
    assert {"SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"} <= {c.tflite_type for c in lg.cpu_ops}
