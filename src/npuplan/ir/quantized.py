"""Quantized weights as signed values: the zero point removed, one row per output channel."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def signed_channel_rows(values: np.ndarray, zero_point: Sequence[int], channel_axis: int) -> np.ndarray:
    """``values`` less their zero point (one per channel when there are as many as channels, else
    the first; none: 0), one row per channel of ``channel_axis`` (0 or -1). 8-bit values come out
    int16, which 8-bit values less an 8-bit zero point fit (weight arrays are large: int64 would
    move four times the bytes); wider ones int64."""
    signed = np.int16 if values.dtype.itemsize == 1 else np.int64
    by_channel = values if channel_axis == 0 else np.moveaxis(values, -1, 0)
    rows = by_channel.reshape(by_channel.shape[0], -1)
    zps = np.asarray(tuple(zero_point) or (0,), dtype=signed)
    zps = zps.reshape(-1, 1) if zps.size == rows.shape[0] else zps[:1]
    return np.subtract(rows, zps, dtype=signed)
