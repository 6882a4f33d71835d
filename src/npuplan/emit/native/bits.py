"""Bit fields in and out of the weight stream: fields are little-endian, least significant bit
first, packed back to back from bit 0 of byte 0 (the codec's bit order)."""

from __future__ import annotations

import numpy as np

MAX_FIELD_BITS = 16  # the widest field: 15-bit slice length (a shifted field spans at most 3 bytes)
_LANES = 3


def pack_fields(offsets: np.ndarray, values: np.ndarray, total_bits: int) -> bytearray:
    """Bytes (``ceil(total_bits / 8)``) holding each ``values[i]`` (non-negative, at most 16 bits)
    at bit ``offsets[i]``; fields must not overlap (their bits are summed, not or-ed). Bits no
    field covers are zero."""
    size = -(-total_bits // 8)
    keep = values != 0
    offsets = offsets[keep].astype(np.int64, copy=False)
    shifted = values[keep].astype(np.int64) << (offsets & 7)
    first = offsets >> 3
    out = np.zeros(size + _LANES, dtype=np.float64)
    for lane in range(_LANES):
        part = (shifted >> (8 * lane)) & 0xFF
        out += np.bincount(first + lane, weights=part, minlength=size + _LANES)
    return bytearray(out[:size].astype(np.uint8).tobytes())


class BitReader:
    """Reads fields of a stream in order (``read(bits)``), from bit 0 of byte 0."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data) + bytes(8)
        self.size_bytes = len(data)
        self.position_bits = 0

    def read(self, bits: int) -> int:
        """The next ``bits`` bits as an unsigned integer (0 for 0 bits); raises ``ValueError``
        past the end of the stream."""
        if bits == 0:
            return 0
        pos = self.position_bits
        end = pos + bits
        if end > 8 * self.size_bytes:
            raise ValueError(f"weight stream ends at byte {self.size_bytes}: field of {bits} bits at bit {pos}")
        chunk = int.from_bytes(self.data[pos >> 3:(end + 7) >> 3], "little")
        self.position_bits = end
        return (chunk >> (pos & 7)) & ((1 << bits) - 1)

    def align_byte(self) -> None:
        """Skips to the next whole byte."""
        self.position_bits = -(-self.position_bits // 8) * 8

    @property
    def at_end(self) -> bool:
        return self.position_bits >= 8 * self.size_bytes
