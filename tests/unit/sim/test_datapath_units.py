"""Hand-computed cases of the datapath: rounding modes, output stage, elementwise, pooling,
convolution geometry. Each expected value is worked out in the comment beside it."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.sim.datapath import ChannelScales, compute
from npuplan.sim.rounding import RoundingMode, rescale, round_shift

INT8_OFM = 0x1  # OFM_PRECISION: signed, 8-bit
GLOBAL = 1 << 8
INT32_OFM = 0x1 | (2 << 1)


def test_tfl_rounding_is_double_above_shift_31():
    # -5 * 2**30 / 2**32 = -1.25: bit 31 first: -2.5 -> half up -> -2; then /2 = -1 half away -> -1
    assert round_shift(np.array([-5 << 30]), 32, RoundingMode.TFL).tolist() == [-1]
    # single rounding would give round(-1.25) = -1 as well; -3 * 2**30 / 2**32 = -0.75:
    # bit 31: -1.5 -> -1 (half up), then -1/2 = -0.5 -> half away -> -1 (single rounding: -1)
    assert round_shift(np.array([-3 << 30]), 32, RoundingMode.TFL).tolist() == [-1]
    # 3 * 2**29 / 2**32 = 0.375 -> bit 31 first: 0.75 -> 1, then 0.5 -> 1 (single rounding: 0)
    assert round_shift(np.array([3 << 29]), 32, RoundingMode.TFL).tolist() == [1]


@pytest.mark.parametrize(("mode", "expected"), [
    (RoundingMode.TFL, [3, -2, 2, -3]),  # shift <= 31: half up
    (RoundingMode.NATURAL, [3, -2, 2, -3]),  # half up
    (RoundingMode.TRUNCATE, [2, -2, 2, -2]),  # towards zero
])
def test_rounding_modes_below_shift_31(mode, expected):
    # 2.5, -2.5, 2.25, -2.75 in units of 1/4
    assert round_shift(np.array([10, -10, 9, -11]), 2, mode).tolist() == expected


def test_rescale_is_exact_beyond_int64():
    # a 40-bit value times a 32-bit multiplier: 2**39 * (2**32 - 1) / 2**40 = 2**31 - 0.5 -> 2**31
    assert int(rescale(np.array([1 << 39]), (1 << 32) - 1, 40, RoundingMode.NATURAL)[0]) == 1 << 31


def _elementwise_regs(**extra: int) -> dict[str, int]:
    regs = {"IFM_PRECISION": 1, "IFM2_PRECISION": 1, "OFM_PRECISION": INT8_OFM | GLOBAL,
            "ACTIVATION_MIN": 0xFF80, "ACTIVATION_MAX": 0x7F, "OFM_SCALE": 1, "OPA_SCALE": 1, "OPB_SCALE": 1}
    return regs | extra


def test_add_zero_points_scale_and_clamp():
    # (10 - 2) + (20 - (-4)) = 32; OFM scale 1/2 (2**30 >> 31) -> 16; + OFM zero point 5 = 21;
    # 120 + 100 = 220 -> 110 + 5 -> clamped to ACTIVATION_MAX 100
    regs = _elementwise_regs(IFM_ZERO_POINT=2, IFM2_ZERO_POINT=0xFFFC, OFM_ZERO_POINT=5,
                             OFM_SCALE=(1 << 30) | (31 << 32), ACTIVATION_MAX=100)
    out = compute("NPU_OP_ELEMENTWISE", 1, regs, np.array([[[10, 122]]]), np.array([[[20, 96]]]))
    assert out.tolist() == [[[21, 100]]]


def test_sub_reversed_operands_and_scalar():
    # reversed: OPA = IFM2 scalar 7, OPB = IFM: 7 - 3 = 4, 7 - 10 = -3
    regs = _elementwise_regs(IFM2_BROADCAST=(1 << 6) | (1 << 7), IFM2_SCALAR=7)
    out = compute("NPU_OP_ELEMENTWISE", 2, regs, np.array([[[3, 10]]]))
    assert out.tolist() == [[[4, -3]]]


def test_add_32bit_scale_mode_shifts_the_other_operand():
    # OPA_32 (IFM_PRECISION bits 8-9 = 1): OPA * 3 >> 1 (half up): 5 -> 7.5 -> 8; OPB 1 << 19 (8-bit
    # IFM); an int32 OFM, unscaled: 8 + 2**19
    regs = _elementwise_regs(IFM_PRECISION=1 | (1 << 8), OPA_SCALE=3 | (1 << 32), OFM_PRECISION=INT32_OFM | GLOBAL)
    out = compute("NPU_OP_ELEMENTWISE", 1, regs, np.array([[[5]]]), np.array([[[1]]]))
    assert out.tolist() == [[[8 + (1 << 19)]]]


def test_int32_mul_and_broadcast():
    # int32 in and out, unscaled: (1 << 20) * 3 along a broadcast depth
    regs = _elementwise_regs(IFM_PRECISION=1 | (2 << 2), IFM2_PRECISION=1 | (2 << 2), OFM_PRECISION=INT32_OFM | GLOBAL,
                             IFM2_BROADCAST=4, ACTIVATION_MIN=0x8000, ACTIVATION_MAX=0x7FFF)
    out = compute("NPU_OP_ELEMENTWISE", 0, regs, np.full((1, 1, 3), 1 << 20), np.array([[[3]]]))
    assert out.tolist() == [[[3 << 20] * 3]]  # not clamped to ACTIVATION_MAX (a 32-bit OFM)


def test_shr_rounds_by_mode_and_clz():
    regs = _elementwise_regs(IFM_PRECISION=1 | (2 << 2), IFM2_PRECISION=1 | (2 << 2),
                             OFM_PRECISION=INT32_OFM | (RoundingMode.NATURAL << 14))
    assert compute("NPU_OP_ELEMENTWISE", 8, regs, np.array([[[5, -5]]]), np.array([[[1, 1]]])).tolist() == [[[3, -2]]]
    assert compute("NPU_OP_ELEMENTWISE", 7, regs, np.array([[[1, -1, 0]]])).tolist() == [[[31, 0, 32]]]


def _pool_regs(kernel: int, pad: int = 0, **extra: int) -> dict[str, int]:
    return {"IFM_PRECISION": 1, "OFM_PRECISION": INT8_OFM, "ACTIVATION_MIN": 0xFF80, "ACTIVATION_MAX": 0x7F,
            "KERNEL_HEIGHT_M1": kernel - 1, "KERNEL_WIDTH_M1": kernel - 1, "IFM_PAD_TOP": pad, "IFM_PAD_LEFT": pad,
            "IFM_PAD_BOTTOM": pad, "IFM_PAD_RIGHT": pad, "OFM_HEIGHT_M1": 1, "OFM_WIDTH_M1": 1} | extra


def test_padded_average_counts_only_the_ifm():
    # 2x2 IFM, 3x3 kernel, padding 1: every window holds all 4 values (sum -6) -> -6/4 = -1.5 -> -2
    out = compute("NPU_OP_POOL", 1, _pool_regs(3, 1), np.array([[[-3], [-1]], [[-1], [-1]]]))
    assert out.tolist() == [[[-2], [-2]], [[-2], [-2]]]


def test_max_pool_ignores_padding():
    out = compute("NPU_OP_POOL", 0, _pool_regs(3, 1), np.array([[[-9], [-7]], [[-8], [-100]]]))
    assert out.tolist() == [[[-7], [-7]], [[-7], [-7]]]


def test_conv_pads_with_the_zero_point_and_scales_per_channel():
    # 1x1 OFM, 3x3 kernel of ones over a 2x2 IFM padded top-left: the IFM (5 - zp 5 = 0 at padding)
    # sum of (x - 5) = 1 + 2 + 3 + 4 = 10; channel 0: (10 + bias 2) * 1 >> 1 = 6; channel 1: (10 - 2) * 3 >> 2 = 6
    regs = _pool_regs(3, 0, IFM_PAD_TOP=1, IFM_PAD_LEFT=1, IFM_ZERO_POINT=5, OFM_HEIGHT_M1=0, OFM_WIDTH_M1=0)
    scales = ChannelScales(np.array([2, -2]), np.array([1, 3]), np.array([1, 2]))
    out = compute("NPU_OP_CONV", 0, regs, np.array([[[6], [7]], [[8], [9]]]), weights=np.ones((2, 3, 3, 1)),
                  scales=scales)
    assert out.tolist() == [[[6, 6]]]


def test_nearest_and_zeros_upscale():
    # a 1x1 kernel over a 2x upscaled 1x2 IFM: NEAREST repeats, ZEROS puts the value at even positions
    regs = _pool_regs(1, OFM_HEIGHT_M1=1, OFM_WIDTH_M1=3, IFM_UPSCALE=1)
    scales = ChannelScales(np.zeros(1), np.ones(1), np.zeros(1))
    ifm = np.array([[[1], [2]]])
    nearest = compute("NPU_OP_CONV", 0, regs, ifm, weights=np.ones((1, 1, 1, 1)), scales=scales)
    assert nearest[..., 0].tolist() == [[1, 1, 2, 2], [1, 1, 2, 2]]
    zeros = compute("NPU_OP_CONV", 0, regs | {"IFM_UPSCALE": 2}, ifm, weights=np.ones((1, 1, 1, 1)), scales=scales)
    assert zeros[..., 0].tolist() == [[1, 0, 2, 0], [0, 0, 0, 0]]


def test_int8_lut():
    # ADD of a scalar 0, then table entry (value + 128): -128 -> entry 0 (255: -1 as int8),
    # 0 -> entry 128 (127), 127 -> entry 255 (0)
    regs = _elementwise_regs(ACTIVATION=16, IFM2_BROADCAST=1 << 7, IFM2_SCALAR=0)
    out = compute("NPU_OP_ELEMENTWISE", 1, regs, np.array([[[-128, 0, 127]]]), lut=np.arange(256)[::-1])
    assert out.tolist() == [[[-1, 127, 0]]]


def test_int16_lut_interpolates_base_and_slope():
    # entry k: base 100k - 20000, slope 100; v + 32768 selects entry >> 7, fraction & 127:
    # -32768 -> -20000; 0 -> entry 256: 5600; 1 -> 5600 + (100 + 64) >> 7 = 5601; 63 -> + 6364 >> 7 = 5649
    k = np.arange(512)
    words = ((100 * k - 20000) & 0xFFFF) | (100 << 16)
    regs = _elementwise_regs(IFM_PRECISION=5, IFM2_PRECISION=5, OFM_PRECISION=3 | GLOBAL, ACTIVATION=17,
                             ACTIVATION_MIN=0x8000, ACTIVATION_MAX=0x7FFF, IFM2_BROADCAST=1 << 7, IFM2_SCALAR=0)
    out = compute("NPU_OP_ELEMENTWISE", 1, regs, np.array([[[-32768, 0, 1, 63]]]), lut=words)
    assert out.tolist() == [[[-20000, 5600, 5601, 5649]]]


def test_int32_lut_maps_the_int8_clamped_value_plus_zero_point():
    # Vela's softmax: SUB into an int32 OFM with zero point 127, FORCE_INT8 clip (ACTIVATION bits
    # 12-14 = 3), 256 int32 entries: (-5 - 0) + 127 = 122 -> entry 250; -300 + 127 clamps to -128 -> entry 0
    regs = _elementwise_regs(OFM_PRECISION=INT32_OFM | GLOBAL, OFM_ZERO_POINT=127, ACTIVATION=16 | (3 << 12))
    table = np.arange(256) * 1000 + (1 << 20)
    out = compute("NPU_OP_ELEMENTWISE", 2, regs, np.array([[[-5, -300]]]), np.array([[[0, 0]]]), lut=table)
    assert out.tolist() == [[[250 * 1000 + (1 << 20), 1 << 20]]]


def test_int32_mul_shifts_the_product_without_the_multiplier():
    # SaturatingRoundingDoublingHighMul as Vela writes it: multiplier 2**30, shift 31:
    # 1438278400 * -1010580540 / 2**31 = -676836893.6 -> -676836894 (TFLite's value)
    regs = _elementwise_regs(IFM_PRECISION=1 | (2 << 2), IFM2_PRECISION=1 | (2 << 2),
                             OFM_PRECISION=INT32_OFM | GLOBAL, OFM_SCALE=(1 << 30) | (31 << 32))
    out = compute("NPU_OP_ELEMENTWISE", 0, regs, np.array([[[1438278400]]]), np.array([[[-1010580540]]]))
    assert out.tolist() == [[[-676836894]]]


def test_int32_ofm_leaves_its_zero_point_out():
    # a depthwise sum into int32 with OFM zero point -10 (Vela's legacy MEAN): 1 + 2 = 3, not -7
    regs = _pool_regs(1, OFM_PRECISION=INT32_OFM, OFM_ZERO_POINT=0xFFF6, OFM_HEIGHT_M1=0, OFM_WIDTH_M1=0)
    scales = ChannelScales(np.zeros(2), np.ones(2), np.zeros(2))
    out = compute("NPU_OP_DEPTHWISE", 0, regs, np.array([[[1, 2]]]), weights=np.ones((2, 1, 1, 1)), scales=scales)
    assert out.tolist() == [[[1, 2]]]
