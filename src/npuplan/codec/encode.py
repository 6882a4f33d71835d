"""Weight and bias streams for the NPU, as Vela's ``npu_encode_weights`` and ``npu_encode_bias``
produce them, in npuplan's own vectorised code (no Vela types: enums are plain values).

``encode_weights`` walks an OHWI volume in the NPU's brick order (``brick_order``) and codes it in
the Ethos-U weight compression format (``symbols`` chooses what to code, ``chunks`` lays it out);
``decode.decode_weights`` reads such a stream back (imported from there: the emitter never
decodes, so it does not load the decoder). The streams are not Vela's bit for bit
(Vela searches its parameters along the stream) but decode to the same values.
"""

from __future__ import annotations


import numpy as np

from npuplan.codec.bits import or_bits, pack_fields, pack_uniform
from npuplan.codec.brick_order import BrickGeometry, brick_order
from npuplan.codec.chunks import layout, weight_chunks, zero_run_chunks
from npuplan.codec.symbols import StreamSymbols, stream_symbols
from npuplan.records import record
from npuplan.units import ALIGN_BYTES

__all__ = ["encode_biases", "encode_values", "encode_weights"]

MAX_SLICE_VALUES = 32767  # SLICELEN holds the count minus one in 15 bits (Vela keeps below 32768)
NO_ZERO_RUNS = 6
END_OF_STREAM = 7
UNCOMPRESSED = 7
BIAS_RECORD_BYTES = 10
BIAS_BITS = 40
MULTIPLIER_BITS = 32
SHIFT_BITS = 6


def encode_weights(volume: np.ndarray, *, ofm_ublock_depth: int, ifm_ublock_depth: int, dilation_xy: tuple[int, int],
                   ifm_bits: int, ofm_block_depth: int, depthwise: bool, part_kernel_first: bool) -> bytes:
    """The weight stream of ``volume`` (OHWI integers -255..255, zero point removed; depthwise:
    C x H x W x 1) for an accelerator with micro-blocks ``ofm_ublock_depth``/``ifm_ublock_depth``
    deep (channels), run with OFM blocks ``ofm_block_depth`` deep, IFM elements of ``ifm_bits``,
    dilation (x, y) 1 or 2: the bytes (a multiple of 16) the NPU's weight decoder reads."""
    if depthwise and part_kernel_first:
        raise ValueError("a depthwise weight volume has no part-kernel-first traversal")
    if any(d not in (1, 2) for d in dilation_xy):
        raise ValueError(f"weight streams support dilation 1 or 2, not {dilation_xy}")
    if volume.ndim != 4:
        raise ValueError(f"a weight volume is OHWI (4 axes), not of shape {volume.shape}")
    o, h, w, i = (int(n) for n in volume.shape)
    geom = BrickGeometry((o, h, w, i), ofm_ublock_depth, ifm_ublock_depth, ofm_block_depth, ifm_bits,
                         (int(dilation_xy[0]), int(dilation_xy[1])), depthwise, part_kernel_first)
    return encode_values(brick_order(volume, geom))


