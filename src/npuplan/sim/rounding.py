"""The NPU's integer rescale: ``value * multiplier / 2**shift`` rounded as the OFM_PRECISION
register's rounding mode says, exact for any operand width.

Rounding modes (OFM_PRECISION bits 14-15):

- ``TFL`` (0): TensorFlow Lite's double rounding. A shift up to 31 rounds once, half up
  (towards plus infinity), as ``SaturatingRoundingDoublingHighMul`` does after TFLite's left shift;
  a larger shift rounds the product half up at bit 31 first, then the remaining ``shift - 31``
  bits half away from zero (``RoundingDivideByPOT``).
- ``TRUNCATE`` (1): towards zero.
- ``NATURAL`` (2): once, half up (towards plus infinity): ``(x + 2**(shift-1)) >> shift``.

Values are numpy int64 arrays; a product that could leave int64 is computed on Python integers
(an object array) so it is exact, then brought back to int64 by the caller's saturation.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

SAFE_PRODUCT_BITS = 62  # |value * multiplier| below 2**62: int64 arithmetic with headroom


class RoundingMode(IntEnum):
    TFL = 0
    TRUNCATE = 1
    NATURAL = 2


def _shifts(shift: np.ndarray | int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shifts (as given: a scalar or one per channel, broadcast later) and their halves
    ``2**(shift-1)`` (0 for no shift), as Python integers for an object array of values."""
    shifts = np.asarray(shift, dtype=np.int64)
    halves = np.where(shifts > 0, np.left_shift(np.int64(1), np.maximum(shifts - 1, 0)), 0)
    if values.dtype == object:
        return shifts.astype(object), halves.astype(object)
    return shifts, halves


def _half_up(x: np.ndarray, shift: np.ndarray | int) -> np.ndarray:
    """``x / 2**shift`` rounded half up (``shift`` >= 0)."""
    shifts, halves = _shifts(shift, x)
    return np.right_shift(x + halves, shifts)


def _half_away(x: np.ndarray, shift: np.ndarray | int) -> np.ndarray:
    """``x / 2**shift`` rounded half away from zero (``RoundingDivideByPOT``)."""
    magnitude = _half_up(np.abs(x), shift)
    return np.where(x < 0, -magnitude, magnitude)


def _towards_zero(x: np.ndarray, shift: np.ndarray | int) -> np.ndarray:
    shifts, _ = _shifts(shift, x)
    magnitude = np.right_shift(np.abs(x), shifts)
    return np.where(x < 0, -magnitude, magnitude)


def round_shift(product: np.ndarray, shift: np.ndarray | int, mode: RoundingMode) -> np.ndarray:
    """``product / 2**shift`` (``shift`` 0..63, broadcast against ``product``) rounded by ``mode``."""
    if mode == RoundingMode.TRUNCATE:
        return _towards_zero(product, shift)
    if mode == RoundingMode.NATURAL:
        return _half_up(product, shift)
    shifts = np.asarray(shift, dtype=np.int64)
    first = np.minimum(shifts, 31)
    high = _half_up(product, first)
    if not np.any(shifts > 31):
        return high
    return _half_away(high, shifts - first)


def widened(values: np.ndarray, multiplier: np.ndarray | int) -> np.ndarray:
    """``values`` as int64, or as Python integers where ``values * multiplier`` could leave int64."""
    values = np.asarray(values, dtype=np.int64)
    largest_value = int(np.max(np.abs(values))) if values.size else 0
    largest_multiplier = int(np.max(np.abs(np.asarray(multiplier, dtype=np.int64)))) if np.size(multiplier) else 0
    if largest_value.bit_length() + largest_multiplier.bit_length() < SAFE_PRODUCT_BITS:
        return values
    return values.astype(object)


def rescale(values: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int,
            mode: RoundingMode) -> np.ndarray:
    """``values * multiplier / 2**shift`` rounded by ``mode`` (multiplier and shift broadcast
    against ``values``, e.g. one per OFM channel on the last axis); int64 or, for results beyond
    it, Python integers."""
    wide = widened(values, multiplier)
    factor = np.asarray(multiplier, dtype=np.int64)
    if wide.dtype == object:
        factor = factor.astype(object)
    return round_shift(wide * factor, shift, mode)


def saturate(values: np.ndarray, low: int, high: int) -> np.ndarray:
    """``values`` (int64 or Python integers) clamped to ``[low, high]``, as int64."""
    if values.dtype == object:
        return np.minimum(np.maximum(values, low), high).astype(np.int64)
    return np.clip(values, low, high).astype(np.int64)


def wrap(values: np.ndarray, bits: int) -> np.ndarray:
    """``values`` (int64 or Python integers) as ``bits``-bit two's complement integers (int64)."""
    half = 1 << (bits - 1)
    if values.dtype == object:
        return ((values + half) % (1 << bits) - half).astype(np.int64)
    if bits >= 64:
        return values.astype(np.int64)
    return ((values.astype(np.int64) + half) & ((1 << bits) - 1)) - half
