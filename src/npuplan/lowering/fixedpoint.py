"""Integer arithmetic of TensorFlow Lite's reference kernels, value for value, so lookup tables
computed here hold what the CPU kernel would compute (``lowering.lut_tables``).

Scalars are Python ints kept in the range of the C type they stand for (``int32``/``int16``).
The rounding primitives also take int64 numpy arrays, element by element (their conditions are
arithmetic on comparisons, so an int gives an int), and the gemmlowp transcendental functions take
and give int64 arrays: a lookup table evaluates one over all its inputs at once.
The gemmlowp fixed-point type ``FixedPoint<int32, n>`` is an int32 raw value with ``n`` integer
bits (``31 - n`` fractional bits); its product is ``SaturatingRoundingDoublingHighMul`` and its
integer bits add up.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # hints only: numpy.typing is not loaded at run time
    from numpy.typing import ArrayLike

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def wrap32(x: Any) -> Any:
    """``x`` as a C int32 (two's complement wrap-around)."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def c_div(a: Any, b: int) -> Any:
    """C integer division (truncates towards zero)."""
    return abs(a) // abs(b) * (1 - 2 * ((a >= 0) != (b > 0)))


def tflite_round(x: float) -> float:
    """``TfLiteRound``/``std::round``: half away from zero (infinities and NaN unchanged)."""
    if not math.isfinite(x):
        return x
    return math.copysign(math.floor(abs(x) + 0.5), x)


def rounding_doubling_high_mul(a: Any, b: Any, bits: int = 32) -> Any:
    """gemmlowp's ``SaturatingRoundingDoublingHighMul`` for int32 (``bits`` 32) or int16 (16)."""
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    ab = a * b
    nudge = (1 << (bits - 2)) - (ab < 0) * high  # 1 - 2**(bits - 2) for a negative product
    product = c_div(ab + nudge, 1 << (bits - 1))
    return product + ((a == low) & (b == low)) * (high - product)  # low * low saturates to high


def rounding_divide_by_pot(x: Any, exponent: int) -> Any:
    """gemmlowp's ``RoundingDivideByPOT``: round half away from zero of ``x / 2**exponent``."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def rounding_divide_by_pot16(x: int, exponent: int) -> int:
    """gemmlowp's ``RoundingDivideByPOT`` on an int16, as C++ computes it: its mask
    ``(1 << exponent) - 1`` is converted to int16, so from exponent 16 on it is -1 and the result
    is the plain arithmetic shift (rounding towards minus infinity)."""
    mask = wrap16((1 << exponent) - 1)
    remainder = wrap16(x & mask)
    threshold = wrap16((mask >> 1) + (1 if x < 0 else 0))
    return wrap16((x >> exponent) + (1 if remainder > threshold else 0))


def wrap16(x: int) -> int:
    """``x`` as a C int16."""
    return (x + (1 << 15)) % (1 << 16) - (1 << 15)


def saturating_rounding_multiply_by_pot(x: Any, exponent: int) -> Any:
    """gemmlowp's ``SaturatingRoundingMultiplyByPOT`` on an int32."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = wrap32(x << exponent)
    return shifted + (x > threshold) * (INT32_MAX - shifted) + (x < -threshold) * (INT32_MIN - shifted)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: ``(q31 multiplier, shift)`` with ``real = m * 2**(shift - 31)``."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    fixed = int(tflite_round(q * (1 << 31)))
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return fixed, shift


def multiply_by_quantized_multiplier(x: Any, multiplier: int, shift: int) -> Any:
    """TFLite's ``MultiplyByQuantizedMultiplier`` (the double-rounding form of its reference kernels)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rounding_divide_by_pot(rounding_doubling_high_mul(wrap32(x * (1 << left)), multiplier), right)


def quantise_scale(scale: float) -> tuple[int, int]:
    """The hardware output stage's ``(multiplier, shift)`` with ``scale ~= multiplier * 2**-shift``
    and the multiplier in ``[2**30, 2**31)`` (a Q31 significand); a zero scale gives ``(0, 0)``.
    ``shift`` is 0..63."""
    if scale == 0.0:
        return 0, 0
    significand, exponent = math.frexp(scale)
    multiplier = int(round(significand * (1 << 31)))
    if multiplier == 1 << 31:  # the significand rounded up to 1.0
        multiplier //= 2
        exponent += 1
    shift = 31 - exponent
    if shift < 0:
        raise ValueError(f"scale {scale} is too large for the output stage")
    if shift > 63:  # smaller than the output stage can express: it rounds to zero
        return 0, 0
    return multiplier, shift


def quantise_scales(scales: np.ndarray) -> list[tuple[int, int]]:
    """``quantise_scale`` of each of ``scales`` (float64), all at once: the significand scaled to
    Q31 and rounded half to even (exact, as ``round``), the shift from the exponent. A scale that is
    not positive or whose shift leaves 0..63 is left to ``quantise_scale`` (all are then)."""
    significand, exponent = np.frexp(scales)
    multiplier = np.rint(significand * float(1 << 31)).astype(np.int64)
    carry = multiplier == 1 << 31  # the significand rounded up to 1.0
    shift = 31 - exponent.astype(np.int64) - carry
    if not bool(np.all((scales > 0) & (shift >= 0) & (shift <= 63))):
        return [quantise_scale(float(s)) for s in scales]
    return list(zip(np.where(carry, multiplier // 2, multiplier).tolist(), shift.tolist()))


def reduced_quantise_scale(scale: float) -> tuple[int, int]:
    """``quantise_scale`` with a 16-bit multiplier (rounded, at most 32767) and the shift less 16:
    the scale of a 16-bit IFM's convolution with 64-bit biases (TFLite's reference, as Vela)."""
    multiplier, shift = quantise_scale(scale)
    if multiplier == 0 and shift == 0:
        return 0, 0
    reduced = (multiplier + (1 << 15)) >> 16 if multiplier < 32767 << 16 else 32767
    return reduced, shift - 16


def downscale_multiplier_to_int16(multiplier: int) -> int:
    """TFLite's ``DownScaleInt32ToInt16Multiplier``."""
    if multiplier >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (multiplier + (1 << 15)) >> 16


