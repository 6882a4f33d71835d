"""Encoded weight-stream sizes: what Vela's weight encoder would produce for an op.

The stream is cut depth-ways into OFM depth slices; each slice holds, per core (the OFM channels
``core::cores`` of the slice), 10 bytes of scale & bias per channel padded to 16, then the
weights compressed by the NPU's codec, a multiple of 16 bytes. The encoder walks each core's
weights in the order the datapath reads them, which depends on the OFM block depth and traversal
the op runs with, padding them with zeros (``weight_order``); the codec's size is estimated from
the histogram of the weight values and those zeros (``codec.size``). ``bench/codec_fidelity.py``
measures it against the real codec.
"""

from __future__ import annotations


import numpy as np

from npuplan.codec.size import stream_bytes
from npuplan.codec.weight_order import EncodingOrder, StreamPadding, VolumeGeometry, stream_padding
from npuplan.hw.accelerator import SCALE_BIAS_BYTES, Accelerator
from npuplan.ir.digest import array_digest
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.quantized import signed_channel_rows
from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up

DEFAULT_BLOCK_DEPTH = 16


@record
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
        return round_up(self.scale_bytes, ALIGN_BYTES) + self.weight_bytes


@record
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
        return sum(round_up(s.total_bytes, ALIGN_BYTES) for s in self.slices if s.depth_offset == 0)

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


def encoded_weight_size(op: NpuOp, accel: Accelerator, *, depth_step: int | None = None,
                        order: EncodingOrder | None = None) -> WeightStreamSize:
    """Encoded stream sizes of ``op``'s weights, cut into OFM depth slices of ``depth_step``,
    walked in ``order`` (default: ``default_order(op)``).

    ``depth_step`` of ``None`` encodes the whole OFM depth as one slice. Ops without weights
    give an empty stream. (``WeightEncodings.stream_size`` is the same, memoised for a plan.)
    """
    return WeightEncodings(accel).stream_size(op, depth_step=depth_step, order=order)


def encoding_order(op: NpuOp, block_config: object) -> EncodingOrder:
    """The order the encoder walks ``op``'s weights in when it runs with ``block_config`` (a
    ``hw.block_config.BlockConfig``; ``None`` or anything without an OFM block: ``default_order``).
    Only convolutions traverse part-kernel-first."""
    block = getattr(block_config, "ofm_block", None)
    if block is None:
        return default_order(op)
    part_kernel = op.block_type is BlockType.CONV and bool(getattr(block_config, "is_partkernel", False))
    return EncodingOrder(int(block.depth), part_kernel)


def default_order(op: NpuOp) -> EncodingOrder:
    """Depth-first in blocks of 16 channels (or the OFM depth if less): the order assumed when
    the block config is not known."""
    return EncodingOrder(max(1, min(DEFAULT_BLOCK_DEPTH, op.ofm_shape.c)))


def volume_geometry(op: NpuOp, accel: Accelerator) -> VolumeGeometry:
    """What of ``op``'s weights and ``accel`` decides the encoder's walk (``weight_order``)."""
    assert op.weights is not None
    shape = np.shape(op.weights)
    depthwise = op.block_type is BlockType.DEPTHWISE
    return VolumeGeometry(
        kernel_height=int(shape[1]), kernel_width=int(shape[2]), ifm_depth=1 if depthwise else int(shape[3]),
        depthwise=depthwise, ifm_bits=op.ifm.dtype.bits, dilation_x=op.kernel.dilation_x,
        dilation_y=op.kernel.dilation_y, ofm_ublock_depth=accel.ofm_ublock.depth,
        ifm_ublock_depth=accel.ifm_ublock.depth, sub_kernel_max=accel.sub_kernel_max.height)


