"""Lookup tables of 8-bit activations as TensorFlow Lite Micro's reference kernels compute them,
and the gemmlowp/TFLite integer arithmetic underneath."""

from __future__ import annotations

import math

import pytest

from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import (
    exp_on_negative_values,
    fixed_logistic,
    fixed_tanh,
    inv_sqrt_multiplier_exp,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    rounding_divide_by_pot16,
    rounding_doubling_high_mul,
)
from npuplan.lowering.lut_tables import activation_table, lut_reason


def test_rounding_primitives_round_half_away_from_zero():
    assert [rounding_divide_by_pot(x, 1) for x in (-3, -2, -1, 1, 2, 3)] == [-2, -1, -1, 1, 1, 2]
    assert rounding_doubling_high_mul(-(1 << 31), -(1 << 31)) == (1 << 31) - 1  # the one saturating case
    assert rounding_doubling_high_mul(1 << 30, 1 << 30) == 1 << 29  # 0.5 * 0.5 = 0.25 in Q0.31
    m, s = quantize_multiplier(0.75)
    assert (m, s) == (3 << 29, 0) and multiply_by_quantized_multiplier(100, m, s) == 75


@pytest.mark.parametrize("x", [-0.01, -0.2, -1.0, -3.5, -7.9])
def test_fixed_point_transcendentals_track_the_real_functions(x):
    q4 = round(x * (1 << 27))  # a Q4.27 argument
    assert abs(exp_on_negative_values(q4, 4) / 2**31 - math.exp(x)) < 1e-6
    assert abs(fixed_tanh(q4, 4) / 2**31 - math.tanh(x)) < 1e-6
    assert abs(fixed_logistic(q4, 4) / 2**31 - 1 / (1 + math.exp(-x))) < 1e-6
    assert fixed_tanh(-q4, 4) == -fixed_tanh(q4, 4)


# Quantizations of the zoo's op_* models and every 16th entry of the tables npuplan computes for them;
# all 256 entries of each equal the table in Vela 5.2.0's output for the same model (bench/lut_compare.py).
_CASES = [
    ("TANH", (0.03416462987661362, -7), (0.0078125, 0), {},
     [-128, -128, -127, -126, -123, -113, -89, -38, 30, 84, 111, 122, 126, 127, 127, 127]),
    ("LOGISTIC", (0.03861275315284729, 9), (0.00390625, -128), {},
     [-127, -126, -124, -120, -114, -102, -84, -57, -22, 17, 53, 82, 101, 112, 119, 123]),
    ("LEAKY_RELU", (0.03860756382346153, 5), (0.022510815411806107, -82), {"alpha": 0.20000000298023224},
     [-128, -122, -117, -111, -106, -100, -95, -89, -84, -63, -36, -8, 19, 47, 74, 102]),
    ("HARD_SWISH", (0.035783976316452026, -10), (0.020661918446421623, -110), {},
     [-110, -110, -110, -120, -127, -128, -124, -115, -100, -81, -55, -25, 11, 46, 74, 101]),
]


@pytest.mark.parametrize(("kind", "ifm", "ofm", "options", "sampled"), _CASES)
def test_tables_of_the_zoo_activations(kind, ifm, ofm, options, sampled):
    table = activation_table(kind, DataType.INT8, Quantization((ifm[0],), (ifm[1],)),
                             Quantization((ofm[0],), (ofm[1],)), options)
    assert table is not None and table.shape == (256,) and table.dtype.name == "int8"
    assert table[::16].tolist() == sampled
    if kind != "HARD_SWISH":  # the others are monotonic in their input
        assert all(a <= b for a, b in zip(table[:-1], table[1:]))


def test_the_zero_point_maps_to_the_functions_value_at_zero():
    q = Quantization((0.05,), (3,))
    tanh = activation_table("TANH", DataType.INT8, q, Quantization((1 / 128,), (0,)), {})
    logistic = activation_table("LOGISTIC", DataType.INT8, q, Quantization((1 / 256,), (-128,)), {})
    assert tanh is not None and logistic is not None
    assert tanh[3 + 128] == 0 and logistic[3 + 128] == 0  # tanh(0) = 0; logistic(0) = 0.5 -> 128 - 128


def test_activations_without_a_table_say_why():
    q = Quantization((0.1,), (0,))
    assert activation_table("SQRT", DataType.INT8, q, q, {}) is None
    assert "SQRT" in (lut_reason("SQRT", DataType.INT8) or "")
    assert "int8 and uint8 only" in (lut_reason("TANH", DataType.INT16) or "")


def test_rsqrt_is_tflites_fixed_point_inverse_square_root():
    """GetInvSqrtQuantizedMultiplierExp of 1..8, kept << 20: the values Vela's table of the
    reference kernel's intermediates starts with; inputs at or below the zero point are the max."""
    data = [multiply_by_quantized_multiplier(1, m, s + 20) for m, s in map(inv_sqrt_multiplier_exp, range(1, 9))]
    assert data == [0x100000, 0xB504E, 0x93CD4, 0x80000, 0x727C9, 0x6882F, 0x60C24, 0x5A827]
    table = activation_table("RSQRT", DataType.INT8, Quantization((0.05,), (-20,)), Quantization((0.1,), (-100,)), {})
    assert table is not None and set(table[:109].tolist()) == {127}  # inputs -128..-20
    assert all(a >= b for a, b in zip(table[108:-1], table[109:]))  # decreasing above the zero point


