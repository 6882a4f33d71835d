"""Convert one NPU-supported TFLite operator into its hardware operations (``NpuOp``).

Weights are kept in OHWI order: convolutions as TFLite stores them (O x H x W x I), fully
connected weights O x 1 x 1 x K, depthwise weights as TFLite stores them, 1 x H x W x C (one
filter per channel along the last axis, the layout Vela keeps). Decompositions into several
operations live in their own modules (mean, softmax, pad, concat).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import Quantization
from npuplan.lowering._util import STANDALONE_ACTIVATIONS, fused_activation, op_padding, standalone_activation
from npuplan.lowering.dilation_phases import split_phases
from npuplan.lowering.grouped import conv_groups, convert_depth_multiplier, convert_grouped_conv, has_depth_multiplier
from npuplan.lowering.lut_tables import activation_table
from npuplan.lowering.strided_conv import fold_stride_into_depth
from npuplan.lowering.support import BINARY_ELEMENTWISE, max_pool_view

Converter = Callable[[Op], tuple[NpuOp, ...]]

# Vela's suffix for a standalone LUT activation (``<name>_lut_<suffix>``).
_LUT_NAMES = {"HARD_SWISH": "hardswish", "TANH": "tanh", "LOGISTIC": "sigmoid", "LEAKY_RELU": "lrelu", "EXP": "exp",
              "RSQRT": "rsqrt", "GELU": "gelu", "LOG": "log"}


def op_name(op: Op) -> str:
    """Vela's layer name: the TFLite name of the op's (original) output tensor."""
    return str(op.options.get("npu_name", op.name))


# TensorType INT32, as a converter writes it in an operator's ``quantized_bias_type`` option
_INT32_BIAS_TYPE = 2


def _bias(op: Op) -> tuple[np.ndarray | None, Tensor | None]:
    """The bias values and tensor. An op without a bias tensor whose options declare 32-bit biases
    (a 16x8 converter's ``bias_type`` int32) gets zeros of that type: TFLite's kernel then takes
    its 32-bit path, and the bias type is what decides the output stage's scaling
    (``emit.weights.reduced_scaling``)."""
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if bias is None and op.options.get("quantized_bias_type") == _INT32_BIAS_TYPE:
        return np.zeros(op.outputs[0].shape[-1], dtype=np.int32), None
    return (bias.data if bias is not None else None), bias


def _ifm_ofm(op: Op) -> tuple[Tensor, Tensor]:
    ifm = op.inputs[0]
    assert ifm is not None
    return ifm, op.outputs[0]


def _conv_kernel(op: Op, ifm_shape: Shape4D, kh: int, kw: int) -> Kernel:
    o = op.options
    sy, sx = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    dy, dx = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    padding = op_padding(o, ifm_shape.h, ifm_shape.w, ((kh - 1) * dy + 1, (kw - 1) * dx + 1), (sy, sx))
    return Kernel(kh, kw, sy, sx, dy, dx, padding)


def hardware_dilation(op: Op, weights: np.ndarray, zero_point: int) -> tuple[np.ndarray, Kernel]:
    """The weights and kernel the hardware runs: it dilates by 1 or 2 only, so a larger factor
    spreads the kernel (zero-point taps in between) and keeps a dilation of 2 when the factor is
    even, 1 when odd, as Vela does. The dilated extent, and so the padding, is unchanged."""
    ifm_shape = op.inputs[0].shape4d if op.inputs[0] is not None else Shape4D()
    _, kh, kw, _ = weights.shape
    kernel = _conv_kernel(op, ifm_shape, kh, kw)
    if kernel.dilation_y <= 2 and kernel.dilation_x <= 2:
        return weights, kernel
    hw_y, hw_x = (1 if kernel.dilation_y % 2 else 2), (1 if kernel.dilation_x % 2 else 2)
    step_y, step_x = kernel.dilation_y // hw_y, kernel.dilation_x // hw_x
    spread = np.full((weights.shape[0], (kh - 1) * step_y + 1, (kw - 1) * step_x + 1, weights.shape[3]),
                     zero_point, dtype=weights.dtype)
    spread[:, ::step_y, ::step_x, :] = weights
    spread.flags.writeable = False
    return spread, replace(kernel, height=spread.shape[1], width=spread.shape[2], dilation_y=hw_y, dilation_x=hw_x)


def convert_phased(op: Op) -> tuple[NpuOp, ...] | None:
    """A CONV_2D or DEPTHWISE_CONV_2D (without groups or a depth multiplier) of a dilation the
    hardware does not run (above 2) as one operation per phase over strided views of its maps,
    its kernel's own taps only (``dilation_phases``); None for any other op, or one that does not
    split (``convert_conv`` / ``convert_depthwise`` then spread its kernel)."""
    if op.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or conv_groups(op) > 1 or has_depth_multiplier(op):
        return None
    ifm, ofm = _ifm_ofm(op)
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    _, kh, kw, _ = weights.shape
    if op.type == "CONV_2D" and ifm.shape4d.h == ifm.shape4d.w == kh == kw == 1:
        return None
    kernel = _conv_kernel(op, ifm.shape4d, kh, kw)
    bias, bias_tensor = _bias(op)
    conv = op.type == "CONV_2D"
    whole = NpuOp(
        name=op_name(op), tflite_type=op.type, op_type="Conv2DBias" if conv else "DepthwiseConv2DBias",
        block_type=BlockType.CONV if conv else BlockType.DEPTHWISE, ifm=ifm, ifm_shape=ifm.shape4d,
        ofm=ofm, ofm_shape=ofm.shape4d, weights=weights.data, weight_tensor=weights, bias=bias,
        bias_tensor=bias_tensor, kernel=kernel, activation=fused_activation(op.options), source_index=op.index,
    )
    return split_phases(whole)


def convert_conv(op: Op) -> tuple[NpuOp, ...]:
    """CONV_2D -> Conv2DBias; a 1x1 kernel on a 1x1 IFM -> FullyConnected (as Vela does); a grouped
    conv -> one Conv2DBias per group (``grouped``)."""
    if conv_groups(op) > 1:
        return convert_grouped_conv(op, kernel_for=hardware_dilation)
    ifm, ofm = _ifm_ofm(op)
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    ifm_shape, ofm_shape = ifm.shape4d, ofm.shape4d
    _, kh, kw, _ = weights.shape
    bias, bias_tensor = _bias(op)
    if ifm_shape.h == 1 and ifm_shape.w == 1 and kh == 1 and kw == 1:
        return (
            NpuOp(
                name=op_name(op) + "_fc", tflite_type=op.type, op_type="FullyConnected",
                block_type=BlockType.VECTOR_PRODUCT, ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm_shape,
                weights=weights.data, weight_tensor=weights, bias=bias, bias_tensor=bias_tensor,
                activation=fused_activation(op.options), source_index=op.index,
            ),
        )
    data, kernel = hardware_dilation(op, weights.data, _scalar_zero_point(weights))
    conv = NpuOp(
        name=op_name(op), tflite_type=op.type, op_type="Conv2DBias", block_type=BlockType.CONV,
        ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm_shape,
        weights=data, weight_tensor=weights, bias=bias, bias_tensor=bias_tensor,
        kernel=kernel, activation=fused_activation(op.options), source_index=op.index,
    )
    mode = "EXPLICIT" if "explicit_padding" in op.options else str(op.options.get("padding", "VALID"))
    return (fold_stride_into_depth(conv, padding_mode=mode, weight_zero_point=_scalar_zero_point(weights)),)


def _scalar_zero_point(tensor: Tensor) -> int:
    """The tensor's zero point when it has a single one (per-axis quantization pads with 0)."""
    zp = tensor.quant.zero_point if tensor.quant is not None else ()
    return int(zp[0]) if len(zp) == 1 else 0


def convert_depthwise(op: Op) -> tuple[NpuOp, ...]:
    """DEPTHWISE_CONV_2D -> DepthwiseConv2DBias (weights 1 x H x W x C); with a depth multiplier
    over several input channels, convolutions (``grouped``)."""
    if has_depth_multiplier(op):
        return convert_depth_multiplier(op, kernel_for=hardware_dilation)
    ifm, ofm = _ifm_ofm(op)
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    ifm_shape = ifm.shape4d
    bias, bias_tensor = _bias(op)
    data, kernel = hardware_dilation(op, weights.data, _scalar_zero_point(weights))
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE,
            ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm.shape4d,
            weights=data, weight_tensor=weights, bias=bias, bias_tensor=bias_tensor,
            kernel=kernel, activation=fused_activation(op.options), source_index=op.index,
        ),
    )


