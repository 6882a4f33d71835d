"""MEAN -> depthwise convolutions summing the reduced axes, (Adds), and a Mul that divides.

Follows Vela's legacy decomposition: the reduced area becomes a depthwise kernel of ones (a reduced
depth laid along the width, the map seen with depth 1); a kernel
taller than 64 rows on a full HxW reduction is reshaped to 1 x (H*W); the kernel is split into
several depthwise ops (summed by Adds) when it has more than 4096 elements; a final Mul applies
the 1/N scaling. A MEAN over axes of size 1 moves no data and is dropped.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, Kernel, LoweredOp, NpuOp, readers_by_tensor
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.ir.graph import Graph
from npuplan.lowering._util import fused_activation, replace_tensor, without_op
from npuplan.lowering.fixedpoint import mean_scaling
from npuplan.lowering.support import unsupported_reason

MAX_KERNEL_ELEMENTS = 4096
MAX_KERNEL_HEIGHT = 64

_UNIT = Quantization(scale=(1.0,), zero_point=(0,))


def _reduced_axes(op: Op) -> list[bool]:
    ifm, axis = op.inputs[0], op.inputs[1]
    assert ifm is not None and axis is not None and axis.data is not None
    rank = len(ifm.shape)
    axes = {int(a) % rank for a in axis.data.reshape(-1) if rank and -rank <= int(a) < rank}
    reduce = [i in axes for i in range(rank)]
    return [False] * (4 - rank) + reduce


def is_noop_mean(op: Op) -> bool:
    """True when every reduced axis has size 1 (the MEAN is a copy)."""
    ifm = op.inputs[0]
    assert ifm is not None
    shape = ifm.shape4d.as_list()
    return not any(r and d > 1 for r, d in zip(_reduced_axes(op), shape))


def _const(name: str, shape: tuple[int, ...], dtype: DataType, values: np.ndarray) -> Tensor:
    values = values.reshape(shape)
    values.flags.writeable = False
    return Tensor(name, shape, dtype, _UNIT, values)


def _depth_along_width(shape: list[int], reduce: list[bool]) -> tuple[list[int], list[bool]]:
    """The NHWC bytes of a map reduced over its depth, seen as a map of depth 1 whose width holds
    the reduced elements: (N, H*W, C, 1) over depth alone, (N, H, W*C, 1) over width and depth
    (height too: both reduced). Height and depth without width are contiguous only with W = 1."""
    n, h, w, c = shape
    if not reduce[2] and not reduce[1]:
        return [n, h * w, c, 1], [False, False, True, False]
    if reduce[2] or w == 1:
        return [n, h, w * c, 1], [False, reduce[1], True, False]
    raise ValueError("a mean over height and depth but not width reads no contiguous window")


def parallel_rows(shape: list[int], reduce: list[bool]) -> int | None:
    """How many rows a MEAN whose sums land in one OFM position (the whole map reduced to 1 x 1)
    sums in parallel, or None to sum them with one kernel: a depthwise kernel over the whole
    reduced area computes one micro-block position, each step waiting on its weights; the same
    elements seen as ``rows`` rows of ``area / rows`` are summed row by row in one pass over an OFM
    of ``rows`` positions (int32, one column), and a tree of int32 Adds of halves sums the rows
    exactly."""
    n, h, w, _ = shape
    if n != 1 or not (reduce[1] or h == 1) or not (reduce[2] or w == 1):
        return None
    area = h * w
    return next((rows for rows in _PARALLEL_ROWS if area % rows == 0 and area // rows >= _MIN_ROW_ELEMENTS), None)


# Row counts tried, most first: 16 rows make 8 micro-block positions a step on a 2-high micro-block,
# as many as the weight fetch of one step allows (more gain nothing, each further Add costs its own)
_PARALLEL_ROWS = (16, 8, 4)
_MIN_ROW_ELEMENTS = 4


def sums_in_one_position(op: object) -> bool:
    """Whether the lowered ``op`` is a MEAN's depthwise sum of a whole map into one OFM position
    that ``convert_mean(parallel=True)`` may sum in parallel rows instead."""
    return (isinstance(op, NpuOp) and op.tflite_type == "MEAN" and op.block_type is BlockType.DEPTHWISE
            and op.ofm_shape.h == op.ofm_shape.w == 1 and op.ifm_read_offset is None
            and op.kernel.elements >= _PARALLEL_ROWS[-1] * _MIN_ROW_ELEMENTS and op.kernel.elements % 4 == 0)


def _summed_rows(op: Op, ifm: Tensor, shape: list[int], rows: int) -> tuple[list[NpuOp], Tensor, Shape4D]:
    """One depthwise op summing ``ifm``'s reduced area as ``rows`` rows into int32, then the Adds of
    halves reducing them to one; the ops, the sum and its shape (1 x 1 x 1 x C)."""
    name, channels = op.name, shape[3]
    width = shape[1] * shape[2] // rows
    out_shape = Shape4D(1, 1, 1, channels)
    weights = _const(f"{name}_conv_rows_weights", (1, 1, width, channels), DataType.UINT8,
                     np.ones(width * channels, dtype=np.uint8))
    bias_dtype = np.int64 if ifm.dtype == DataType.INT16 else np.int32
    bias = _const(f"{name}_conv_rows_bias", (channels,), DataType(np.dtype(bias_dtype).name),
                  np.zeros(channels, dtype=bias_dtype))
    # the Adds read their halves at a row offset: an op reading at an offset is never cascaded
    # (``schedule.model.geometry``), so no stripe of rows meets an operand read rows away
    acc = Tensor(f"{op.outputs[0].name}_row_sums", (1, rows, 1, channels), DataType.INT32, _UNIT)
    ops = [NpuOp(
        name=f"{name}{name}_conv_rows", tflite_type=op.type, op_type="DepthwiseConv2DBias",
        block_type=BlockType.DEPTHWISE, ifm=ifm, ifm_shape=Shape4D(1, rows, width, channels), ofm=acc,
        ofm_shape=Shape4D(1, rows, 1, channels), weights=weights.data, weight_tensor=weights, bias=bias.data,
        bias_tensor=bias, kernel=Kernel(1, width), source_index=op.index,
    )]
    while rows > 1:
        rows //= 2
        box = Shape4D(1, rows, 1, channels)
        out = Tensor(f"{op.outputs[0].name}_row_sums_{rows}", (1, rows, 1, channels), DataType.INT32, _UNIT)
        ops.append(NpuOp(
            name=f"{name}_add_rows_{rows}", tflite_type=op.type, op_type="Add", block_type=BlockType.ELEMENTWISE,
            ifm=acc, ifm_shape=box, ifm2=acc, ifm2_shape=box, ofm=out, ofm_shape=box, elementwise="ADD",
            ifm_read_offset=Shape4D(0, 0, 0, 0), ifm2_read_offset=Shape4D(0, rows, 0, 0), source_index=op.index,
        ))
        acc = out
    return ops, acc, out_shape


def _depth_sum(op: Op, ifm: Tensor) -> NpuOp:
    """A 1x1 convolution of ones summing an 8-bit map over its depth into int32, one output
    channel: each step multiplies a micro-block of pixels by a whole IFM block of channels, where a
    depthwise kernel over the depth laid along the width (``_depth_along_width``) sums one pixel
    at a time on a map of depth 1 (op_mean_channels, 12x10x24 on the U55-128: 3326 -> 6xx cycles).
    The same integer sums: the IFM zero point is subtracted alike and the weights are 1."""
    name, n, h, w, c = op.name, *ifm.shape4d.as_list()
    weights = _const(f"{name}_conv_depth_weights", (1, 1, 1, c), DataType.UINT8, np.ones(c, dtype=np.uint8))
    bias = _const(f"{name}_conv_depth_bias", (1,), DataType.INT32, np.zeros(1, dtype=np.int32))
    out_shape = Shape4D(n, h, w, 1)
    total = Tensor(f"{op.outputs[0].name}_conv_sum_0", tuple(out_shape.as_list()), DataType.INT32, _UNIT)
    return NpuOp(
        name=f"{name}{name}_conv_depth", tflite_type=op.type, op_type="Conv2DBias", block_type=BlockType.CONV,
        ifm=ifm, ifm_shape=ifm.shape4d, ofm=total, ofm_shape=out_shape, weights=weights.data,
        weight_tensor=weights, bias=bias.data, bias_tensor=bias, kernel=Kernel(1, 1), source_index=op.index,
    )


def convert_mean(op: Op, *, parallel: bool = False) -> tuple[NpuOp, ...]:
    """The NPU ops of one MEAN (see module docstring); ``parallel``: a MEAN reducing the whole map
    to one position sums its rows in parallel where it can (``parallel_rows``)."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    reduce = _reduced_axes(op)
    shape = ifm.shape4d.as_list()
    # a SUM is the same sums with another final scale: its depth reduction is the same convolution
    # (``rescaled_sums`` may then write the SUM's output from it directly)
    if reduce == [False, False, False, True] and shape[3] > 1 and ifm.dtype.bits == 8:
        depth_sum = _depth_sum(op, ifm)
        # the Mul sees the sums as the depth-along-width form leaves them, one per row: the same
        # op as that form's (a row of H*W one-deep elements costs more on 2-high micro-blocks)
        per_row = Shape4D(shape[0], shape[1] * shape[2], 1, 1)
        return depth_sum, _scaled(op, ifm, ofm, depth_sum.ofm, per_row, shape[3])
    if reduce[3] and shape[3] > 1:  # mean over depth: the map seen with its depth along the width
        shape, reduce = _depth_along_width(shape, reduce)
    h = shape[1] if reduce[1] else 1
    w = shape[2] if reduce[2] else 1
    rows = parallel_rows(shape, reduce) if parallel else None
    if rows is not None:
        summed, acc, out_shape = _summed_rows(op, ifm, shape, rows)
        return (*summed, _scaled(op, ifm, ofm, acc, out_shape, h * w))
    if h > MAX_KERNEL_HEIGHT and h * w <= MAX_KERNEL_ELEMENTS and reduce[1] and reduce[2]:
        shape = [shape[0], 1, h * w, shape[3]]
        h, w = 1, h * w
    rows_per_conv = min(MAX_KERNEL_ELEMENTS // w, h, MAX_KERNEL_HEIGHT)
    n_convs = math.ceil(h / rows_per_conv)
    ifm_shape = Shape4D(*shape)
    out_shape = Shape4D(1, 1 if reduce[1] else shape[1], 1 if reduce[2] else shape[2], shape[3])
    name, channels = op.name, shape[3]
    ops: list[NpuOp] = []
    for i in range(n_convs):
        kh = h % rows_per_conv if i == n_convs - 1 and h % rows_per_conv else rows_per_conv
        weights = _const(f"{name}_conv_{i}_weights", (1, kh, w, channels), DataType.UINT8,
                         np.ones(kh * w * channels, dtype=np.uint8))
        bias_dtype = np.int64 if ifm.dtype == DataType.INT16 else np.int32
        bias = _const(f"{name}_conv_{i}_bias", (channels,), DataType(np.dtype(bias_dtype).name),
                      np.zeros(channels, dtype=bias_dtype))
        total = Tensor(f"{ofm.name}_conv_sum_{i}", tuple(out_shape.as_list()), DataType.INT32, _UNIT)
        ops.append(NpuOp(
            name=f"{name}{name}_conv_{i}", tflite_type=op.type, op_type="DepthwiseConv2DBias",
            block_type=BlockType.DEPTHWISE, ifm=ifm, ifm_shape=ifm_shape, ofm=total, ofm_shape=out_shape,
            weights=weights.data, weight_tensor=weights, bias=bias.data, bias_tensor=bias,
            kernel=Kernel(kh, w), ifm_read_offset=Shape4D(0, i * rows_per_conv, 0, 0) if n_convs > 1 else None,
            source_index=op.index,
        ))
    sums = [o.ofm for o in ops]
    acc = sums.pop()
    for idx in range(len(sums)):
        other = sums.pop()
        out = Tensor(f"{ofm.name}_add_sum_{idx}", tuple(out_shape.as_list()), DataType.INT32, _UNIT)
        ops.append(NpuOp(
            name=f"{name}_add_{idx}", tflite_type=op.type, op_type="Add", block_type=BlockType.ELEMENTWISE,
            ifm=acc, ifm_shape=out_shape, ifm2=other, ifm2_shape=out_shape, ofm=out, ofm_shape=out_shape,
            elementwise="ADD", source_index=op.index,
        ))
        acc = out
    return (*ops, _scaled(op, ifm, ofm, acc, out_shape, h * w))


def _scaled(op: Op, ifm: Tensor, ofm: Tensor, acc: Tensor, out_shape: Shape4D, count: int) -> NpuOp:
    """The Mul applying 1 / ``count`` to the sums ``acc``, writing the OFM."""
    # the Mul's second operand is TFLite's reference multiplier (its shift is the Mul's output
    # scale, lowering.fixedpoint.mean_scaling); estimates only need its size
    multiplier = 1
    if ifm.quant is not None and ofm.quant is not None and ifm.quant.is_valid and ofm.quant.is_valid:
        multiplier = mean_scaling(ifm.quant.scale[0], ofm.quant.scale[0], count)[0]
    scalar = _const(f"{op.name}_mul_scalar", (1, 1, 1, 1), DataType.INT32, np.full(1, multiplier, dtype=np.int32))
    return NpuOp(
        name=f"{op.name}_mul", tflite_type=op.type, op_type="Mul", block_type=BlockType.ELEMENTWISE,
        ifm=acc, ifm_shape=out_shape, ifm2=scalar, ifm2_shape=Shape4D(), ofm=ofm, ofm_shape=out_shape,
        activation=fused_activation(op.options), elementwise="MUL", source_index=op.index,
    )


def drop_noop_means(graph: Graph) -> tuple[Graph, tuple[tuple[str, str], ...]]:
    """MEANs over axes of size 1 are copies: treat them like reshapes."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "MEAN"]:
        if unsupported_reason(op) is None and is_noop_mean(op) and op.outputs[0] not in graph.outputs:
            ifm = op.inputs[0]
            assert ifm is not None
            graph = replace_tensor(without_op(graph, op), op.outputs[0], ifm)
            removed.append((op.name, "MEAN over axes of size 1 does not move data"))
    return graph, tuple(removed)


def _sum_scaling(op: LoweredOp) -> bool:
    return (isinstance(op, NpuOp) and op.tflite_type == "SUM" and op.op_type == "Mul"
            and op.ifm2 is not None and op.ifm2.is_constant)


def rescaled_sums(ops: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...]:
    """Each SUM over depth (a 1x1 convolution of ones into int32 sums, then the Mul scaling them,
    ``_depth_sum``) as one convolution whose output stage scales the sums into the SUM's output
    with its activation, as Vela's default core runs a SUM: no int32 map and no Mul, but an output
    stage writing one channel, which some accelerators run slower (the planner prices both)."""
    readers = readers_by_tensor(ops)
    merged: dict[int, NpuOp] = {}
    dropped: set[int] = set()
    for conv in ops:
        if not (isinstance(conv, NpuOp) and conv.tflite_type == "SUM" and conv.block_type is BlockType.CONV
                and conv.ofm.dtype == DataType.INT32):
            continue
        users = readers.get(id(conv.ofm), [])
        if len(users) != 1 or not _sum_scaling(users[0]):
            continue
        mul = users[0]
        assert isinstance(mul, NpuOp)
        merged[id(conv)] = replace(conv, ofm=mul.ofm, activation=mul.activation)
        dropped.add(id(mul))
    return tuple(merged.get(id(op), op) for op in ops if id(op) not in dropped)


def rescales_sums(ops: tuple[LoweredOp, ...]) -> bool:
    """Whether ``rescaled_sums`` changes any of ``ops`` (cheaper than running it to find out)."""
    return any(_sum_scaling(op) for op in ops) and any(
        isinstance(op, NpuOp) and op.tflite_type == "SUM" and op.block_type is BlockType.CONV for op in ops)
