"""TensorFlow's SPACE_TO_BATCH_ND -> conv -> BATCH_TO_SPACE_ND becomes one dilated convolution."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Padding
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import Q, WQ, const, fm, graph, model, op


def _pattern(crops: list[list[int]], out_hw: tuple[int, int]):
    x, s2b, mid, y = fm("x", (1, 16, 16, 4)), fm("s2b", (4, 10, 10, 4), quant=Q), fm("mid", (4, 8, 8, 8)), \
        fm("y", (1, *out_hw, 8))
    block = const("block", [2, 2], DataType.INT32, None)
    pads = const("pads", [[2, 2], [2, 2]], DataType.INT32, None)
    w = const("w", np.ones((8, 3, 3, 4)), DataType.INT8, WQ)
    b = const("b", np.zeros(8), DataType.INT32, None)
    ops = [
        op("SPACE_TO_BATCH_ND", [x, block, pads], [s2b], 0),
        op("CONV_2D", [s2b, w, b], [mid], 1, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
           dilation_w_factor=1, fused_activation_function="NONE"),
        op("BATCH_TO_SPACE_ND", [mid, const("block2", [2, 2], DataType.INT32, None),
                                 const("crops", crops, DataType.INT32, None)], [y], 2),
    ]
    return lower(model(graph(ops, [x], [y])), accelerator("ethos-u55-128"))


def test_space_to_batch_conv_batch_to_space_is_one_dilated_conv() -> None:
    lg = _pattern([[0, 0], [0, 0]], (16, 16))
    (conv,) = lg.npu_ops
    assert not lg.cpu_ops and (conv.kernel.dilation_y, conv.kernel.dilation_x) == (2, 2)
    assert conv.kernel.padding == Padding(2, 2, 2, 2) and conv.ifm.name == "x" and conv.ofm.name == "y"
    assert sum("folded into the dilated convolution" in r for _, r in lg.removed) == 2


def test_crops_reduce_the_padding_and_a_mismatch_is_left_alone() -> None:
    (conv,) = _pattern([[0, 1], [1, 0]], (15, 15)).npu_ops
    assert conv.kernel.padding == Padding(top=2, left=1, bottom=1, right=2)
    lg = _pattern([[0, 0], [0, 0]], (14, 14))  # shapes that do not add up: not rewritten
    assert {"SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"} <= {c.tflite_type for c in lg.cpu_ops}