# How Vela lays out a batch of FC rows on the OFM plane (rows -> height x width); other row
# counts run as one row of ``rows`` columns.
_BATCH_SPLIT = {4: (2, 2), 6: (2, 3), 8: (2, 4), 9: (3, 3), 12: (3, 4), 16: (4, 4)}


def convert_fully_connected(op: Op) -> tuple[NpuOp, ...]:
    """FULLY_CONNECTED -> FullyConnected over rows x K, weights O x 1 x 1 x K.

    Several rows (tokens x features) are laid out on the OFM plane as Vela does; when they make a
    single row longer than 4 the op runs as a 1x1 convolution (Conv2DBias), so its weights are
    read once for all the rows rather than once per row.
    """
    ifm, ofm = _ifm_ofm(op)
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    out_channels, depth = weights.shape[0], int(np.prod(weights.shape[1:]))
    rows = max(ifm.elements // depth, 1)
    h, w = _BATCH_SPLIT.get(rows, (1, rows))
    as_conv = h == 1 and w > 4
    bias, bias_tensor = _bias(op)
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type="Conv2DBias" if as_conv else "FullyConnected",
            block_type=BlockType.CONV if as_conv else BlockType.VECTOR_PRODUCT,
            ifm=ifm, ifm_shape=Shape4D(1, h, w, depth), ofm=ofm, ofm_shape=Shape4D(1, h, w, out_channels),
            weights=weights.data.reshape(out_channels, 1, 1, depth), weight_tensor=weights,
            bias=bias, bias_tensor=bias_tensor, activation=fused_activation(op.options), source_index=op.index,
        ),
    )


