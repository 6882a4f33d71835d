"""Weights, biases and scales encoded for the hardware through the emitting backend, slice by slice.

Each weight slice of the plan (an OFM depth range) becomes one contiguous record: the bias/scale
stream (10 bytes per output channel: 40-bit bias, 32-bit multiplier, 6-bit shift), padded to 16
bytes, then the compressed weight stream, padded to 16 bytes. One DMA moves a whole record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import ModuleType

import numpy as np

from npuplan.commands.types import WeightSlice
from npuplan.lowering.fixedpoint import quantise_scale, quantise_scales, reduced_quantise_scale
from npuplan.errors import EmitError
from npuplan.hw.accelerator import SCALE_BIAS_BYTES
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.types import DataType
from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up


def _padded(data: bytes) -> list[bytes]:
    """``data`` and the zero bytes that pad it to 16 (none when it is aligned), to join once."""
    pad = -len(data) % ALIGN_BYTES
    return [data, bytes(pad)] if pad else [data]


@record(eq=False)
class CoreStreams:
    """Where one core's streams lie inside a slice's record (bytes from its start, 16-byte padded)."""

    scale_offset: int
    scale_bytes: int
    weight_offset: int
    weight_bytes: int


@record(eq=False)
class EncodedSlice:
    """One slice's record: ``data``, for each core in turn its scale stream then its weight
    stream (each 16-byte padded; Vela's layout), and where each core's streams lie (``cores``)."""

    index: int
    depth_start: int
    depth_end: int
    data: bytes
    cores: tuple[CoreStreams, ...]

    @property
    def size_bytes(self) -> int:
        return len(self.data)


@record(eq=False)
class EncodedOp:
    """An op's encoded slices (by slice index), its weight traversal and the OFM block depth used."""

    op: str
    slices: tuple[EncodedSlice, ...]
    part_kernel_first: bool
    block_depth: int

    @property
    def stream_bytes(self) -> int:
        return sum(s.size_bytes for s in self.slices)


class SliceMemo:
    """Weight streams already encoded, by everything the encoder reads (``_Codec.stream``'s key:
    the accelerator, what the volume is made from, dilation, IFM bits, OFM block depth, depthwise
    and traversal). Slices alike (one model emitted again after a CPU fallback, identical weights)
    encode once, and their volumes are built once."""

    def __init__(self) -> None:
        self.streams: dict[tuple[object, ...], bytes] = {}
        self.hits = 0
        self.codec_cpu_seconds = 0.0  # in the backend's encoder, for the benchmark

    def encode(self, api: ModuleType, key: tuple[object, ...], arguments: Callable[[], tuple[object, ...]]) -> bytes:
        """``api.npu_encode_weights(*arguments())`` as bytes, encoded (and ``arguments`` built) once
        per distinct ``key``."""
        found = self.streams.get(key)
        if found is None:
            args = arguments()
            started = time.process_time()
            found = self.streams[key] = bytes(api.npu_encode_weights(*args))
            self.codec_cpu_seconds += time.process_time() - started
        else:
            self.hits += 1
        return found


def volume_source(op: NpuOp) -> tuple[object, ...]:
    """What ``_ohwi(op)`` is made from: the weights' shape, type and bytes, the zero points and
    whether they are depthwise (transposed); with a channel range, what a slice's volume is made
    from. The bytes themselves, in their own (8-bit) type, not a digest: a key no two volumes can
    share, hashed once per op (``bytes`` keeps its hash) and faster than a cryptographic digest,
    whose library would also cost every emit its import."""
    assert op.weights is not None and op.weight_tensor is not None and op.weight_tensor.quant is not None
    w = np.asarray(op.weights)
    zero = tuple(np.asarray(op.weight_tensor.quant.zero_point).reshape(-1).tolist())
    return (w.shape, w.dtype.str, w.tobytes(), zero, op.block_type is BlockType.DEPTHWISE)


def _ohwi(op: NpuOp) -> np.ndarray:
    """The op's weights minus their zero point, OHWI with O the output channels: 16-bit for 8-bit
    weights (the codec's input type, which holds every difference), else 64-bit."""
    assert op.weights is not None and op.weight_tensor is not None and op.weight_tensor.quant is not None
    w = np.asarray(op.weights)
    kind = np.int16 if w.dtype.itemsize == 1 else np.int64
    if op.block_type is BlockType.DEPTHWISE:
        w = np.transpose(w, (3, 1, 2, 0))  # 1 x H x W x C -> C x H x W x 1
    zero = np.asarray(op.weight_tensor.quant.zero_point, dtype=np.int64)
    zero = zero.reshape(-1, 1, 1, 1).astype(kind) if zero.size > 1 else kind(zero.reshape(-1)[0])
    return np.subtract(w, zero, dtype=kind)  # widened and shifted in one pass


def reduced_scaling(op: NpuOp) -> bool:
    """A 16-bit IFM with 64-bit biases (or none): TFLite's reference accumulates in 64 bits and
    scales by a 16-bit multiplier rounding halves up once (the output stage's NATURAL rounding);
    with 32-bit biases (a converter's ``bias_type`` int32) it takes the 32-bit path: a full
    multiplier and double rounding (the output stage's TFL rounding)."""
    return op.ifm.dtype == DataType.INT16 and (op.bias is None or np.asarray(op.bias).dtype == np.int64)


def channel_scales(op: NpuOp) -> list[tuple[int, int]]:
    """``(multiplier, shift)`` of each output channel: IFM scale x weight scale / OFM scale (the
    scale of a fused LUT's input when there is one, ``NpuOp.output_stage_quant``)."""
    depth = op.ofm_shape.c
    if op.rescale is not None:  # explicit (a cast to 32 bits shifting left: Vela's)
        return [op.rescale] * depth
    if op.ofm.dtype == DataType.INT32:  # a sum kept in 32 bits (a MEAN's): scale 1 (encoded as Vela's file has it)
        return [(1, 0) if op.ifm.dtype == DataType.INT16 else quantise_scale(1.0)] * depth
    assert op.weight_tensor is not None and op.weight_tensor.quant is not None
    assert op.ifm.quant is not None and op.ofm.quant is not None
    reduced = reduced_scaling(op)
    w_scales = list(op.weight_tensor.quant.scale)
    per_tensor = len(w_scales) == 1
    if per_tensor:
        w_scales *= depth
    if len(w_scales) != depth:
        raise EmitError(op.name, f"{len(w_scales)} weight scales for {depth} output channels")
    stage = op.output_stage_quant  # a fused LUT's input quantization, else the OFM's
    assert stage is not None
    ifm_scale, ofm_scale = op.ifm.quant.scale[0], stage.scale[0]
    if per_tensor and (op.ifm.dtype == DataType.UINT8 or op.tflite_type == "FULLY_CONNECTED"):
        # TFLite's per-tensor uint8 and fully-connected kernels multiply the two scales in float32
        # (as Vela does); per-channel ones in float64, as every convolution
        product = (np.float32(ifm_scale) * np.asarray(w_scales, dtype=np.float32)).astype(np.float64)
    else:
        product = np.float64(ifm_scale) * np.asarray(w_scales, dtype=np.float64)
    scales = product / np.float64(ofm_scale)
    if reduced:
        return [reduced_quantise_scale(float(s)) for s in scales]
    return quantise_scales(scales)


def _bias_records(op: NpuOp, bias: np.ndarray) -> np.ndarray:
    """Each output channel's 10-byte bias/scale record (a channels x 10 array of bytes); the
    format is public and small, so both backends take npuplan's encoding (byte-identical to
    ``npu_encode_bias``'s: ``tests/unit/codec/test_encode.py``)."""
    try:
        scales = channel_scales(op)
    except ValueError as error:  # a scale ratio beyond the output stage's range (a corrupt quantization)
        raise EmitError(op.name, f"the output stage cannot express its scale: {error}",
                        cpu_fallback=op.source_index) from None
    from npuplan.codec.encode import encode_biases  # the codec loads with the first op with weights

    multipliers = np.array([m for m, _ in scales], dtype=np.int64)
    shifts = np.array([s for _, s in scales], dtype=np.int64)
    try:
        data = encode_biases(bias, multipliers, shifts)
    except ValueError as error:  # a bias past 40 bits, a scale past its fields
        raise EmitError(op.name, f"its bias/scale records cannot be encoded: {error}",
                        cpu_fallback=op.source_index) from None
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, SCALE_BIAS_BYTES)


