"""Bit fields in and out of the weight stream: fields are little-endian, least significant bit
first, packed back to back from bit 0 of byte 0 (the codec's bit order)."""

from __future__ import annotations

import numpy as np

MAX_FIELD_BITS = 32  # a field's value shifted within its 32-bit word stays below 2**63


def pack_fields(offsets: np.ndarray, values: np.ndarray, total_bits: int) -> bytearray:
    """Bytes (``ceil(total_bits / 8)``) holding each ``values[i]`` (non-negative, at most 32 bits)
    at bit ``offsets[i]``; fields must not overlap (their bits are summed, not or-ed). Bits no
    field covers are zero; fields of value zero may lie anywhere.

    Each field lands in one or two 32-bit words: two weighted histograms over the words (the
    parts below and above the word boundary) add them up, exactly (float64 holds 32-bit sums)."""
    words = -(-total_bits // 32) + 1
    offsets = offsets.astype(np.int64, copy=False)
    shifted = values.astype(np.int64, copy=False) << (offsets & 31)
    word = offsets >> 5
    low = np.bincount(word, weights=shifted & 0xFFFFFFFF, minlength=words)
    high = np.bincount(word + 1, weights=shifted >> 32, minlength=words)
    packed = (low[:words] + high[:words]).astype(np.uint32).astype("<u4")  # zero fields may lie past the end
    return bytearray(packed.tobytes()[:-(-total_bits // 8)])


PIECE_BITS = 24  # what one unaligned 32-bit read always holds whole
_SLACK_BYTES = 16


def pack_uniform(values: np.ndarray, width: int) -> np.ndarray:
    """``values`` (non-negative, below ``2**width``, width 0..16) back to back, ``width`` bits
    each, as bytes (uint8, padded with zero bits to a whole group of 8 values)."""
    if width == 0 or not values.size:
        return np.zeros(1, dtype=np.uint8)
    if width == 8:
        return values.astype(np.uint8)
    groups = np.zeros(-(-values.size // 8) * 8, dtype=np.uint64)
    groups[:values.size] = values
    rows = groups.reshape(-1, 8)
    if width <= 8:  # 8 values fill ``width`` bytes of one 64-bit word
        word = np.bitwise_or.reduce(rows << (np.arange(8, dtype=np.uint64) * np.uint64(width)), axis=1)
        return word.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :width].ravel()
    bits = np.unpackbits(groups.astype("<u2").view(np.uint8).reshape(-1, 2), axis=1, bitorder="little")
    return np.packbits(bits[:, :width].ravel(), bitorder="little")


def bit_pieces(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The value of each bit range ``starts[i]``, ``lengths[i]`` (at most 24 bits) of ``data``
    (bytes as uint8, bit order as the stream's)."""
    padded = np.zeros(data.size + _SLACK_BYTES + 3, dtype=np.uint8)  # empty pieces may start past the end
    padded[:data.size] = data
    windows = np.ndarray((data.size + _SLACK_BYTES, 4), dtype=np.uint8, buffer=padded, strides=(1, 1))
    word = windows[starts >> 3].view("<u4").reshape(-1).astype(np.int64)
    return (word >> (starts & 7)) & ((np.int64(1) << lengths) - 1)


def ranges_as_pieces(data: np.ndarray, source_starts: np.ndarray, lengths: np.ndarray,
                     target_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fields (target offsets, values) copying bit ranges of ``data`` (at ``source_starts``,
    ``lengths`` bits each) to ``target_starts``, in pieces of at most 24 bits (the ranges' pieces
    side by side, empty ones as zeros)."""
    pieces = -(-int(lengths.max(initial=0)) // PIECE_BITS)
    if not pieces:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if pieces == 1:
        return target_starts, bit_pieces(data, source_starts, lengths)
    step = np.arange(0, pieces * PIECE_BITS, PIECE_BITS)
    length = np.clip(lengths[:, None] - step, 0, PIECE_BITS).ravel()
    return (target_starts[:, None] + step).ravel(), bit_pieces(data, (source_starts[:, None] + step).ravel(), length)


def or_bits(out: np.ndarray, data: np.ndarray, offset_bits: int) -> None:
    """ORs the bits of ``data`` (bytes as uint8) into ``out`` (uint8, long enough) from bit
    ``offset_bits`` on."""
    byte, shift = offset_bits >> 3, offset_bits & 7
    if not shift:
        out[byte:byte + data.size] |= data
        return
    wide = data.astype(np.uint16) << shift
    out[byte:byte + data.size] |= wide.astype(np.uint8)
    out[byte + 1:byte + 1 + data.size] |= (wide >> 8).astype(np.uint8)


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
