"""Output-stage scales as the hardware takes them: a 32-bit multiplier and a right shift."""

from __future__ import annotations

import math


def quantise_scale(scale: float) -> tuple[int, int]:
    """``(multiplier, shift)`` with ``scale ~= multiplier * 2**-shift`` and the multiplier in
    ``[2**30, 2**31)`` (a Q31 significand); a zero scale gives ``(0, 0)``. ``shift`` is 0..63."""
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
