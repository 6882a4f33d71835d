"""Encoded weight-stream sizes: what Vela's weight encoder would produce for an op.

The stream is cut depth-ways into OFM depth slices; each slice holds, per core (the OFM channels
``core::cores`` of the slice), 10 bytes of scale & bias per channel padded to 16, then the
weights compressed by the NPU's codec, padded to 16. The codec's size is estimated from the
actual weight values: the cheaper of raw 8-bit storage, Golomb-Rice coding of the zig-zagged
values and Golomb-Rice coding of palette indices (32 entries max), plus a small header.
Measured against the real codec on the public models this is within ~1% per model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from npuplan.hw.accelerator import Accelerator
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.quantized import signed_channel_rows

ALIGN_BYTES = 16
SCALE_BIAS_BYTES = 10  # 40-bit bias, 32-bit scale, 6-bit shift per OFM channel
STREAM_HEADER_BYTES = 8
MAX_GRC_DIVISOR_BITS = 8
PALETTE_ENTRIES = 32
PALETTE_ENTRY_BITS = 9


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


@dataclass(frozen=True, slots=True)
class WeightSlice:
    """One core's part of one OFM depth slice: sizes in bytes, ``weight_bytes`` already 16-aligned."""

    depth_offset: int
    depth: int
    core: int
    weight_bytes: int
    scale_bytes: int

    @property
    def total_bytes(self) -> int:
        """Bytes this range occupies in the stream (scales padded to 16, then weights)."""
        return _round_up(self.scale_bytes, ALIGN_BYTES) + self.weight_bytes


@dataclass(frozen=True, slots=True)
class WeightStreamSize:
    """Sizes of an op's encoded weight stream, per (depth slice, core) and in total."""

    slices: tuple[WeightSlice, ...]

    @property
    def weight_bytes(self) -> int:
        """Encoded weight bytes without scales (what Vela's ``total_npu_encoded_weights`` sums)."""
        return sum(s.weight_bytes for s in self.slices)

    @property
    def scale_bytes(self) -> int:
        return sum(s.scale_bytes for s in self.slices)

    @property
    def stream_bytes(self) -> int:
        """The whole stream: every range with its alignment (the size of the DMA'd tensor)."""
        return sum(s.total_bytes for s in self.slices)

    @property
    def first_slice_bytes(self) -> int:
        """Bytes that must arrive before the op starts (first depth slice, all cores)."""
        return sum(_round_up(s.total_bytes, ALIGN_BYTES) for s in self.slices if s.depth_offset == 0)

    @property
    def depth_offsets(self) -> tuple[int, ...]:
        """Slice start offsets closed by the OFM depth (``(0, 16, 64)``)."""
        starts = sorted({s.depth_offset for s in self.slices})
        end = max((s.depth_offset + s.depth for s in self.slices), default=0)
        return (*starts, end)

    @property
    def double_buffer_bytes(self) -> int:
        """Size of a double buffer: the largest even-indexed plus the largest odd-indexed slice."""
        per_slice: dict[int, int] = {}
        for s in self.slices:
            per_slice[s.depth_offset] = per_slice.get(s.depth_offset, 0) + s.total_bytes
        sizes = [per_slice[k] for k in sorted(per_slice)]
        return max(sizes[0::2], default=0) + max(sizes[1::2], default=0)


@functools.lru_cache(maxsize=None)
def _grc_code_bits(bins: int) -> np.ndarray:
    """``[divisor bits k, value v]``: bits of the Golomb-Rice code of each value ``0..bins-1`` at
    each divisor ``2**k`` (unary quotient, a stop bit, ``k`` remainder bits)."""
    k = np.arange(MAX_GRC_DIVISOR_BITS + 1, dtype=np.int64)[:, None]
    table = (np.arange(bins, dtype=np.int64) >> k) + 1 + k
    table.flags.writeable = False
    return table


def _grc_bits(counts: np.ndarray) -> int:
    """Bits to Golomb-Rice code the values ``0..len(counts)-1``, each ``counts[v]`` times, at the
    best divisor (all tried at once)."""
    return int((_grc_code_bits(len(counts)) @ counts).min())


def estimate_compressed_bits(values: np.ndarray) -> int:
    """Estimated codec bits for signed weight ``values`` (zero point already removed)."""
    v = values.astype(np.int64).reshape(1, -1)
    if v.size == 0:
        return 0
    return compressed_bits_of_counts(_zigzag_histograms(v)[0])


def _zigzag_histograms(rows: np.ndarray) -> np.ndarray:
    """Per row of the 2-D integer array ``rows``, the histogram of its zig-zagged values (``[rows,
    bins]``, up to the largest zig-zagged value anywhere). Counted by value first (one pass over
    the weights instead of one per step of the zig-zag), then each value's count moved to its
    zig-zag bin."""
    n = rows.shape[0]
    if rows.size == 0:
        return np.zeros((n, 1), dtype=np.int64)
    low, high = int(rows.min()), int(rows.max())
    span = high - low + 1
    # each row's values counted in a band of bins of its own; int32 indices while the bands fit
    index_type = np.int32 if n * span < 2**31 else np.int64
    offsets = np.arange(n, dtype=index_type)[:, None] * span - low
    by_value = np.bincount(np.add(rows, offsets, dtype=index_type).ravel(), minlength=n * span).reshape(n, span)
    values = np.arange(low, high + 1, dtype=np.int64)
    zigzag = np.where(values < 0, -2 * values - 1, 2 * values)
    histograms = np.zeros((n, int(zigzag.max()) + 1), dtype=np.int64)
    histograms[:, zigzag] = by_value
    return histograms


