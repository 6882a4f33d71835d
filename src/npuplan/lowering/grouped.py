"""Convolutions over groups of channels: grouped CONV_2D, and DEPTHWISE_CONV_2D with a depth
multiplier above 1 over several input channels.

A grouped CONV_2D (TFLite weights of input depth ``IFM depth / groups``, Keras' ``groups``) runs
as one convolution per group, reading the group's input channels at their depth offset and
writing its output channels at theirs, with the group's slice of the weights (as Vela's default
core splits it; the legacy core fails on such a model).

Output channel ``c * M + m`` of such a layer filters input channel ``c`` alone. The NPU's
depthwise mode pairs output channel ``k`` with input channel ``k``, so (Vela's legacy core leaves
these layers on the CPU) npuplan runs one as ordinary convolutions over groups of input channels:
each reads its channels at a depth offset and writes its ``G * M`` output channels at theirs, with
weights equal to the weight zero point outside each output channel's own input channel. A group
is 8 input channels: a group's convolution does ``group`` times the layer's own MACs, and groups of
8 halve the MACs of groups of 16 (the brick depth) for the price of linear (NHWC) feature maps at
8-channel offsets (mobilenet_v1_pad_97_m2, a 16-channel layer of multiplier 2: 121908 -> 109390
cycles on the U55-128, no network of the zoos slower); groups of 4 fill half an IFM micro-block.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, Kernel, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import Quantization
from npuplan.lowering._util import fused_activation

GROUP_DEPTH = 8
KernelLayout = Callable[[Op, np.ndarray, int], tuple[np.ndarray, Kernel]]


def has_depth_multiplier(op: Op) -> bool:
    """A depthwise convolution with a multiplier above 1 over more than one input channel."""
    ifm = op.inputs[0]
    return (op.type == "DEPTHWISE_CONV_2D" and int(op.options.get("depth_multiplier", 1)) > 1
            and ifm is not None and ifm.shape[-1] > 1)


def _group_weights(weights: Tensor, first: int, count: int, multiplier: int, zero_point: int) -> Tensor:
    """Dense OHWI weights of input channels ``first .. first + count``: output ``j`` of the group
    takes input ``j // multiplier`` with the depthwise filter of output ``first * multiplier + j``."""
    assert weights.data is not None
    _, kh, kw, _ = weights.shape
    outs = count * multiplier
    dense = np.full((outs, kh, kw, count), zero_point, dtype=weights.data.dtype)
    for j in range(outs):
        dense[j, :, :, j // multiplier] = weights.data[0, :, :, first * multiplier + j]
    dense.flags.writeable = False
    quant = weights.quant
    if quant is not None and quant.is_per_axis:
        span = slice(first * multiplier, first * multiplier + outs)
        quant = Quantization(scale=quant.scale[span], zero_point=quant.zero_point[span], axis=0)
    return Tensor(f"{weights.name}_dense_{first}", dense.shape, weights.dtype, quant, dense)


def conv_groups(op: Op) -> int:
    """How many groups a CONV_2D's weights split its IFM depth into (1: an ordinary conv; 0: the
    weights' input depth does not divide the IFM depth)."""
    ifm, weights = op.inputs[0], op.inputs[1]
    if op.type != "CONV_2D" or ifm is None or weights is None or len(weights.shape) != 4 or not ifm.shape:
        return 1
    depth, per_group = ifm.shape[-1], weights.shape[3]
    return depth // per_group if per_group and depth % per_group == 0 else 0


def _slice_weights(weights: Tensor, outs: slice) -> Tensor:
    """The weights (and per-channel quantization) of the output channels ``outs``."""
    assert weights.data is not None
    data = weights.data[outs]
    data.flags.writeable = False
    quant = weights.quant
    if quant is not None and quant.is_per_axis:
        quant = Quantization(scale=quant.scale[outs], zero_point=quant.zero_point[outs], axis=0)
    return Tensor(f"{weights.name}_{outs.start}", data.shape, weights.dtype, quant, data)


def _group_op(op: Op, name: str, weights: Tensor, reads: tuple[int, int], writes: tuple[int, int], *,
              split: bool, kernel_for: KernelLayout) -> NpuOp:
    """One group's convolution: input channels ``reads`` (first, count) to outputs ``writes``."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    assert ifm is not None and weights.data is not None
    zero_point = int(weights.quant.zero_point[0]) if weights.quant is not None and weights.quant.zero_point else 0
    data, kernel = kernel_for(op, weights.data, zero_point)
    i, o = ifm.shape4d, ofm.shape4d
    box = Shape4D(o.n, o.h, o.w, writes[1])
    outs = slice(writes[0], writes[0] + writes[1])
    return NpuOp(
        name=f"{name}_group_{reads[0]}" if split else name, tflite_type=op.type, op_type="Conv2DBias",
        block_type=BlockType.CONV, ifm=ifm, ifm_shape=Shape4D(i.n, i.h, i.w, reads[1]), ofm=ofm,
        ofm_shape=box if split else o, weights=data, weight_tensor=weights,
        bias=bias.data[outs] if bias is not None and bias.data is not None else None, bias_tensor=bias,
        kernel=kernel, activation=fused_activation(op.options), source_index=op.index,
        ifm_read_offset=Shape4D(0, 0, 0, reads[0]) if split else None,
        ofm_write_offset=Shape4D(0, 0, 0, writes[0]) if split else None,
        ofm_write_shape=box if split else None,
    )


def convert_depth_multiplier(op: Op, *, kernel_for: KernelLayout) -> tuple[NpuOp, ...]:
    """The convolutions of one depthwise layer with a depth multiplier (see module docstring);
    ``kernel_for(op, weights, zero_point) -> (weights, Kernel)`` lays out the kernel (dilation)."""
    ifm, weights = op.inputs[0], op.inputs[1]
    assert ifm is not None and weights is not None and weights.data is not None
    multiplier = int(op.options["depth_multiplier"])
    zero_point = int(weights.quant.zero_point[0]) if weights.quant is not None and weights.quant.zero_point else 0
    depth = ifm.shape4d.c
    firsts = range(0, depth, GROUP_DEPTH)
    name = str(op.options.get("npu_name", op.name))
    ops: list[NpuOp] = []
    for first in firsts:
        count = min(GROUP_DEPTH, depth - first)
        dense = _group_weights(weights, first, count, multiplier, zero_point)
        ops.append(_group_op(op, name, dense, (first, count), (first * multiplier, count * multiplier),
                             split=len(firsts) > 1, kernel_for=kernel_for))
    return tuple(ops)


def convert_grouped_conv(op: Op, *, kernel_for: KernelLayout) -> tuple[NpuOp, ...]:
    """One convolution per group of a grouped CONV_2D (see module docstring)."""
    ifm, weights, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and weights is not None and weights.data is not None
    groups = conv_groups(op)
    per_in, per_out = weights.shape[3], ofm.shape4d.c // groups
    name = str(op.options.get("npu_name", op.name))
    return tuple(
        _group_op(op, name, _slice_weights(weights, slice(g * per_out, (g + 1) * per_out)), (g * per_in, per_in),
                  (g * per_out, per_out), split=True, kernel_for=kernel_for)
        for g in range(groups))
