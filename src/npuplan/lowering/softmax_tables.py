"""The lookup tables of the softmax decomposition (``lowering.softmax``), computed as TFLite's
reference kernels define them and as Vela's decomposition loads them.

8 bits: one table of 256 int32 entries, entry ``x`` the Q0.31 exponential of ``x - 255`` input
steps (the difference to the row's maximum, offset by the Sub's output zero point 127), scaled by
``beta * input_scale`` into Q5.26 (gemmlowp's ``exp_on_negative_values``); entries below TFLite's
``diff_min`` are 0.

16 bits: two interpolating tables of 512 entries (a 16-bit input's form: base and slope per
segment): exp on [-10, 0] and 1 / (1 + x) on [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from npuplan.lowering.fixedpoint import INT32_MAX, INT32_MIN, exp_on_negative_values, quantise_scale, \
    rounding_doubling_high_mul

_INTEGER_BITS = 5  # the exponent's input format: Q5.26
_SIGNED_BITS = 31


def exp_table_8bit(beta: float, input_scale: float) -> np.ndarray | None:
    """The 256 int32 entries of the 8-bit softmax's exp table, or None when ``beta * input_scale``
    is too small for the fixed-point rescale (a negative left shift: TFLite's kernel does not
    define it either)."""
    real_beta = min(beta * input_scale * (1 << (_SIGNED_BITS - _INTEGER_BITS)), float(INT32_MAX))
    multiplier, shift = quantise_scale(real_beta)
    left_shift = 31 - shift
    if multiplier == 0 or left_shift < 0:
        return None
    diff_min = -math.floor(((1 << _INTEGER_BITS) - 1) * (1 << (_SIGNED_BITS - _INTEGER_BITS)) / (1 << left_shift))
    diff = np.arange(256, dtype=np.int64) - 255  # entry x: x - 255 input steps
    scaled = np.clip(diff * (1 << left_shift), INT32_MIN, INT32_MAX)
    values = exp_on_negative_values(rounding_doubling_high_mul(scaled, multiplier), _INTEGER_BITS)
    table = np.where(diff >= diff_min, values, 0).astype(np.int32)
    table.flags.writeable = False
    return table


INT16_RANGE = 65535  # int16 max - min
NEG_EXP_RANGE = 10.0  # the 16-bit exp table's input range [-10, 0] (Vela's default, TFLite's too)


def _round(x: float) -> float:
    """``std::round``: halves away from zero."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def interpolating_table_16bit(function: Callable[[float], float], input_scale: float, output_scale: float,
                              input_zero_point: int, output_zero_point: int) -> np.ndarray:
    """The 512 entries a 16-bit input's table lookup reads: ``function`` sampled at 513 points over
    the int16 input range (``input_scale`` and zero point), in int16 output steps (``output_scale``
    over the int16 range, zero point), each sample less half the error of interpolating the
    segment's midpoint; entry ``i`` holds sample ``i`` (low 16 bits) and the slope to sample
    ``i + 1`` (high 16 bits), as Vela builds it (the last entry's base sign-extended, as its C++
    does). Returned as uint32."""
    q_min, q_max = -32768.0, 32767.0
    in_min, in_max = input_scale * (q_min - input_zero_point), input_scale * (q_max - input_zero_point)
    out_min, out_max = output_scale * (q_min - output_zero_point), output_scale * (q_max - output_zero_point)
    steps = 512
    step = (in_max - in_min) / steps
    inverse = (q_max - q_min + 1) / (out_max - out_min)
    samples = []
    for i in range(steps):
        x = in_min + i * step
        sample = _round(function(x) * inverse)
        interpolated = _round((function(in_min + (i + 1) * step) * inverse + sample) / 2)
        bias = _round((interpolated - _round(function(x + step / 2) * inverse)) / 2)
        samples.append(int(min(max(sample - bias, q_min), q_max)))
    last = int(min(max(_round(function(in_max) * inverse), q_min), q_max))
    table = np.zeros(steps, dtype=np.uint32)
    for i in range(steps - 1):
        table[i] = (samples[i] & 0xFFFF) | ((samples[i + 1] - samples[i]) & 0xFFFF) << 16
    table[-1] = (samples[-1] + ((last - samples[-1]) << 16)) & 0xFFFFFFFF
    table.flags.writeable = False
    return table


def exp_table_16bit() -> np.ndarray:
    """The 16-bit softmax's exp table: exp on [-10, 0] (inputs offset by 32767), in steps of 2/65535."""
    return interpolating_table_16bit(math.exp, NEG_EXP_RANGE / INT16_RANGE, 2.0 / INT16_RANGE, 32767, 0)


def reciprocal_table_16bit() -> np.ndarray:
    """The 16-bit softmax's 1/(1+x) table on [0, 1] (inputs offset by -32768), in steps of 2/65535."""
    return interpolating_table_16bit(lambda x: 1.0 / (1.0 + x), 1.0 / INT16_RANGE, 2.0 / INT16_RANGE, -32768, 0)


def beta_multiplier_16bit(input_scale: float, beta: float) -> tuple[int, tuple[int, int]]:
    """The 16-bit softmax's scaling of the differences to the row maximum into the exp table's
    input steps, ``input_scale * beta / (10 / 65535)``: the int32 constant they are multiplied by
    (its Q31 multiplier) and the output stage's (multiplier, shift) of the same scale computed in
    float32 (each step rounded to float32), as Vela's Mul runs it."""
    exp_scale = NEG_EXP_RANGE / INT16_RANGE
    multiplier, _ = quantise_scale(input_scale * beta / exp_scale)
    single = np.float32(np.float32(input_scale) * np.float32(beta)) / np.float32(exp_scale)  # float32 steps
    return multiplier, quantise_scale(float(single))