# ----------------------------------------------------------------- gemmlowp transcendental functions
# (int64 arrays in and out, element by element: a table's inputs at once)
def _mul(a: Any, b: Any) -> Any:
    return rounding_doubling_high_mul(a, b)


def _exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), both with 0 integer bits."""
    constant_term = 1895147668  # exp(-1/8)
    constant_1_over_3 = 715827883
    x = wrap32(a + (1 << 28))  # a + 1/8
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(wrap32(_mul(wrap32(x4_over_4 + x3), constant_1_over_3) + x2), -1)
    return wrap32(constant_term + _mul(constant_term, wrap32(x + poly)))


# exp(-2**k) for the barrel shifter of exp_on_negative_values, k = -2..4, as Q0.31 raw values
_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
               (4, 242))


def exp_on_negative_values(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp's ``exp_on_negative_values``: exp(a) for a <= 0 with ``integer_bits``; Q0.31 result."""
    a = np.asarray(a, dtype=np.int64)
    fractional = 31 - integer_bits
    one_quarter = 1 << (fractional - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = wrap32((a & mask) - one_quarter)
    result = _exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = wrap32(a_mod_quarter_minus_one_quarter - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            result = np.where(remainder & (1 << (fractional + exponent)), _mul(result, multiplier), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal_half(a: np.ndarray) -> np.ndarray:
    """The Newton-Raphson iterate (Q2.29) of 1 / ((1 + a) / 2) shared by the two divisions."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + _mul(half_denominator, -1010580540))  # 48/17 - 32/17 * d
    one_q2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = _mul(half_denominator, x)  # Q2
        one_minus = wrap32(one_q2 - half_denominator_times_x)
        x = wrap32(x + saturating_rounding_multiply_by_pot(_mul(x, one_minus), 2))  # Q4 -> Q2
    return x


def rounding_half_sum(a: Any, b: Any) -> Any:
    """gemmlowp's ``RoundingHalfSum`` for int32."""
    total = a + b
    return c_div(total + 1 - 2 * (total < 0), 2)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """(1 - a) / (1 + a), Q0.31 in and out."""
    x = _newton_reciprocal_half(a)
    return saturating_rounding_multiply_by_pot(wrap32(x - (1 << 29)), 2)


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """1 / (1 + a), Q0.31 in and out."""
    x = _newton_reciprocal_half(a)
    return saturating_rounding_multiply_by_pot(x, 2 - 1)  # ExactMulByPot<-1> then Rescale<0> of a Q1


def fixed_tanh(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp's ``tanh`` of a ``FixedPoint<int32, integer_bits>``; Q0.31 result."""
    a = np.asarray(a, dtype=np.int64)
    n = np.where(a < 0, a, wrap32(-a))
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))  # ExactMulByPot<1>
    return np.where(a == 0, 0, np.where(a < 0, wrap32(-t), t))


def fixed_logistic(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp's ``logistic`` of a ``FixedPoint<int32, integer_bits>``; Q0.31 result."""
    a = np.asarray(a, dtype=np.int64)
    abs_input = np.where(a > 0, a, wrap32(-a))
    positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap32(-abs_input), integer_bits))
    return np.where(a == 0, 1 << 30, np.where(a > 0, positive, wrap32(INT32_MAX - positive)))


def mean_scaling(input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
    """TFLite's reference int8 MEAN: ``(multiplier, shift)`` applied by
    ``MultiplyByQuantizedMultiplier`` to the sum of ``count`` input differences: the input/output
    scale ratio quantized, the division by ``count`` folded into the multiplier
    (``(m << s) // count`` with ``s`` the largest power of two not above ``count``, at most 32 and
    at most ``31 + shift``). ``shift`` > 0 is a left shift (TFLite's convention)."""
    multiplier, shift = quantize_multiplier(float(np.float64(input_scale) / np.float64(output_scale)))
    s = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << s) // count, shift - s


def inv_sqrt_multiplier_exp(value: int) -> tuple[int, int]:
    """TFLite's ``GetInvSqrtQuantizedMultiplierExp`` (``reverse_shift`` -1): 1/sqrt(``value``) as a
    Q31 multiplier and a (left) shift, by gemmlowp's 5-step Newton-Raphson in Q3.28."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = ((32 - value.bit_length()) - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    half_input = saturating_rounding_multiply_by_pot(value >> 1, -1)
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28  # 1.0 in Q3.28
    for _ in range(5):
        x3 = saturating_rounding_multiply_by_pot(_mul(_mul(x, x), x), 6)  # Q9 -> Q3
        x = saturating_rounding_multiply_by_pot(wrap32(_mul(half_three, x) - _mul(half_input, x3)), 3)  # Q6 -> Q3
    x = _mul(x, 1518500250)  # sqrt(2)/2
    if shift < 0:
        x, shift = wrap32(x << -shift), 0
    return x, -shift