class WeightEncodings:
    """The weight encodings of one plan, shared by the scheduler, the command stream and the report:
    each op's ``channel_histograms`` computed once, each OFM depth slice of an op in each order
    encoded once.

    Ops are keyed by what the encoder reads of them (``_encoding_key``: their weights by value), so
    that the equal ops of a model's lowerings (distinct objects: ``NpuOp`` compares by identity)
    share their encodings; each op's key is worked out once, by identity, the op kept alive.
    """

    def __init__(self, accel: Accelerator) -> None:
        self._accel = accel
        self._keys: dict[int, tuple[NpuOp, tuple[object, ...]]] = {}  # id(op) -> (op, its encoding key)
        self._digests: dict[int, tuple[np.ndarray, bytes]] = {}  # id(weights) -> (weights, their digest)
        self._histograms: dict[tuple[object, ...], tuple[np.ndarray, VolumeGeometry]] = {}
        self._ranges: dict[tuple[tuple[object, ...], int, int, EncodingOrder], tuple[WeightSlice, ...]] = {}

    def histograms(self, op: NpuOp) -> np.ndarray:
        """``channel_histograms(op)``, computed on the first request."""
        return self._op(op)[0]

    def _op(self, op: NpuOp) -> tuple[np.ndarray, VolumeGeometry]:
        key = self._key(op)
        found = self._histograms.get(key)
        if found is None:
            found = self._histograms[key] = (channel_histograms(op), volume_geometry(op, self._accel))
        return found

    def _key(self, op: NpuOp) -> tuple[object, ...]:
        found = self._keys.get(id(op))
        if found is None:
            digest = b"" if op.weights is None else self._digest(op.weights)
            found = self._keys[id(op)] = (op, _encoding_key(op, digest))
        return found[1]

    def _digest(self, weights: np.ndarray) -> bytes:
        """A digest of ``weights``' dtype, shape and bytes (once per array, kept alive)."""
        found = self._digests.get(id(weights))
        if found is not None:
            return found[1]
        digest = array_digest(weights)
        self._digests[id(weights)] = (weights, digest)
        return digest

    def slice_parts(self, op: NpuOp, start: int, end: int, order: EncodingOrder | None = None,
                    ) -> tuple[WeightSlice, ...]:
        """The per-core parts of OFM depth slice ``[start, end)`` of ``op``'s weights."""
        order = order or default_order(op)
        key = (self._key(op), start, end, order)
        found = self._ranges.get(key)
        if found is None:
            histograms, geometry = self._op(op)
            found = self._ranges[key] = tuple(
                _encode_range(histograms, geometry, start, end - start, self._accel.cores, order))
        return found

    def slice_bytes(self, op: NpuOp, start: int, end: int, order: EncodingOrder | None = None) -> int:
        """Stream bytes (scales and weights of every core) of OFM depth slice ``[start, end)``."""
        return sum(s.total_bytes for s in self.slice_parts(op, start, end, order))

    def stream_size(self, op: NpuOp, *, depth_step: int | None = None,
                    order: EncodingOrder | None = None) -> WeightStreamSize:
        """``encoded_weight_size(op, accel, depth_step=depth_step, order=order)`` from the memo."""
        if op.weights is None:
            return WeightStreamSize(())
        ofm_depth = self.histograms(op).shape[0]
        step = ofm_depth if depth_step is None or depth_step <= 0 else depth_step
        slices: list[WeightSlice] = []
        for start in range(0, ofm_depth, step):
            slices += self.slice_parts(op, start, min(start + step, ofm_depth), order)
        return WeightStreamSize(tuple(slices))


def _encode_range(histograms: np.ndarray, geometry: VolumeGeometry, start: int, depth: int, cores: int,
                  order: EncodingOrder) -> list[WeightSlice]:
    """The per-core parts of OFM depth slice ``[start, start + depth)``, from ``channel_histograms``:
    core ``c`` codes channels ``start + c::cores`` with a block depth of its share of the block's."""
    found = []
    for core in range(min(cores, depth)):
        core_block_depth = (order.block_depth + cores - 1 - core) // cores
        if core_block_depth == 0:
            continue
        part = histograms[start + core : start + depth : cores]
        core_order = order if cores == 1 else EncodingOrder(core_block_depth, order.part_kernel)
        padding = stream_padding(geometry, part.shape[0], core_order)
        found.append(WeightSlice(start, depth, core, _encoded_bytes(part.sum(axis=0), padding),
                                 SCALE_BIAS_BYTES * part.shape[0]))
    return found


def _encoded_bytes(counts: np.ndarray, padding: StreamPadding) -> int:
    """Encoded weight bytes (a multiple of 16) of the values with palette-value histogram ``counts``
    walked with ``padding``. Blocks that overlap (a block depth that is not a micro-block
    multiple) code some channels twice: their values are counted in proportion."""
    real = int(counts.sum())
    if real and padding.real_values != real:
        counts = np.rint(counts * (padding.real_values / real)).astype(np.int64)
    return stream_bytes(counts, padding)


