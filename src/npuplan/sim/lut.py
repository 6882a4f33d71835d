"""The activation lookup tables and the NPU's TANH/SIGMOID functions.

An 8-bit table has 256 entries, indexed by the value less the type's minimum (-128 for int8, 0 for
uint8): bytes for an 8-bit OFM, 32-bit values for a 32-bit OFM (Vela's softmax: exp of an int8
difference into int32), given as entries or as the 1024 bytes they occupy. A 16-bit table (an
int16 OFM) has 512 32-bit entries, each a base (low 16 bits, signed) and a slope (high 16 bits,
signed): the value plus 32768 selects entry ``v >> 7`` and the base is interpolated by
``(slope * (v & 127) + 64) >> 7`` (TFLite's int16 table lookup), given as words or 2048 bytes.
"""

from __future__ import annotations

import numpy as np

from npuplan.errors import ValidationError

INT8_ENTRIES, INT16_ENTRIES = 256, 512
INT16_BYTES = INT16_ENTRIES * 4
WIDE_INT8_BYTES = INT8_ENTRIES * 4  # 256 32-bit entries


def _precision_bits(lut: np.ndarray) -> int:
    if lut.size in (INT16_ENTRIES, INT16_BYTES):
        return 16
    if lut.size in (INT8_ENTRIES, WIDE_INT8_BYTES):
        return 8
    raise ValidationError(f"a lookup table has 256 or 512 entries, not {lut.size}")


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
        entries = np.asarray(lut, dtype=np.int64)
        signed = getattr(ofm, "signed", True)
        if entries.size == WIDE_INT8_BYTES:  # the bytes of 256 little-endian int32 entries
            entries = (entries & 0xFF).astype(np.uint8).view("<i4").astype(np.int64)
        elif getattr(ofm, "bits", 8) == 8:
            entries = entries & 0xFF
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


# sigmoid(i / 24), i = 0..255, unsigned Q0.16: the table of TFLite's (and CMSIS-NN's) int16
# LOGISTIC/TANH. Published values, not a formula: 44 of them are one above the rounded function.
SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.int64)


def _interpolated(magnitude: np.ndarray, fraction_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The table interpolated at ``magnitude`` (``fraction_bits`` below the index), and where the
    index saturates."""
    index = magnitude >> fraction_bits
    inside = index < 255
    safe = np.minimum(index, 254)
    low, high = SIGMOID_TABLE[safe], SIGMOID_TABLE[safe + 1]
    fraction = magnitude & ((1 << fraction_bits) - 1)
    return (low << fraction_bits) + fraction * (high - low), inside


def function(values: np.ndarray, *, tanh: bool, bits: int) -> np.ndarray:
    """The NPU's TANH/SIGMOID of values in units of 1/0x3000, as 16-bit results (1/2**15 units; an
    8-bit OFM takes the top 8 bits): TFLite's int16 reference, the interpolated table of
    sigmoid(i/24) (measured bit-exact against LiteRT on Vela's registers)."""
    v = np.asarray(values, dtype=np.int64)
    magnitude = np.abs(v)
    if tanh:
        result, inside = _interpolated(magnitude, 8)
        result = np.where(inside, result, 0xFFFF << 8)
        result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1) >> 8
    else:
        result, inside = _interpolated(magnitude, 9)
        result = np.where(inside, result, 0x7FFF << 10)
        result = np.where(v >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1) >> 10
    return result if bits >= 16 else result >> 8