def encode_values(values: np.ndarray) -> bytes:
    """``values`` (1-D, -255..255, in stream order) in the weight compression format, with the end
    marker and padding to 16 bytes; empty for no values."""
    values = np.asarray(values).reshape(-1)
    if not values.size:
        return b""
    symbols = stream_symbols(values)
    slices = []
    bit = 0
    for start, end, divisor_bits in _slice_bounds(symbols):
        piece = _slice(symbols, start, end, divisor_bits, bit)
        slices.append(piece)
        bit = piece.end_bit
    size = -(-(bit + 3) // 8)
    offsets = np.concatenate([s.offsets for s in slices] + [np.array([bit])])
    fields = np.concatenate([s.values for s in slices] + [np.array([END_OF_STREAM])])
    data = np.zeros(size + -size % ALIGN_BYTES + 8, dtype=np.uint8)  # slack for the bodies' last bytes
    data[:size] = np.frombuffer(pack_fields(offsets, fields, bit + 3), dtype=np.uint8)
    for piece in slices:
        if piece.body is not None:
            or_bits(data, piece.body, piece.body_bit)
    data = data[:size + -size % ALIGN_BYTES]
    data[size - 1] |= 0xFF & ~((1 << ((bit + 3 - 1) % 8 + 1)) - 1)  # ones after the end marker
    data[size:] = 0xFF
    return data.tobytes()


@record(eq=False)
class _Slice:
    """One slice's bits: fields (bit offsets, values), perhaps a body of packed bytes from bit
    ``body_bit`` on, and the bit after the slice."""

    offsets: np.ndarray
    values: np.ndarray
    end_bit: int
    body: np.ndarray | None = None
    body_bit: int = 0


def _slice_bounds(symbols: StreamSymbols) -> list[tuple[int, int, int]]:
    """(first index, index after, zero-run divisor bits) of each slice: one wherever the divisor
    changes, none longer than the slice length field holds."""
    bounds = []
    start = 0
    for end, divisor_bits in symbols.zero_run_segments:
        for first in range(start, end, MAX_SLICE_VALUES):
            bounds.append((first, min(first + MAX_SLICE_VALUES, end), divisor_bits))
        start = end
    return bounds


def _slice(symbols: StreamSymbols, start: int, end: int, zero_run_divisor_bits: int, first_bit: int) -> _Slice:
    """The slice of ``symbols`` from index ``start`` to ``end`` (the first slice: with the palette)
    at ``first_bit``."""
    first = start == 0
    indices = symbols.indices[start:end]
    weight = symbols.weight
    header = [(3, zero_run_divisor_bits if symbols.zero_runs is not None else NO_ZERO_RUNS),
              (15, indices.size - 1), (3, UNCOMPRESSED if weight.uncompressed else weight.divisor_bits),
              (1, int(weight.truncated)), (1, int(first))]
    if first:
        header += [(5, symbols.direct_offset), (5, max(0, len(symbols.palette) - 1)), (3, symbols.palette_bits - 2)]
        header += [(symbols.palette_bits, v) for v in symbols.palette]
    ends = np.cumsum([w for w, _ in header]) + first_bit
    header_offsets, header_values = ends - [w for w, _ in header], np.array([v for _, v in header], dtype=np.int64)
    body_bit = int(ends[-1])
    if weight.uncompressed and symbols.zero_runs is None:  # no unary parts: the indices back to back
        return _Slice(header_offsets, header_values, body_bit + indices.size * weight.divisor_bits,
                      pack_uniform(indices, weight.divisor_bits), body_bit)
    runs = None
    if symbols.zero_runs is not None:  # the first slice also has the run before its first value
        runs = zero_run_chunks(symbols.zero_runs[start + (not first):end + 1], zero_run_divisor_bits)
    chunks = weight_chunks(indices, weight.divisor_bits, truncated=weight.truncated, uncompressed=weight.uncompressed)
    offsets, values, bit = layout(chunks, runs, body_bit)
    return _Slice(np.concatenate([header_offsets, offsets]), np.concatenate([header_values, values]), bit)


def encode_biases(biases: np.ndarray, multipliers: np.ndarray, shifts: np.ndarray) -> bytes:
    """The 10-byte record of each output channel: 40-bit two's complement bias, 32-bit
    multiplier, 6-bit shift (two top bits zero), little-endian; ``ValueError`` out of range."""
    bias = np.asarray(biases, dtype=np.int64).reshape(-1)
    multiplier = np.asarray(multipliers, dtype=np.int64).reshape(-1)
    shift = np.asarray(shifts, dtype=np.int64).reshape(-1)
    if not bias.size == multiplier.size == shift.size:
        raise ValueError(f"{bias.size} biases, {multiplier.size} multipliers, {shift.size} shifts")
    if bias.size and (bias.min() < -(1 << (BIAS_BITS - 1)) or bias.max() >= 1 << (BIAS_BITS - 1)):
        raise ValueError("a bias outside the signed 40-bit range")
    if multiplier.size and (multiplier.min() < 0 or multiplier.max() >= 1 << MULTIPLIER_BITS):
        raise ValueError("a multiplier outside the unsigned 32-bit range")
    if shift.size and (shift.min() < 0 or shift.max() >= 1 << SHIFT_BITS):
        raise ValueError("a shift outside 0..63")
    records = np.empty((bias.size, BIAS_RECORD_BYTES), dtype=np.uint8)
    records[:, :5] = bias.astype("<i8").view(np.uint8).reshape(-1, 8)[:, :5]
    records[:, 5:9] = multiplier.astype("<u4").view(np.uint8).reshape(-1, 4)
    records[:, 9] = shift
    return records.tobytes()