def convert_pool(op: Op) -> tuple[NpuOp, ...]:
    """AVERAGE_POOL_2D -> AvgPool, MAX_POOL_2D -> MaxPool."""
    ifm, ofm = _ifm_ofm(op)
    o = op.options
    ifm_shape = ifm.shape4d
    kh, kw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    sy, sx = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    padding = op_padding(o, ifm_shape.h, ifm_shape.w, (kh, kw), (sy, sx))
    if (kh, kw) == (sy, sx) == (ifm_shape.h, ifm_shape.w):
        # One window over the whole IFM (unpadded, SAME or VALID): the stride never moves it, and a
        # stride of 1 keeps the hardware's IFM blocks small (a 42-row stride needs 50-row blocks),
        # as Vela does.
        sy = sx = 1
    is_max = op.type == "MAX_POOL_2D"
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type="MaxPool" if is_max else "AvgPool",
            block_type=BlockType.POOLING, ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm.shape4d,
            kernel=Kernel(kh, kw, sy, sx, padding=padding),
            activation=fused_activation(o), pool=PoolKind.MAX if is_max else PoolKind.AVERAGE,
            source_index=op.index,
        ),
    )


def convert_binary_elementwise(op: Op) -> tuple[NpuOp, ...]:
    """ADD/SUB/MUL/MAXIMUM/MINIMUM -> one ElementWise op (broadcasting kept in the 4D shapes)."""
    ifm, ofm = _ifm_ofm(op)
    ifm2 = op.inputs[1]
    assert ifm2 is not None
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type=BINARY_ELEMENTWISE[op.type],
            block_type=BlockType.ELEMENTWISE, ifm=ifm, ifm_shape=ifm.shape4d, ifm2=ifm2, ifm2_shape=ifm2.shape4d,
            ofm=ofm, ofm_shape=ofm.shape4d, activation=fused_activation(op.options), elementwise=op.type,
            source_index=op.index,
        ),
    )


