"""ARG_MAX along the depth axis, decomposed onto the NPU the way Vela 5.2.0 does it.

1. A 1x1 depthwise convolution shifts each value (less its zero point) left by 7 bits and adds
   its channel's reversed index (so the largest value wins and, among equal values, the lowest
   index), into int16.
2. Max pooling over the depth, reading the int16 tensor as ``1 x (H*W) x C x 1``, whose output
   stage's table extracts the winner's index from its low 7 bits; that height
   is at most 65536, so a larger map is done in bands of whole rows (``65536 // W`` rows each, as
   Vela splits it), each band its own shift, pooling and widening, reading its rows of the IFM
   and writing its rows of the output in place.
3. A 1x1 depthwise convolution widening the int16 indices to int32; into an int64 output, a 1x1
   convolution writing each index and a zero as its two 32-bit halves (in bands: an int32 map
   copied into place after).
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import quantise_scale

MAX_DEPTH = 127
_POOL_ELEMENTS = 1 << 16


def argmax_reason(op: Op) -> str | None:
    ifm, axis, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and axis is not None
    if axis.data is None or axis.data.size != 1:
        return "Axis must be constant"
    rank = len(ifm.shape)
    if int(axis.data.reshape(-1)[0]) not in (rank - 1, -1):
        return f"Operation must be performed along the depth axis (axis {int(axis.data.reshape(-1)[0])}, rank {rank})"
    if ifm.shape[-1] > MAX_DEPTH:
        return f"IFM depth must be no greater than {MAX_DEPTH} (it is {ifm.shape[-1]})"
    if ifm.dtype not in (DataType.INT8, DataType.UINT8):
        return f"IFM must be int8 or uint8 (it is {ifm.dtype})"
    if ofm.dtype not in (DataType.INT32, DataType.INT64):
        return f"OFM must be int32 or int64 (it is {ofm.dtype})"
    if ifm.shape4d.w > _POOL_ELEMENTS:
        return f"IFM width must be at most {_POOL_ELEMENTS} (it is {ifm.shape4d.w})"
    return None


# The intermediate maps hold raw integers: scale 1, zero point 0 (the output stages scale by 1).
_RAW = Quantization((1.0,), (0,))


def _depthwise(op: Op, name: str, ifm: Tensor, view: Shape4D, out: Tensor, weight: int, *, reversed_index: bool,
               read_at: Shape4D | None = None, write_at: Shape4D | None = None) -> NpuOp:
    """A 1x1 depthwise convolution over ``view`` (the box read at ``read_at`` of ``ifm``, written
    at ``write_at`` of ``out``) multiplying the input less its zero point by ``weight`` (unsigned
    8-bit: 128 is a shift by 7 bits) and, with ``reversed_index``, adding each channel's reversed
    index; scaled by 1. Less the zero point, an int8 or uint8 value is at most 255 in magnitude,
    so ``255 * 128 + 126`` fits the int16 map without saturating."""
    weights = np.full((1, 1, 1, view.c), weight, dtype=np.uint8)
    weight_tensor = Tensor(f"{name}_weights", weights.shape, DataType.UINT8, _RAW, weights)
    return NpuOp(name=name, tflite_type=op.type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE,
                 ifm=ifm, ifm_shape=view, ofm=out, ofm_shape=view if write_at is None else out.shape4d,
                 weights=weights, weight_tensor=weight_tensor,
                 bias=(np.arange(view.c, dtype=np.int64)[::-1].copy() if reversed_index
                       else np.zeros(view.c, dtype=np.int64)), kernel=Kernel(),
                 ifm_read_offset=read_at, ofm_write_offset=write_at, rescale=quantise_scale(1.0),
                 ofm_write_shape=None if write_at is None else view, source_index=op.index)


def winner_table(depth: int) -> np.ndarray:
    """The max pool's 16-bit lookup table (512 words: slope in the high half, base in the low):
    every entry's base ``depth - 1`` and slope -128 take the low 7 bits (the reversed index) off
    the base, giving the winner's index."""
    return np.full(512, ((-128 & 0xFFFF) << 16) | (depth - 1), dtype=np.uint32)