def estimate_volume_bytes(values_ohwi: np.ndarray, accel: Accelerator, *, order: EncodingOrder, ifm_bits: int = 8,
                          depthwise: bool = False, dilation_xy: tuple[int, int] = (1, 1)) -> int:
    """Estimated encoded bytes (weights only, a multiple of 16, one core) of a signed OHWI weight
    volume (depthwise: ``C x H x W x 1``), as ``npu_encode_weights`` would code it in ``order``."""
    o, h, w, i = values_ohwi.shape
    geometry = VolumeGeometry(h, w, 1 if depthwise else i, depthwise, ifm_bits, dilation_xy[0], dilation_xy[1],
                              accel.ofm_ublock.depth, accel.ifm_ublock.depth, accel.sub_kernel_max.height)
    counts = _palette_histograms(np.asarray(values_ohwi, dtype=np.int64).reshape(1, -1))[0]
    return _encoded_bytes(counts, stream_padding(geometry, o, order))


def _palette_histograms(rows: np.ndarray) -> np.ndarray:
    """Per row of the 2-D integer array ``rows``, the histogram of its palette values ``2|w| +
    (w < 0)`` (``[rows, largest palette value + 1]``). Counted by value first (one pass over the
    weights), then each value's count moved to its palette value."""
    n = rows.shape[0]
    if rows.size == 0:
        return np.zeros((n, 1), dtype=np.int64)
    low, high = int(rows.min()), int(rows.max())
    span = high - low + 1
    # each row's values counted in a band of bins of its own; int32 indices while the bands fit
    index_type = np.int32 if n * span < 2**31 else np.int64
    offsets = np.arange(n, dtype=index_type)[:, None] * span - low
    by_value = np.bincount(np.add(rows, offsets, dtype=index_type).ravel(), minlength=n * span).reshape(n, span)
    # zig-zag first (a contiguous scatter, several times faster than the palette values' gapped
    # one), then the negative values' odd bins 2|w| - 1 moved up to 2|w| + 1
    values = np.arange(low, high + 1, dtype=np.int64)
    zigzag = np.where(values < 0, -2 * values - 1, 2 * values)
    by_zigzag = np.zeros((n, int(zigzag.max()) + 1), dtype=np.int64)
    by_zigzag[:, zigzag] = by_value
    histograms = np.zeros((n, by_zigzag.shape[1] + (2 if low < 0 else 0)), dtype=np.int64)
    histograms[:, 0::2][:, : (by_zigzag.shape[1] + 1) // 2] = by_zigzag[:, 0::2]
    if low < 0:
        histograms[:, 3::2] = by_zigzag[:, 1::2]
    return histograms


def _encoding_key(op: NpuOp, weights_digest: bytes) -> tuple[object, ...]:
    """Everything ``channel_histograms`` and ``volume_geometry`` read of ``op``, its weights by
    ``weights_digest``: ops with equal keys encode alike."""
    quant = op.weight_tensor.quant if op.weight_tensor is not None else None
    zero_point = tuple(quant.zero_point) if quant is not None and quant.zero_point else (0,)
    return (weights_digest, zero_point, op.block_type is BlockType.DEPTHWISE, op.ifm.dtype.bits,
            op.kernel.dilation_x, op.kernel.dilation_y)


def channel_histograms(op: NpuOp) -> np.ndarray:
    """Per OFM channel, the histogram of its signed weights' palette values (``[channels, bins]``):
    a slice's histogram is the sum of its channels' rows, so slices of any boundary cost a sum."""
    assert op.weights is not None
    quant = op.weight_tensor.quant if op.weight_tensor is not None else None
    zero_point = quant.zero_point if quant is not None and quant.zero_point else (0,)
    channel_axis = -1 if op.block_type is BlockType.DEPTHWISE else 0
    return _palette_histograms(signed_channel_rows(op.weights, zero_point, channel_axis))


def slice_bytes_of_histograms(histograms: np.ndarray, geometry: VolumeGeometry, start: int, end: int, cores: int,
                              order: EncodingOrder) -> int:
    """Encoded bytes (scales and weights of every core) of OFM depth slice ``[start, end)``,
    exactly as ``encoded_weight_size`` sizes it, from ``channel_histograms``."""
    return sum(s.total_bytes for s in _encode_range(histograms, geometry, start, end - start, cores, order))


def weight_slice_sizes(
    op: NpuOp, accel: Accelerator, block_config: object, depth_slices: tuple[int, ...],
) -> tuple[int, ...]:
    """Stream bytes of each OFM depth slice ``depth_slices[k]..depth_slices[k+1]`` (any cuts, not
    only even ones): per core, scales padded to 16 then the compressed weights, a multiple of 16.
    ``block_config`` orders the stream (``encoding_order``), which changes the zeros it pads."""
    if op.weights is None:
        return tuple(0 for _ in depth_slices[1:])
    encodings = WeightEncodings(accel)
    order = encoding_order(op, block_config)
    return tuple(encodings.slice_bytes(op, start, end, order) for start, end in zip(depth_slices, depth_slices[1:]))
