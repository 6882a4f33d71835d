"""The int16 fixed-point sigmoid and tanh LiteRT's integer LSTM kernel computes (TFLite's
``PortableApplySigmoid``/``PortableApplyTanh``: gemmlowp's ``logistic`` and ``tanh`` on 16-bit raw
values), for the oracle test of Vela's NPU LSTM only: the NPU (and TensorFlow Lite Micro's LSTM)
use the int16 table instead (``npuplan.sim.lut.function``), so the two differ by one now and then.

Raw values are Python ints; ``kb`` is the input's integer bits (Q``kb``.``15-kb``), the result is
Q0.15. The arithmetic is gemmlowp's: 16-bit wrapping adds, the saturating rounding doubling high
multiply, rounding (half away from zero) divisions by powers of two, a Taylor expansion of exp on
[-1/4, 0) times exp(-2**k) factors, and three Newton-Raphson steps for the division.
"""

from __future__ import annotations

import numpy as np

ONE_Q15 = 32767
_EXP_FACTORS = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535),
                (3, 720401), (4, 242))  # exp(-2**k) as Q0.31


def _wrap(x: int) -> int:
    x &= 0xFFFF
    return x - 0x10000 if x & 0x8000 else x


def _high_mul(a: int, b: int) -> int:
    """Saturating rounding doubling high multiply of two int16 values."""
    if a == b == -32768:
        return ONE_Q15
    product = a * b
    nudged = product + ((1 << 14) if product >= 0 else 1 - (1 << 14))
    quotient = abs(nudged) >> 15
    return _wrap(quotient if nudged >= 0 else -quotient)


def _divide_pot(x: int, exponent: int) -> int:
    """``x / 2**exponent`` rounded half away from zero."""
    if exponent <= 0:
        return x
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if x & mask > threshold else 0)


def _scale_pot(x: int, exponent: int) -> int:
    """``x * 2**exponent``: rounded for a negative exponent, saturated to int16 for a positive one."""
    if exponent <= 0:
        return _divide_pot(x, -exponent)
    limit = (1 << (15 - exponent)) - 1
    return ONE_Q15 if x > limit else -32768 if x < -limit else _wrap(x << exponent)


def _q15(q31: int) -> int:
    return _divide_pot(q31, 16)


def _exp_near_zero(a: int) -> int:
    """exp(a) for a (Q0.15) in [-1/4, 0): the Taylor expansion around -1/8."""
    constant, third = _q15(1895147668), _q15(715827883)
    x = _wrap(a + (1 << 12))
    x2 = _high_mul(x, x)
    x3, x4 = _high_mul(x2, x), _high_mul(x2, x2)
    tail = _scale_pot(_wrap(_high_mul(_wrap(_scale_pot(x4, -2) + x3), third) + x2), -1)
    return max(-32768, min(ONE_Q15, constant + _high_mul(constant, _wrap(x + tail))))


def _exp_negative(a: int, kb: int) -> int:
    """exp(a) (Q0.15) for a <= 0 in Q``kb``."""
    if a == 0:
        return ONE_Q15
    fraction_bits = 15 - kb
    quarter = 1 << (fraction_bits - 2)
    shifted = _wrap((a & (quarter - 1)) - quarter)
    result = _exp_near_zero(_scale_pot(shifted, kb))
    remainder = _wrap(shifted - a)
    for exponent, factor in _EXP_FACTORS:
        if kb > exponent and remainder & (1 << (fraction_bits + exponent)):
            result = _high_mul(result, _q15(factor))
    return result


def _reciprocal_q2(a: int) -> int:
    """About 2 / (1 + a) in Q2.13 for a (Q0.15) in (0, 1): Newton-Raphson from 48/17 - 32/17 x."""
    total = a + ONE_Q15
    half = int((total + (1 if total >= 0 else -1)) / 2)
    x = _wrap(_q15(1515870810) + _high_mul(half, _q15(-1010580540)))
    for _ in range(3):
        x = _wrap(x + _scale_pot(_high_mul(x, _wrap((1 << 13) - _high_mul(half, x))), 2))
    return x


def _logistic(a: int, kb: int) -> int:
    if a == 0:
        return 1 << 14
    magnitude = a if a > 0 else _wrap(-a)
    positive = _scale_pot(_reciprocal_q2(_exp_negative(_wrap(-magnitude), kb)), 1)
    return positive if a > 0 else _wrap(ONE_Q15 - positive)


def _tanh(a: int, kb: int) -> int:
    if a == 0:
        return 0
    negative = a if a < 0 else _wrap(-a)
    value = _scale_pot(_wrap(_reciprocal_q2(_exp_negative(negative, kb + 1)) - (1 << 13)), 2)
    return _wrap(-value) if a < 0 else value


def sigmoid(values: np.ndarray, kb: int) -> np.ndarray:
    """gemmlowp's logistic of int16 raw values in Q``kb``, as Q0.15 (int64)."""
    return np.vectorize(lambda v: _logistic(int(v), kb), otypes=[np.int64])(values)


def tanh(values: np.ndarray, kb: int) -> np.ndarray:
    """gemmlowp's tanh of int16 raw values in Q``kb``, as Q0.15 (int64)."""
    return np.vectorize(lambda v: _tanh(int(v), kb), otypes=[np.int64])(values)