def _halves(op: Op, name: str, winners: Tensor, ofm: Tensor) -> NpuOp:
    """The winners widened into an int64 OFM, written as its 32-bit halves (``element_type``): a
    1x1 convolution to two channels, the index (weight 1) and its high half 0 (weight 0)."""
    weights = np.array([1, 0], dtype=np.int8).reshape(2, 1, 1, 1)
    view = winners.shape4d
    return NpuOp(name=name, tflite_type=op.type, op_type="Conv2DBias", block_type=BlockType.CONV, ifm=winners,
                 ifm_shape=view, ofm=ofm, ofm_shape=Shape4D(1, view.h, view.w, 2), weights=weights,
                 weight_tensor=Tensor(f"{name}_weights", weights.shape, DataType.INT8, _RAW, weights),
                 bias=np.zeros(2, dtype=np.int64), kernel=Kernel(), rescale=(1, 0), source_index=op.index)


def bands(h: int, w: int) -> list[tuple[int, int]]:
    """(first row, rows) of each band of whole rows whose pixels the pooling reads as one column."""
    rows = max(1, _POOL_ELEMENTS // w)
    return [(r, min(rows, h - r)) for r in range(0, h, rows)]


def convert_argmax(op: Op) -> tuple[NpuOp, ...]:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    _, h, w, c = ifm.shape4d.as_list()
    name = op.name
    split = bands(h, w)
    # The winners widen straight into the OFM (an int64 one as its 32-bit halves), unless bands
    # write rows of it (the OFM may be 3-D, whose 4-D frame has no rows to write at): then into an
    # int32 map copied into the OFM after.
    direct = len(split) == 1
    wide = ofm if direct else Tensor(f"{name}_intermediate_32bit", (1, h, w, 1), DataType.INT32, None)
    ops: list[NpuOp] = []
    for index, (first, rows) in enumerate(split):
        tag = "" if len(split) == 1 else f"_band{index}"
        at = None if len(split) == 1 else Shape4D(0, first, 0, 0)
        shifted = Tensor(f"{name}_shifted{tag}", (1, rows, w, c), DataType.INT16, _RAW)
        ops.append(_depthwise(op, f"{name}_depthwise_conv_SHL_7{tag}", ifm, Shape4D(1, rows, w, c), shifted, 128,
                              reversed_index=True, read_at=at))
        winners = Tensor(f"{name}_argmax_maxpool{tag}", (1, rows, w, 1), DataType.INT16, _RAW)
        ops.append(NpuOp(
            name=f"{name}_dw_maxpool_{index}", tflite_type=op.type, op_type="MaxPool", block_type=BlockType.POOLING,
            ifm=shifted, ifm_shape=Shape4D(1, rows * w, c, 1), ofm=winners, ofm_shape=Shape4D(1, rows * w, 1, 1),
            kernel=Kernel(1, c), pool=PoolKind.MAX, activation=Activation.LUT, lut=winner_table(c),
            source_index=op.index,
        ))
        if wide.dtype == DataType.INT64:
            ops.append(_halves(op, f"{name}_cast_to_64bit", winners, wide))
            continue
        ops.append(_depthwise(op, f"{name}_cast_to_32bit_1{tag}", winners, Shape4D(1, rows, w, 1), wide, 1,
                              reversed_index=False, write_at=at))
    if wide is ofm:
        return tuple(ops)
    # Each row of 32-bit words copied as one pixel of ``w x halves`` channels: the same bytes, read
    # and written linearly (a depth-1 int32 map in 16-channel bricks would move 16x the bytes).
    row = Shape4D(1, h, 1, w * (ofm.dtype.size_bytes // DataType.INT32.size_bytes))
    ops.append(NpuOp(
        name=f"{name}_memcpy", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=wide,
        ifm_shape=row, ofm=ofm, ofm_shape=row, pool=PoolKind.AVERAGE, source_index=op.index,
    ))
    return tuple(ops)
