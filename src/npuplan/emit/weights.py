"""Weights, biases and scales encoded for the hardware through Vela's API, slice by slice.

Each weight slice of the plan (an OFM depth range) becomes one contiguous record: the bias/scale
stream (10 bytes per output channel: 40-bit bias, 32-bit multiplier, 6-bit shift), padded to 16
bytes, then the compressed weight stream, padded to 16 bytes. One DMA moves a whole record.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from npuplan.commands.types import WeightSlice
from npuplan.lowering.fixedpoint import quantise_scale, reduced_quantise_scale
from npuplan.errors import EmitError
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.types import DataType

ALIGN_BYTES = 16
SCALE_BYTES_PER_CHANNEL = 10


def _pad(data: bytes) -> bytes:
    return data + bytes(-len(data) % ALIGN_BYTES)


@dataclass(frozen=True, slots=True)
class CoreStreams:
    """Where one core's streams lie inside a slice's record (bytes from its start, 16-byte padded)."""

    scale_offset: int
    scale_bytes: int
    weight_offset: int
    weight_bytes: int


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
    """Weight streams already encoded, by everything the encoder reads: the accelerator, the
    weight volume (shape and values), dilation, IFM bits, OFM block depth, depthwise and traversal.
    Slices alike (one model emitted again after a CPU fallback, identical weights) encode once."""

    def __init__(self) -> None:
        self.streams: dict[tuple[object, ...], bytes] = {}
        self.hits = 0
        self.codec_cpu_seconds = 0.0  # in the API's encoder, for the benchmark

    def encode(self, api: ModuleType, args: tuple[object, ...]) -> bytes:
        """``api.npu_encode_weights(*args)`` as bytes, encoded once per distinct ``args``."""
        accelerator, volume, *rest = args
        assert isinstance(volume, np.ndarray) and volume.flags.c_contiguous
        digest = hashlib.blake2b(volume.data, digest_size=16).digest()
        key = (accelerator, volume.shape, volume.dtype.str, digest, *rest)
        found = self.streams.get(key)
        if found is None:
            started = time.process_time()
            found = self.streams[key] = bytes(api.npu_encode_weights(*args))
            self.codec_cpu_seconds += time.process_time() - started
        else:
            self.hits += 1
        return found


def _ohwi(op: NpuOp) -> np.ndarray:
    """The op's weights minus their zero point, OHWI with O the output channels: 16-bit for 8-bit
    weights (the codec's input type, which holds every difference), else 64-bit."""
    assert op.weights is not None and op.weight_tensor is not None and op.weight_tensor.quant is not None
    w = np.asarray(op.weights)
    kind = np.int16 if w.dtype.itemsize == 1 else np.int64
    w = w.astype(kind)
    if op.block_type is BlockType.DEPTHWISE:
        w = np.transpose(w, (3, 1, 2, 0))  # 1 x H x W x C -> C x H x W x 1
    zero = np.asarray(op.weight_tensor.quant.zero_point, dtype=np.int64)
    if zero.size > 1:
        return w - zero.reshape(-1, 1, 1, 1).astype(kind)
    return w - kind(zero.reshape(-1)[0])


def channel_scales(op: NpuOp) -> list[tuple[int, int]]:
    """``(multiplier, shift)`` of each output channel: IFM scale x weight scale / OFM scale."""
    assert op.weight_tensor is not None and op.weight_tensor.quant is not None
    assert op.ifm.quant is not None and op.ofm.quant is not None
    depth = op.ofm_shape.c
    if op.rescale is not None:  # explicit (a cast to 32 bits shifting left: Vela's)
        return [op.rescale] * depth
    if op.ofm.dtype == DataType.INT32:  # a sum kept in 32 bits (a MEAN's): scale 1 (encoded as Vela's file has it)
        return [(1, 0) if op.ifm.dtype == DataType.INT16 else quantise_scale(1.0)] * depth
    # a 16-bit IFM with 64-bit biases: 16-bit multipliers (TFLite's reference, as Vela encodes them)
    reduced = op.ifm.dtype == DataType.INT16 and (op.bias is None or np.asarray(op.bias).dtype == np.int64)
    quantise = reduced_quantise_scale if reduced else quantise_scale
    w_scales = list(op.weight_tensor.quant.scale)
    if len(w_scales) == 1:
        w_scales *= depth
    if len(w_scales) != depth:
        raise EmitError(op.name, f"{len(w_scales)} weight scales for {depth} output channels")
    ifm_scale, ofm_scale = op.ifm.quant.scale[0], op.ofm.quant.scale[0]
    if op.ifm.dtype == DataType.UINT8 or op.tflite_type == "FULLY_CONNECTED":
        # TFLite's uint8 and fully-connected kernels multiply the two scales in float32 (as Vela does)
        return [quantise(float(np.float64(np.float32(ifm_scale) * np.float32(s)) / np.float64(ofm_scale)))
                for s in w_scales]
    return [quantise(float(np.float64(ifm_scale) * np.float64(s) / np.float64(ofm_scale))) for s in w_scales]


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
    try:
        scales = channel_scales(op)
    except ValueError as error:  # a scale ratio beyond the output stage's range (a corrupt quantization)
        raise EmitError(op.name, f"the output stage cannot express its scale: {error}",
                        cpu_fallback=op.source_index) from None
    records = [bytes(api.npu_encode_bias(b, *scale)) for b, scale in zip(bias, scales)]  # per channel
    traversal = api.NpuBlockTraversal.PART_KERNEL_FIRST if part_kernel_first else api.NpuBlockTraversal.DEPTH_FIRST
    depthwise = op.block_type is BlockType.DEPTHWISE
    dilation = (op.kernel.dilation_x, op.kernel.dilation_y)
    out = []
    for piece in sorted(slices, key=lambda s: s.index):
        lo, hi = piece.depth_start, piece.depth_end
        data, cores = b"", []
        for core in range(min(ncores, hi - lo)):
            core_block_depth = (block_depth + ncores - 1 - core) // ncores
            if core_block_depth == 0:
                continue
            channels = slice(lo + core, hi, ncores)  # a core's channels: every ncores-th (Vela's deinterleave)
            volume = np.ascontiguousarray(weights[channels].astype(np.int16, copy=False))  # the codec takes 16 bits
            try:
                encoded = memo.encode(api, (accelerator, volume, dilation, op.ifm.dtype.bits, core_block_depth,
                                            depthwise, traversal))
            except (AssertionError, ValueError) as error:  # the encoder's own checks (dilation 1 or 2, ...)
                raise EmitError(op.name, f"Vela's weight encoder rejected its weights: {error or 'assertion'}",
                                cpu_fallback=op.source_index) from None
            head, body = _pad(b"".join(records[channels])), _pad(encoded)  # the hardware reads 16-byte words
            cores.append(CoreStreams(len(data), len(head), len(data) + len(head), len(body)))
            data += head + body
        out.append(EncodedSlice(piece.index, lo, hi, data, tuple(cores)))
    return EncodedOp(op.name, tuple(out), part_kernel_first, block_depth)
