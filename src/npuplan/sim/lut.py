"""The activation lookup tables and the NPU's TANH/SIGMOID functions.

An 8-bit table has 256 entries, indexed by the value less the type's minimum (-128 for int8, 0 for
uint8). A 16-bit table has 512 32-bit entries, each a base (low 16 bits, signed) and a slope
(high 16 bits, signed): the value plus 32768 selects entry ``v >> 7`` and the base is
interpolated by ``(slope * (v & 127) + 64) >> 7`` (TFLite's int16 table lookup).
"""

from __future__ import annotations

import numpy as np

INT8_ENTRIES, INT16_ENTRIES = 256, 512
INT16_BYTES = INT16_ENTRIES * 4
FUNCTION_UNITS = 0x3000  # TANH/SIGMOID inputs are in units of 1/0x3000


def _precision_bits(lut: np.ndarray) -> int:
    if lut.size in (INT16_ENTRIES, INT16_BYTES):
        return 16
    if lut.size == INT8_ENTRIES:
        return 8
    raise ValueError(f"a lookup table has 256 or 512 entries, not {lut.size}")


def _words(lut: np.ndarray) -> np.ndarray:
    """A 16-bit table's 512 entries as unsigned 32-bit values (given as words or as 2048 bytes)."""
    lut = np.asarray(lut, dtype=np.int64)
    if lut.size == INT16_BYTES:
        return (lut & 0xFF).astype(np.uint8).view("<u4").astype(np.int64)
    return lut & 0xFFFF_FFFF


def input_range(lut: np.ndarray, ofm: object) -> tuple[int, int]:
    """The values a table maps: int8 (uint8 for an unsigned OFM) or int16."""
    if _precision_bits(lut) == 16:
        return -(1 << 15), (1 << 15) - 1
    return (-128, 127) if getattr(ofm, "signed", True) else (0, 255)


def table(values: np.ndarray, lut: np.ndarray, ofm: object) -> np.ndarray:
    """``values`` (already in the table's input range) looked up in ``lut``."""
    values = np.asarray(values, dtype=np.int64)
    if _precision_bits(lut) == 8:
        entries = np.asarray(lut, dtype=np.int64) & 0xFF
        signed = getattr(ofm, "signed", True)
        if signed:
            entries = np.where(entries >= 128, entries - 256, entries)
        low = -128 if signed else 0
        return entries[values - low]
    words = _words(lut)
    base = words & 0xFFFF
    base = np.where(base >= 1 << 15, base - (1 << 16), base)
    slope = words >> 16
    slope = np.where(slope >= 1 << 15, slope - (1 << 16), slope)
    biased = values + (1 << 15)
    index, fraction = biased >> 7, biased & 0x7F
    return base[index] + ((slope[index] * fraction + 64) >> 7)


def function(values: np.ndarray, *, tanh: bool, bits: int) -> np.ndarray:
    """The NPU's TANH/SIGMOID of values in units of 1/0x3000, in the OFM's full scale (1/2**15 for
    16 bits, 1/2**7 for 8), rounded half away from zero. The hardware's own approximation is not
    public: this is the exact function, rounded."""
    x = np.asarray(values, dtype=np.float64) / FUNCTION_UNITS
    y = np.tanh(x) if tanh else 1.0 / (1.0 + np.exp(-x))
    scaled = y * (1 << (bits - 1))
    return (np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)).astype(np.int64)