def convert_standalone_activation(op: Op) -> tuple[NpuOp, ...]:
    """An activation that could not be fused: LUT ones become Add(x, 0) with the LUT, like Vela;
    clamps run as a 1x1 average pool with the activation in its output stage."""
    ifm, ofm = _ifm_ofm(op)
    activation = standalone_activation(op)
    if activation is Activation.LUT:
        # the scalar is a real 0: the IFM's scale with zero point 0 (as Vela's convert_to_lut)
        quant = None if ifm.quant is None else Quantization(ifm.quant.scale[:1], (0,))
        zero = Tensor(ifm.name + "_scalar0", (), ifm.dtype, quant, np.zeros((), dtype=np.int8))
        table = None
        if ifm.quant is not None and ofm.quant is not None and ifm.dtype == ofm.dtype:
            table = activation_table(op.type, ifm.dtype, ifm.quant, ofm.quant, op.options)
        return (
            NpuOp(
                name=f"{op_name(op)}_lut_{_LUT_NAMES.get(op.type, op.type.lower())}", tflite_type=op.type, op_type="Add",
                block_type=BlockType.ELEMENTWISE, ifm=ifm, ifm_shape=ifm.shape4d, ifm2=zero,
                ifm2_shape=Shape4D(), ofm=ofm, ofm_shape=ofm.shape4d, activation=activation,
                elementwise="ADD", source_index=op.index, lut=table,
            ),
        )
    builtin = activation in (Activation.TANH, Activation.SIGMOID)  # int16: Vela's "<name>_avgpool"
    return (
        NpuOp(
            name=f"{op_name(op)}_avgpool" if builtin else op_name(op), tflite_type=op.type, op_type="AvgPool",
            block_type=BlockType.POOLING, ifm=ifm, ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d,
            activation=activation, pool=PoolKind.AVERAGE, source_index=op.index,
        ),
    )


def convert_unary_elementwise(op: Op) -> tuple[NpuOp, ...]:
    """ABS -> one unary ElementWise op."""
    ifm, ofm = _ifm_ofm(op)
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type=op.type.capitalize(), block_type=BlockType.ELEMENTWISE,
            ifm=ifm, ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d, activation=fused_activation(op.options),
            elementwise=op.type, source_index=op.index,
        ),
    )


def convert_requantize(op: Op) -> tuple[NpuOp, ...]:
    """QUANTIZE between fixed-point types -> a 1x1 average pool whose output stage rescales."""
    ifm, ofm = _ifm_ofm(op)
    return (
        NpuOp(
            name=op_name(op), tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=ifm,
            ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d, pool=PoolKind.AVERAGE, source_index=op.index,
        ),
    )


def _reduce_max_pool(op: Op, name: str, ifm: Tensor, ofm: Tensor) -> NpuOp:
    """One max pool over the reduced axes of ``ifm``'s view (``max_pool_view``), writing ``ofm``."""
    axis = op.inputs[1]
    assert axis is not None and axis.data is not None
    found = max_pool_view(ifm.shape, [int(a) for a in axis.data.reshape(-1)])
    assert not isinstance(found, str), found
    (n, h, w, c), kh, kw = found
    return NpuOp(
        name=name, tflite_type=op.type, op_type="MaxPool", block_type=BlockType.POOLING, ifm=ifm,
        ifm_shape=Shape4D(n, h, w, c), ofm=ofm, ofm_shape=Shape4D(n, 1 if kh > 1 else h, 1 if kw > 1 else w, c),
        kernel=Kernel(kh, kw), pool=PoolKind.MAX, source_index=op.index,
    )


def convert_reduce_max(op: Op) -> tuple[NpuOp, ...]:
    """REDUCE_MAX -> one max pool over the reduced axes of the IFM's view (``max_pool_view``); over
    width and depth, a pool over the width (and height) at full depth, then one over the depth."""
    ifm, ofm = _ifm_ofm(op)
    return _width_then_depth(op, ifm, ofm) or (_reduce_max_pool(op, op_name(op), ifm, ofm),)


