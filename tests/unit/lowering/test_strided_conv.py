"""Folding a strided first convolution's width stride into depth (Vela's rewrite)."""

from __future__ import annotations

import numpy as np

from npuplan.lowering.convert import convert_conv
from npuplan.lowering.strided_conv import filter_padding, hw_padding_total, resize_factor
from npuplan.ir.types import DataType
from tests.unit.lowering._build import const, conv, fm, op


def test_ds_cnn_first_conv_becomes_stride_1_over_two_channels() -> None:
    # ds_cnn_kws: IFM 49x10x1, kernel 10x4, stride 2, SAME -> IFM 49x5x2, kernel 10x3, stride_x 1
    ifm, ofm = fm("in", (1, 49, 10, 1)), fm("out", (1, 25, 5, 64))
    w = const("w", np.arange(64 * 10 * 4).reshape(64, 10, 4, 1) % 7)
    b = const("b", np.zeros(64), DataType.INT32, None)
    source = op("CONV_2D", [ifm, w, b], [ofm], 0, padding="SAME", stride_h=2, stride_w=2,
                dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")
    (npu,) = convert_conv(source)
    assert (npu.ifm_shape.h, npu.ifm_shape.w, npu.ifm_shape.c) == (49, 5, 2)
    assert npu.weights.shape == (64, 10, 3, 2)
    assert (npu.kernel.stride_y, npu.kernel.stride_x) == (2, 1)
    assert (npu.kernel.padding.left, npu.kernel.padding.right) == (1, 1)
    # one zero column each side, then pairs of columns become channels
    padded = np.pad(w.data, ((0, 0), (0, 0), (1, 1), (0, 0)))
    assert np.array_equal(npu.weights, padded.reshape(64, 10, 3, 2))
    macs = npu.ofm_shape.elements * npu.kernel.height * npu.kernel.width * npu.ifm_shape.c
    assert macs == 480000  # Vela's MAC count for this layer


def test_mobilenet_first_conv_pads_the_filter_on_the_right() -> None:
    (npu,) = convert_conv(conv(fm("in", (1, 96, 96, 3)), fm("out", (1, 48, 48, 8)), 3, stride=2, index=0))
    assert (npu.ifm_shape.w, npu.ifm_shape.c) == (48, 6)
    assert npu.weights.shape == (8, 3, 2, 6)
    assert (npu.kernel.padding.left, npu.kernel.padding.right) == (0, 1)


def test_only_the_first_operator_and_shallow_ifms_are_folded() -> None:
    (later,) = convert_conv(conv(fm("in", (1, 96, 96, 3)), fm("out", (1, 48, 48, 8)), 3, stride=2, index=4))
    assert later.ifm_shape.w == 96 and later.kernel.stride_x == 2
    (deep,) = convert_conv(conv(fm("in", (1, 96, 96, 8)), fm("out", (1, 48, 48, 8)), 3, stride=2, index=0))
    assert deep.ifm_shape.c == 8 and deep.kernel.stride_x == 2
    (unit,) = convert_conv(conv(fm("in", (1, 96, 96, 3)), fm("out", (1, 96, 96, 8)), 3, stride=1, index=0))
    assert unit.ifm_shape.c == 3


def test_helpers() -> None:
    assert hw_padding_total(10, 2, 4) == 2 and hw_padding_total(5, 1, 3) == 2 and hw_padding_total(7, 2, 3) == 2
    assert resize_factor(10, 2) == (2, 1)
    assert resize_factor(133, 14) == (7, 2)
    assert resize_factor(9, 2) == (1, 2)
    assert filter_padding(True, 2, 1, 2, 4, 10) == (1, 1)
    assert filter_padding(False, 0, 1, 2, 3, 10) == (0, 1)


def _audio_conv(index: int, stride_w: int) -> tuple:
    """A 1-D convolution over 64 samples, kernel 8, VALID: as a PyTorch/Keras Conv1D exports it."""
    out_w = (64 - 8) // stride_w + 1
    w = const("w", (np.arange(3 * 8).reshape(3, 1, 8, 1) % 5) - 2)
    b = const("b", np.zeros(3), DataType.INT32, None)
    return w, op("CONV_2D", [fm("in", (1, 1, 64, 1)), w, b], [fm("out", (1, 1, out_w, 3))], index, padding="VALID",
                 stride_h=1, stride_w=stride_w, dilation_h_factor=1, dilation_w_factor=1,
                 fused_activation_function="NONE")


def test_a_later_conv_whose_width_stride_exceeds_3_is_folded_and_computes_the_same() -> None:
    w, source = _audio_conv(index=3, stride_w=4)
    (npu,) = convert_conv(source)
    assert (npu.ifm_shape.w, npu.ifm_shape.c, npu.kernel.stride_x, npu.kernel.width) == (16, 4, 1, 2)
    samples = np.arange(64) % 11 - 5
    expected = [[int(w.data[o, 0, :, 0] @ samples[4 * x:4 * x + 8]) for x in range(15)] for o in range(3)]
    folded_ifm = samples.reshape(16, 4)
    folded = [[int(np.sum(npu.weights[o, 0] * folded_ifm[x:x + 2])) for x in range(15)] for o in range(3)]
    assert folded == expected
    _, strided_by_3 = _audio_conv(index=3, stride_w=2)
    (kept,) = convert_conv(strided_by_3)
    assert kept.kernel.stride_x == 2  # a later conv the hardware can stride stays as it is
