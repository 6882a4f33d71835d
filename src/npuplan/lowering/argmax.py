"""ARG_MAX along the depth axis, decomposed onto the NPU the way Vela 5.2.0 does it.

1. A 1x1 depthwise convolution shifts each value left by 7 bits and adds its channel's reversed
   index (so the largest value wins and, among equal values, the lowest index), into int16.
2. Max pooling over the depth, reading the int16 tensor as ``1 x (H*W) x C x 1`` (Vela splits
   more than 65536 pixels into bands; npuplan leaves such an ARG_MAX on the CPU).
3. A 1x1 depthwise convolution widening the int16 winners to int32 (the index is in the low
   7 bits of each winner, which the output stage's table extracts); an int64 output is then
   copied into place as two 32-bit halves.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType

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
    if ifm.shape4d.h * ifm.shape4d.w > _POOL_ELEMENTS:
        return f"IFM height times width must be at most {_POOL_ELEMENTS} for npuplan's lowering"
    return None


def _depthwise(op: Op, name: str, ifm: Tensor, view: Shape4D, out: Tensor, scale: int,
               activation: Activation = Activation.NONE) -> NpuOp:
    weights = np.full((1, 1, 1, view.c), scale, dtype=np.int8)
    return NpuOp(name=name, tflite_type=op.type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE,
                 ifm=ifm, ifm_shape=view, ofm=out, ofm_shape=view, weights=weights,
                 bias=np.arange(view.c, dtype=np.int64)[::-1].copy(), kernel=Kernel(), activation=activation,
                 source_index=op.index)


def convert_argmax(op: Op) -> tuple[NpuOp, ...]:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    n, h, w, c = ifm.shape4d.as_list()
    name = op.name
    shifted = Tensor(f"{name}_shifted", (1, h, w, c), DataType.INT16, None)
    ops = [_depthwise(op, f"{name}_depthwise_conv_SHL_7", ifm, Shape4D(1, h, w, c), shifted, 127, Activation.LUT)]
    winners = Tensor(f"{name}_argmax_maxpool", (1, h, w, 1), DataType.INT16, None)
    ops.append(NpuOp(
        name=f"{name}_dw_maxpool_0", tflite_type=op.type, op_type="MaxPool", block_type=BlockType.POOLING,
        ifm=shifted, ifm_shape=Shape4D(1, h * w, c, 1), ofm=winners, ofm_shape=Shape4D(1, h * w, 1, 1),
        kernel=Kernel(1, c), pool=PoolKind.MAX, source_index=op.index,
    ))
    if ofm.dtype == DataType.INT32:
        ops.append(_depthwise(op, f"{name}_cast_to_32bit_1", winners, Shape4D(1, h, w, 1), ofm, 1, Activation.LUT))
        return tuple(ops)
    wide = Tensor(f"{name}_intermediate_32bit", (1, h, w, 1), DataType.INT32, None)
    ops.append(_depthwise(op, f"{name}_cast_to_32bit_1", winners, Shape4D(1, h, w, 1), wide, 1, Activation.LUT))
    ops.append(NpuOp(
        name=f"{name}_memcpy", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=wide,
        ifm_shape=Shape4D(1, h, w, 2), ofm=ofm, ofm_shape=Shape4D(1, h, w, 2), pool=PoolKind.AVERAGE,
        source_index=op.index,
    ))
    return tuple(ops)