def _width_then_depth(op: Op, ifm: Tensor, ofm: Tensor) -> tuple[NpuOp, NpuOp] | None:
    """A REDUCE_MAX over width and depth (and maybe height) as two max pools: one with a kernel
    over the width at the map's depth, each step reducing a micro-block's depth of channels, then
    one over the depth of what is left laid along the width. The one pool over the map seen with
    depth 1 computes one useful element a micro-block (op_broadcast_hw, 10x14x6 on the U55-128:
    3875 cycles; the two: about 1100, as Vela's default core splits it). The first keeps the IFM's
    quantization, the second rescales once, as the one pool does: the same maximum."""
    axis = op.inputs[1]
    assert axis is not None and axis.data is not None
    n, h, w, c = ifm.shape4d.as_list()
    rank = len(ifm.shape)
    reduced = {int(a) % rank + 4 - rank for a in axis.data.reshape(-1)} if rank else set()
    if n != 1 or w <= 1 or c <= 1 or not {2, 3} <= reduced:
        return None
    kh = h if 1 in reduced else 1
    rows = 1 if kh > 1 else h
    mid = Tensor(f"{ofm.name}_max_width", (1, rows, 1, c), ifm.dtype, ifm.quant)
    width = NpuOp(
        name=mid.name, tflite_type=op.type, op_type="MaxPool", block_type=BlockType.POOLING, ifm=ifm,
        ifm_shape=Shape4D(1, h, w, c), ofm=mid, ofm_shape=Shape4D(1, rows, 1, c), kernel=Kernel(kh, w),
        pool=PoolKind.MAX, source_index=op.index,
    )
    depth = NpuOp(
        name=op_name(op), tflite_type=op.type, op_type="MaxPool", block_type=BlockType.POOLING, ifm=mid,
        ifm_shape=Shape4D(1, rows, c, 1), ofm=ofm, ofm_shape=Shape4D(1, rows, 1, 1), kernel=Kernel(1, c),
        pool=PoolKind.MAX, source_index=op.index,
    )
    return width, depth


def convert_reduce_min(op: Op) -> tuple[NpuOp, ...]:
    """REDUCE_MIN -> min(x) = c - max(c - x), as Vela's default core runs it: an inverting Sub from
    the constant ``c``, the max pool of REDUCE_MAX, and the Sub inverting back into the OFM. With
    the IFM's quantization (zero point z) on all three, ``c`` is the integer ``-1 - z`` for signed
    types (``255 - z`` for uint8), so the stored integers map onto their own range reversed
    (q -> -1 - q, q -> 255 - q) and nothing saturates."""
    ifm, ofm = _ifm_ofm(op)
    zero_point = int(ifm.quant.zero_point[0]) if ifm.quant is not None and ifm.quant.zero_point else 0
    info = np.iinfo(np.dtype(ifm.dtype.value))
    top = np.full((), (info.max if info.min == 0 else -1) - zero_point, dtype=np.int64)
    top.flags.writeable = False
    const = Tensor(f"{ifm.name}_reducemin_max", (), ifm.dtype, ifm.quant, top)
    inverted = Tensor(f"{ifm.name}_reducemin_invert", ifm.shape, ifm.dtype, ifm.quant)
    pooled = Tensor(f"{ofm.name}_reducemin_invert_back", ofm.shape, ofm.dtype, ofm.quant)
    pool = _reduce_max_pool(op, pooled.name, inverted, pooled)

    def invert(name: str, src: Tensor, shape: Shape4D, dst: Tensor) -> NpuOp:
        return NpuOp(name=name, tflite_type=op.type, op_type="Sub", block_type=BlockType.ELEMENTWISE, ifm=const,
                     ifm_shape=Shape4D(), ifm2=src, ifm2_shape=shape, ofm=dst, ofm_shape=shape, elementwise="SUB",
                     source_index=op.index)

    return (invert(inverted.name, ifm, pool.ifm_shape, inverted), pool,
            invert(op_name(op), pooled, pool.ofm_shape, ofm))