def compressed_bits_of_counts(counts: np.ndarray) -> int:
    """``estimate_compressed_bits`` from the histogram of the zig-zagged values."""
    size = int(counts.sum())
    if size == 0:
        return 0
    direct = _grc_bits(counts)
    freq = np.sort(counts[counts > 0])[::-1]
    palette = direct
    if len(freq) <= PALETTE_ENTRIES:
        palette = _grc_bits(freq) + PALETTE_ENTRY_BITS * len(freq)
    return min(8 * size, direct, palette)


def encoded_weight_size(op: NpuOp, accel: Accelerator, *, depth_step: int | None = None) -> WeightStreamSize:
    """Encoded stream sizes of ``op``'s weights, cut into OFM depth slices of ``depth_step``.

    ``depth_step`` of ``None`` encodes the whole OFM depth as one slice. Ops without weights
    give an empty stream. (``WeightEncodings.stream_size`` is the same, memoised for a plan.)
    """
    return WeightEncodings(accel).stream_size(op, depth_step=depth_step)


class WeightEncodings:
    """The weight encodings of one plan, shared by the scheduler, the command stream and the report:
    each op's ``channel_histograms`` computed once, each OFM depth slice of an op encoded once.

    Ops are keyed by identity (``NpuOp`` compares by identity) and kept alive by the memo.
    """

    def __init__(self, accel: Accelerator) -> None:
        self._cores = accel.cores
        self._histograms: dict[NpuOp, np.ndarray] = {}
        self._ranges: dict[tuple[NpuOp, int, int], tuple[WeightSlice, ...]] = {}

    def histograms(self, op: NpuOp) -> np.ndarray:
        """``channel_histograms(op)``, computed on the first request."""
        found = self._histograms.get(op)
        if found is None:
            found = self._histograms[op] = channel_histograms(op)
        return found

    def slice_parts(self, op: NpuOp, start: int, end: int) -> tuple[WeightSlice, ...]:
        """The per-core parts of OFM depth slice ``[start, end)`` of ``op``'s weights."""
        key = (op, start, end)
        found = self._ranges.get(key)
        if found is None:
            found = self._ranges[key] = tuple(_encode_range(self.histograms(op), start, end - start, self._cores))
        return found

    def slice_bytes(self, op: NpuOp, start: int, end: int) -> int:
        """Stream bytes (scales and weights of every core) of OFM depth slice ``[start, end)``."""
        return sum(s.total_bytes for s in self.slice_parts(op, start, end))

    def stream_size(self, op: NpuOp, *, depth_step: int | None = None) -> WeightStreamSize:
        """``encoded_weight_size(op, accel, depth_step=depth_step)`` from the memoised slices."""
        if op.weights is None:
            return WeightStreamSize(())
        ofm_depth = self.histograms(op).shape[0]
        step = ofm_depth if depth_step is None or depth_step <= 0 else depth_step
        slices: list[WeightSlice] = []
        for start in range(0, ofm_depth, step):
            slices += self.slice_parts(op, start, min(start + step, ofm_depth))
        return WeightStreamSize(tuple(slices))


def _encode_range(histograms: np.ndarray, start: int, depth: int, cores: int) -> list[WeightSlice]:
    """The per-core parts of OFM depth slice ``[start, start + depth)``, from ``channel_histograms``."""
    found = []
    for core in range(min(cores, depth)):
        part = histograms[start + core : start + depth : cores]
        found.append(WeightSlice(start, depth, core, _encoded_bytes(part), SCALE_BIAS_BYTES * part.shape[0]))
    return found


def _encoded_bytes(channel_rows: np.ndarray) -> int:
    """Encoded weight bytes (16-aligned, header included) of the channels whose histograms these are."""
    return _round_up(compressed_bits_of_counts(channel_rows.sum(axis=0)) // 8 + STREAM_HEADER_BYTES, ALIGN_BYTES)


def channel_histograms(op: NpuOp) -> np.ndarray:
    """Per OFM channel, the histogram of its zig-zagged signed weights (``[channels, bins]``):
    a slice's histogram is the sum of its channels' rows, so slices of any boundary cost a sum."""
    assert op.weights is not None
    quant = op.weight_tensor.quant if op.weight_tensor is not None else None
    zero_point = quant.zero_point if quant is not None and quant.zero_point else (0,)
    channel_axis = -1 if op.block_type is BlockType.DEPTHWISE else 0
    return _zigzag_histograms(signed_channel_rows(op.weights, zero_point, channel_axis))


def slice_bytes_of_histograms(histograms: np.ndarray, start: int, end: int, cores: int) -> int:
    """Encoded bytes (scales and weights of every core) of OFM depth slice ``[start, end)``,
    exactly as ``encoded_weight_size`` sizes it, from ``channel_histograms``."""
    return sum(s.total_bytes for s in _encode_range(histograms, start, end - start, cores))


def weight_slice_sizes(
    op: NpuOp, accel: Accelerator, block_config: object, depth_slices: tuple[int, ...],
) -> tuple[int, ...]:
    """Stream bytes of each OFM depth slice ``depth_slices[k]..depth_slices[k+1]`` (any cuts, not
    only even ones): per core, scales padded to 16 then the compressed weights padded to 16.
    ``block_config`` does not change the sizes (it only orders the stream)."""
    del block_config
    if op.weights is None:
        return tuple(0 for _ in depth_slices[1:])
    encodings = WeightEncodings(accel)
    return tuple(encodings.slice_bytes(op, start, end) for start, end in zip(depth_slices, depth_slices[1:]))