def encode_op(api: ModuleType, accelerator: object, op: NpuOp, slices: Iterable[WeightSlice], *,
              part_kernel_first: bool, block_depth: int, memo: SliceMemo | None = None, ncores: int = 1) -> EncodedOp:
    """Encode ``op``'s weights and biases for each of its plan ``slices`` (OFM depth ranges), on
    ``ncores`` cores (each its own streams of every ``ncores``-th channel, its share of the OFM block
    depth); ``memo`` keeps the weight streams encoded so far."""
    memo = SliceMemo() if memo is None else memo
    weights = _ohwi(op)
    depth = op.ofm_shape.c
    if weights.shape[0] != depth:
        raise EmitError(op.name, f"weights have {weights.shape[0]} output channels, the OFM {depth}")
    bias = np.zeros(depth, dtype=np.int64) if op.bias is None else np.asarray(op.bias, dtype=np.int64).reshape(-1)
    if bias.size != depth:
        raise EmitError(op.name, f"{bias.size} biases for {depth} output channels")
    records = _bias_records(op, bias)
    traversal = api.NpuBlockTraversal.PART_KERNEL_FIRST if part_kernel_first else api.NpuBlockTraversal.DEPTH_FIRST
    codec = _Codec(api, memo, op, accelerator, (op.kernel.dilation_x, op.kernel.dilation_y),
                   op.block_type is BlockType.DEPTHWISE, traversal, volume_source(op))
    out = []
    for piece in sorted(slices, key=lambda s: s.index):
        lo, hi = piece.depth_start, piece.depth_end
        parts: list[bytes] = []
        cores = []
        for core in range(min(ncores, hi - lo)):
            core_block_depth = (block_depth + ncores - 1 - core) // ncores
            if core_block_depth == 0:
                continue
            channels = slice(lo + core, hi, ncores)  # a core's channels: every ncores-th (Vela's deinterleave)
            head, encoded = records[channels].tobytes(), codec.stream(weights, channels, ncores, core_block_depth)
            top = sum(len(part) for part in parts)
            parts += _padded(head) + _padded(encoded)  # the hardware reads 16-byte words
            scale_bytes, weight_bytes = round_up(len(head), ALIGN_BYTES), round_up(len(encoded), ALIGN_BYTES)
            cores.append(CoreStreams(top, scale_bytes, top + scale_bytes, weight_bytes))
        out.append(EncodedSlice(piece.index, lo, hi, b"".join(parts), tuple(cores)))
    return EncodedOp(op.name, tuple(out), part_kernel_first, block_depth)