def test_float_tables_follow_lut_populate():
    """EXP, LOG and GELU are TFLite's LUTPopulate: float32 dequantize, the function, float32
    inverse output scale, round half away from zero, clamp."""
    table = activation_table("EXP", DataType.INT8, Quantization((0.05,), (20,)), Quantization((0.2,), (-100,)), {})
    assert table is not None
    real = [math.exp(0.05 * (x - 20)) for x in range(-128, 128)]
    expected = [max(-128, min(127, int(math.copysign(math.floor(abs(v / 0.2) + 0.5), v)) - 100)) for v in real]
    assert sum(a != b for a, b in zip(table.tolist(), expected)) <= 2  # float32 vs double at rounding ties
    log = activation_table("LOG", DataType.INT8, Quantization((0.05,), (3,)), Quantization((0.1,), (-10,)), {})
    assert log is not None and set(log[:132].tolist()) == {-128}  # log of non-positive inputs: the lowest value


def test_int16_rounding_shifts_of_16_or_more_round_down_as_the_cpp_does():
    """gemmlowp's int16 RoundingDivideByPOT converts its mask to int16: from exponent 16 on it is a
    plain arithmetic shift. HARD_SWISH of mobilenet_v3_small's last layers (scales ~7.8e-9) shifts
    its reluish value by 20: the table follows the C++ (as LiteRT's reference kernel and Vela do),
    not the exact rounding (which would give -64 for input -127)."""
    assert rounding_divide_by_pot16(-11410, 20) == -1 and rounding_divide_by_pot(-11410, 20) == 0
    assert rounding_divide_by_pot16(-4064, 6) == rounding_divide_by_pot(-4064, 6) == -64
    ref = activation_table("HARD_SWISH", DataType.INT8, Quantization((7.8439947870379e-09,), (0,)),
                           Quantization((7.843565796861185e-09,), (0,)), {})
    assert ref is not None and [int(ref[x + 128]) for x in (-127, -126, -1, 0, 1, 100)] == [-63, -63, 0, 0, 1, 50]


def test_the_rounding_primitives_give_the_same_values_on_arrays_as_on_ints():
    """Tables evaluate the primitives over int64 arrays; each element must be what the int gives
    (the saturating corner and both signs of each rounding included)."""
    import numpy as np

    edge = [-(1 << 31), -(1 << 31) + 1, -(1 << 30) - 1, -3, -2, -1, 0, 1, 2, 3, 1 << 30, (1 << 31) - 1]
    a = np.array([x for x in edge for _ in edge], dtype=np.int64)
    b = np.array([y for _ in edge for y in edge], dtype=np.int64)
    assert rounding_doubling_high_mul(a, b).tolist() == [rounding_doubling_high_mul(int(x), int(y)) for x, y in zip(a, b)]
    for exponent in (1, 5, 31):
        assert rounding_divide_by_pot(a, exponent).tolist() == [rounding_divide_by_pot(int(x), exponent) for x in a]
    assert isinstance(rounding_doubling_high_mul(-(1 << 31), -(1 << 31)), int)
    q4 = np.array([-(1 << 31), -5 << 27, -1, 0, 1, 3 << 27, (1 << 31) - 1], dtype=np.int64)
    assert fixed_tanh(q4, 4).tolist() == [int(fixed_tanh(int(x), 4)) for x in q4]
    assert fixed_logistic(q4, 4)[3] == 1 << 30 and fixed_tanh(q4, 4)[3] == 0


def test_uint8_logistic_and_tanh_are_litert_float_tables():
    """uint8 LOGISTIC (output 1/256, zero point 0, as LiteRT requires) and TANH: LiteRT's
    LUTPopulate of the real functions (run_opwise: exact against LiteRT on tf1_uint8_mlp_32)."""
    q = Quantization((0.0627451,), (128,))
    logistic = activation_table("LOGISTIC", DataType.UINT8, q, Quantization((1 / 256,), (0,)), {})
    tanh = activation_table("TANH", DataType.UINT8, q, Quantization((1 / 128,), (128,)), {})
    assert logistic is not None and logistic.dtype.name == "uint8" and tanh is not None and tanh.dtype.name == "uint8"
    real = [1 / (1 + math.exp(-0.0627451 * (x - 128))) for x in range(256)]
    expected = [min(255, int(math.floor(v * 256 + 0.5))) for v in real]
    assert sum(a != b for a, b in zip(logistic.tolist(), expected)) <= 2  # float32 vs double at rounding ties
    assert logistic[128] == 128 and tanh[128] == 128  # logistic(0) = 0.5, tanh(0) = 0
    assert logistic.tolist() == sorted(logistic.tolist()) and tanh.tolist() == sorted(tanh.tolist())
