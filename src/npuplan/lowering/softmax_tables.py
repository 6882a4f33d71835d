"""The lookup tables of the softmax decomposition (``lowering.softmax``), computed as TFLite's
reference kernels define them and as Vela's decomposition loads them.

8 bits: one table of 256 int32 entries, entry ``x`` the Q0.31 exponential of ``x - 255`` input
steps (the difference to the row's maximum, offset by the Sub's output zero point 127), scaled by
``beta * input_scale`` into Q5.26 (gemmlowp's ``exp_on_negative_values``); entries below TFLite's
``diff_min`` are 0.
"""

from __future__ import annotations

import math
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
    table = np.zeros(256, dtype=np.int32)
    for x in range(256):
        diff = x - 255
        if diff >= diff_min:
            scaled = min(max(diff * (1 << left_shift), INT32_MIN), INT32_MAX)
            table[x] = exp_on_negative_values(rounding_doubling_high_mul(scaled, multiplier), _INTEGER_BITS)
    table.flags.writeable = False
    return table