@record(eq=False, slots=False)
class _Codec:
    """What every weight stream of one op is encoded with (the API, the memo, the accelerator,
    dilation, depthwise, traversal, and what its volumes are made from)."""

    api: ModuleType
    memo: SliceMemo
    op: NpuOp
    accelerator: object
    dilation: tuple[int, int]
    depthwise: bool
    traversal: object
    source: tuple[object, ...]

    def stream(self, weights: np.ndarray, channels: slice, ncores: int, block_depth: int) -> bytes:
        """The encoded weight stream of ``weights``' output ``channels`` for a core's ``block_depth``."""
        op = self.op
        rest = (self.dilation, op.ifm.dtype.bits, block_depth, self.depthwise, self.traversal)

        def arguments() -> tuple[object, ...]:
            volume = np.ascontiguousarray(weights[channels].astype(np.int16, copy=False))  # the codec takes 16 bits
            return (self.accelerator, volume, *rest)

        key = (self.accelerator, *self.source, (channels.start, channels.stop, ncores), *rest)
        try:
            return self.memo.encode(self.api, key, arguments)
        except (AssertionError, ValueError) as error:  # the encoder's own checks (dilation 1 or 2, ...)
            raise EmitError(op.name, f"the weight encoder rejected its weights: {error or 'assertion'}",
                            cpu_fallback=op.source_index) from None
