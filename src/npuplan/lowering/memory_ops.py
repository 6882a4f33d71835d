"""Operators that only move data, lowered to 1x1 average pools writing at offsets.

PAD (when not folded into a convolution) becomes, like Vela's legacy core, a copy of the input
into the middle of the output plus one op per padded side that fills it with the zero point.
CONCATENATION becomes one copy per input, each writing at its offset along the axis.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D


def _copy(op: Op, name: str, ifm: Tensor, ifm_shape: Shape4D, ofm: Tensor, offset: Shape4D) -> NpuOp:
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
        ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm.shape4d, pool=PoolKind.AVERAGE,
        ofm_write_offset=offset, ofm_write_shape=ifm_shape, source_index=op.index,
    )


def _fill(op: Op, name: str, shape: Shape4D, offset: Shape4D) -> NpuOp:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    zero_point = ofm.quant.zero_point[0] if ofm.quant and ofm.quant.zero_point else 0
    data = np.full(shape.as_list(), zero_point, dtype=np.int64)
    data.flags.writeable = False
    const = Tensor(f"{name}_const", tuple(shape.as_list()), ofm.dtype, ofm.quant, data)
    return _copy(op, name, const, shape, ofm, offset)


def convert_pad(op: Op) -> tuple[NpuOp, ...]:
    """PAD -> main copy + top/bottom/left/right fills (only for sides with padding)."""
    ifm, pads, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and pads is not None and pads.data is not None
    rows = [[0, 0]] * (4 - len(pads.data)) + pads.data.reshape(-1, 2).tolist()
    (top, bottom), (left, right) = rows[1], rows[2]
    s, out = ifm.shape4d, ofm.shape4d
    name = op.name
    ops = [_copy(op, f"{name}_main", ifm, s, ofm, Shape4D(0, top, left, 0))]
    if top:
        ops.append(_fill(op, f"{name}_top", Shape4D(1, top, s.w, s.c), Shape4D(0, 0, left, 0)))
    if bottom:
        ops.append(_fill(op, f"{name}_bottom", Shape4D(1, bottom, s.w, s.c), Shape4D(0, top + s.h, left, 0)))
    if left:
        ops.append(_fill(op, f"{name}_left", Shape4D(1, out.h, left, s.c), Shape4D(0, 0, 0, 0)))
    if right:
        ops.append(_fill(op, f"{name}_right", Shape4D(1, out.h, right, s.c), Shape4D(0, 0, left + s.w, 0)))
    return tuple(ops)


def convert_concat(op: Op) -> tuple[NpuOp, ...]:
    """CONCATENATION -> one copy per input at its offset along the concatenation axis."""
    ofm = op.outputs[0]
    rank = len(ofm.shape)
    axis = int(op.options["axis"]) % rank
    axis4 = axis + 4 - rank
    ops: list[NpuOp] = []
    position = 0
    for i, t in enumerate(x for x in op.inputs if x is not None):
        offset = [0, 0, 0, 0]
        offset[axis4] = position
        ops.append(_copy(op, f"{op.name}{i}_avgpool", t, t.shape4d, ofm, Shape4D(*offset)))  # Vela's names
        position += t.shape4d.as_list()[axis4]
    return tuple(ops)
