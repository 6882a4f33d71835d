"""Upscaling operators, lowered onto the NPU's IFM resampling (x2 in height and width while reading).

- RESIZE_NEAREST_NEIGHBOR by 2, 4 or 8: a chain of 1x1 average pools reading their IFM upscaled
  x2 by nearest neighbour (one per factor of 2), as Vela does.
- RESIZE_BILINEAR by 2, 4 or 8 without half-pixel centres: the same chain whose last pool averages
  a ``factor x factor`` window padded at the bottom and right; by 2 with half-pixel centres: four
  2x2 depthwise convolutions padded with the edges, one per output phase, each writing every
  other row and column (its staged form, ``staged_writes``: the phases write an intermediate
  map, which one copy writes to the OFM in whole rows).
- align_corners (the OFM's size less one is the factor times the IFM's less one): the same chain,
  whose last step reads ``factor x factor`` windows without padding (one fewer row and column per
  step of the factor); bilinear averages the window, nearest is a depthwise convolution whose
  single weight picks the neighbour (the window's centre, rounding down and right).
- An IFM already the OFM's size: one 1x1 average pool (a copy).
- Their other form (``depthwise``): each x2 nearest step that copies (a 1x1 kernel) a 1x1 depthwise
  convolution by weights of 1 instead of a pool, the same values by another datapath (the pool's
  takes four times the depthwise's MAC cycles a micro-block at 8 bits); the planner prices both.
- TRANSPOSE_CONV: a convolution with stride 1 over the IFM upscaled by its stride with zeros
  inserted (the hardware's transpose resampling), padded so the OFM has the declared size.

- A 1x1 IFM: an elementwise ADD of the input to zeros of the OFM's shape (a broadcast).
"""

from __future__ import annotations

import math

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, Padding, PoolKind, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering._util import fused_activation
from npuplan.lowering.fixedpoint import quantise_scale

RESIZE_TYPES = frozenset({"RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"})
_FACTORS = (2, 4, 8)


def _op_name(op: Op) -> str:
    return str(op.options.get("npu_name", op.name))


def resize_factor(ifm: Shape4D, ofm: Shape4D, *, align_corners: bool = False) -> int | None:
    """The common power-of-two upscaling factor of a resize (a dimension of 1 may stay 1).

    Without align_corners the OFM is ``factor`` times the IFM; with it, the OFM less one is
    ``factor`` times the IFM less one (the corner pixels of both line up)."""
    less = 1 if align_corners else 0
    pairs = [(i - less, o - less) for i, o in ((ifm.h, ofm.h), (ifm.w, ofm.w)) if not (i == o == 1)]
    if not pairs or any(i <= 0 or o % i for i, o in pairs):
        return None
    factors = {o // i for i, o in pairs}
    if len(factors) != 1:
        return None
    factor = factors.pop()
    return factor if factor in _FACTORS else None


def _four_d(*tensors: Tensor) -> bool:
    """4D tensors, or (a reshape before or after removed) lower-rank ones standing for the same 4D
    view: ranks 1 to 4 (the file's own tensors of these ops are 4D; TFLite asks for it)."""
    return all(1 <= len(t.shape) <= 4 for t in tensors)


def _same_quantization(ifm: Tensor, ofm: Tensor) -> bool:
    a, b = ifm.quant, ofm.quant
    if a is None or b is None:
        return a is b
    return (tuple(a.scale[:1]), tuple(a.zero_point[:1])) == (tuple(b.scale[:1]), tuple(b.zero_point[:1]))


def resize_reason(op: Op) -> str | None:
    """Why a resize stays on the CPU, or None."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    size = op.inputs[1] if len(op.inputs) > 1 else None
    assert ifm is not None
    if not _four_d(ifm, ofm):
        return "IFM and OFM must be 4D"
    if size is None or size.data is None or size.data.size != 2:
        return "The size tensor must be constant with two elements"
    if [int(v) for v in size.data.reshape(-1)] != [ofm.shape4d.h, ofm.shape4d.w]:
        return f"The size tensor must match the output tensor shape (size {size.data.tolist()}, OFM {list(ofm.shape)})"
    align, half = bool(op.options.get("align_corners", False)), bool(op.options.get("half_pixel_centers", False))
    if align and half:
        return "Both align_corners and half_pixel_centers can't be True"
    if ifm.dtype != ofm.dtype:
        return f"IFM and OFM data types must match ({ifm.dtype} and {ofm.dtype})"
    if not _same_quantization(ifm, ofm):
        return "IFM and OFM quantization must match (TFLite's kernel writes the input's raw values, not rescaled)"
    i, o = ifm.shape4d, ofm.shape4d
    if i.h == o.h and i.w == o.w:
        return None
    if i.h == 1 and i.w == 1:
        return None  # a broadcast: an elementwise ADD to zeros of the OFM's shape
    if resize_factor(i, o, align_corners=align) is None:
        if align:
            return (f"With align_corners, OFM height and width less one must be 2x, 4x or 8x the IFM's less one, "
                    f"the same factor for both (IFM {i.h}x{i.w}, OFM {o.h}x{o.w})")
        return (f"OFM height and width must be 2x, 4x or 8x the IFM's, the same factor for both "
                f"(IFM {i.h}x{i.w}, OFM {o.h}x{o.w})")
    if half and op.type == "RESIZE_BILINEAR" and resize_factor(i, o) != 2:
        return f"For half_pixel_centers the OFM height and width must be 2x the IFM's (IFM {i.h}x{i.w}, OFM {o.h}x{o.w})"
    return None


def _pool(op: Op, name: str, ifm: Tensor, ofm: Tensor, ofm_shape: Shape4D, kernel: Kernel,
          resampling: Resampling, activation: Activation) -> NpuOp:
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=ifm,
        ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm_shape, kernel=kernel, activation=activation,
        pool=PoolKind.AVERAGE, resampling=resampling, source_index=op.index,
    )


def has_depthwise_form(op: Op) -> bool:
    """Whether ``convert_resize(op, depthwise=True)`` differs from its plain form: an 8-bit resize
    with some x2 nearest step whose kernel is 1x1."""
    ifm = op.inputs[0]
    return (ifm is not None and ifm.dtype == DataType.INT8 and resize_reason(op) is None
            and any(_copies_up(o) for o in convert_resize(op)))


def _copies_up(op: NpuOp) -> bool:
    """Whether ``op`` is a 1x1 pool copying its IFM upscaled x2 by nearest neighbour."""
    return op.block_type is BlockType.POOLING and op.resampling is Resampling.NEAREST and op.kernel.elements == 1


def _as_depthwise(op: NpuOp) -> NpuOp:
    """A 1x1 copying pool (``_copies_up``) as a 1x1 depthwise convolution by weights of 1 (scale 1,
    bias 0): each output the input's value rescaled to the OFM's quantization, as the pool's."""
    c = op.ofm_shape.c
    weights = np.ones((1, 1, 1, c), dtype=np.int8)
    weights.flags.writeable = False
    return NpuOp(
        name=op.name, tflite_type=op.tflite_type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE,
        ifm=op.ifm, ifm_shape=op.ifm_shape, ofm=op.ofm, ofm_shape=op.ofm_shape, weights=weights,
        weight_tensor=Tensor(f"{op.name}_ones", weights.shape, DataType.INT8, Quantization((1.0,), (0,)), weights),
        bias=np.zeros(c, dtype=np.int64), kernel=Kernel(), activation=op.activation, resampling=op.resampling,
        source_index=op.source_index,
    )


def convert_resize(op: Op, *, depthwise: bool = False) -> tuple[NpuOp, ...]:
    """RESIZE_* -> a chain of x2 nearest-upscaling average pools (see the module docstring); with
    ``depthwise``, its copying steps as depthwise convolutions (``_as_depthwise``)."""
    ops = _resize_steps(op)
    return tuple(_as_depthwise(o) if _copies_up(o) else o for o in ops) if depthwise else ops


def _resize_steps(op: Op) -> tuple[NpuOp, ...]:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    i, o = ifm.shape4d, ofm.shape4d
    name = _op_name(op)
    activation = fused_activation(op.options)
    if i.h == i.w == 1 and (o.h, o.w) != (1, 1):
        return (_broadcast(op, ifm, ofm, activation),)
    if op.type == "RESIZE_BILINEAR" and op.options.get("half_pixel_centers") and (i.h, i.w) != (o.h, o.w):
        return _half_pixel_bilinear(op, ifm, ofm, activation)
    if i.h == o.h and i.w == o.w:
        return (_pool(op, name, ifm, ofm, o, Kernel(), Resampling.NONE, activation),)
    align = bool(op.options.get("align_corners", False))
    factor = resize_factor(i, o, align_corners=align)
    assert factor is not None
    steps = int(math.log2(factor))
    ops: list[NpuOp] = []
    source = ifm
    up_h, up_w = not (i.h == o.h == 1), not (i.w == o.w == 1)  # a dimension of 1 may stay 1
    for step in range(steps - 1):
        shape = (1, source.shape4d.h * (2 if up_h else 1), source.shape4d.w * (2 if up_w else 1), o.c)
        middle = Tensor(f"{ofm.name}_{step}", shape, ofm.dtype, ofm.quant)
        ops.append(_pool(op, _step_name(name, step), source, middle, middle.shape4d, Kernel(), Resampling.NEAREST,
                         Activation.NONE))
        source = middle
    kh, kw = (factor if up_h else 1), (factor if up_w else 1)
    last = _step_name(name, steps - 1)
    if align and op.type == "RESIZE_NEAREST_NEIGHBOR":
        ops.append(_pick_neighbour(op, last, source, ofm, kh, kw, activation))
    elif op.type == "RESIZE_BILINEAR":
        pad = Padding() if align else Padding(bottom=kh - 1, right=kw - 1)
        ops.append(_pool(op, last, source, ofm, o, Kernel(kh, kw, padding=pad), Resampling.NEAREST, activation))
    else:
        ops.append(_pool(op, last, source, ofm, o, Kernel(), Resampling.NEAREST, activation))
    return tuple(ops)


def _step_name(name: str, step: int) -> str:
    """The name of step ``step`` of a resize chain: the first keeps the operator's, the others
    add their step (Vela's per-layer names, so the layers compare by name)."""
    return name if step == 0 else f"{name}_{step}"


def _pick_neighbour(op: Op, name: str, ifm: Tensor, ofm: Tensor, kh: int, kw: int, activation: Activation) -> NpuOp:
    """The last step of an align_corners nearest resize: a ``kh x kw`` depthwise convolution over
    the x2-upscaled IFM, unpadded, whose one weight of 1 (at the window's centre, rounded down and
    right) copies the nearest input pixel: output row ``y`` reads input row ``(y + kh // 2) // kh``
    of the whole upscaling, which is TFLite's ``round(y / factor)``."""
    c = ifm.shape4d.c
    weights = np.zeros((1, kh, kw, c), dtype=np.int8)
    weights[0, kh // 2, kw // 2, :] = 1
    return NpuOp(
        name=name, tflite_type=op.type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE, ifm=ifm,
        ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d, weights=weights, bias=np.zeros(c, dtype=np.int64),
        kernel=Kernel(kh, kw), activation=activation, resampling=Resampling.NEAREST, source_index=op.index,
    )


def _broadcast(op: Op, ifm: Tensor, ofm: Tensor, activation: Activation) -> NpuOp:
    """A resize of a 1x1 IFM: every output pixel is the input, an ADD of the input to zeros of the
    OFM's shape (Vela's lowering). The zeros are real zeros in the input's quantization (its zero
    point, in an array wide enough for any feature-map type), so the ADD adds nothing."""
    zero_point = int(ifm.quant.zero_point[0]) if ifm.quant is not None and len(ifm.quant.zero_point) else 0
    zeros = np.full(ofm.shape4d.as_list(), zero_point, dtype=np.int32)
    zeros.flags.writeable = False
    const = Tensor(f"{ofm.name}_zeros", tuple(ofm.shape4d.as_list()), ifm.dtype, ifm.quant, zeros)
    return NpuOp(name=f"{_op_name(op)}_add", tflite_type=op.type, op_type="Add", block_type=BlockType.ELEMENTWISE,
                 ifm=const, ifm_shape=const.shape4d, ifm2=ifm, ifm2_shape=ifm.shape4d, ofm=ofm,
                 ofm_shape=ofm.shape4d, activation=activation, elementwise="ADD", source_index=op.index)


# The four 2x2 interpolation kernels of a half-pixel x2 bilinear resize (weights in 16ths), one per
# output phase (row, column), and the padding (top, left, bottom, right) that aligns each on the
# input: the edge rows and columns repeated (TFLite clamps its sample positions to the input).
_PHASES = (
    ((0, 0), ((1, 3), (3, 9)), Padding(1, 1, 0, 0)),
    ((0, 1), ((3, 1), (9, 3)), Padding(1, 0, 0, 1)),
    ((1, 0), ((3, 9), (1, 3)), Padding(0, 1, 1, 0)),
    ((1, 1), ((9, 3), (3, 1)), Padding(0, 0, 1, 1)),
)
_SIXTEENTH = Quantization((1.0 / 16,), (0,))


def _sixteenths_rounded_away() -> tuple[int, int]:
    """The output stage's (multiplier, shift) of a division by 16 rounding halves away from zero:
    the next multiplier after 1/16's, with NATURAL rounding (Vela's recipe: halves of a negative
    sum then fall below the half and round down, those of a positive one round up)."""
    multiplier, shift = quantise_scale(1.0 / 16)
    return multiplier + 1, shift


def _half_pixel_bilinear(op: Op, ifm: Tensor, ofm: Tensor, activation: Activation) -> tuple[NpuOp, ...]:
    """A half-pixel x2 bilinear resize as Vela runs it: a copy of the IFM, then four 2x2 depthwise
    convolutions over it, one per output phase, padded with its edges, each writing every other
    row and column of the OFM (a strided view from the phase's offset). Their sums of raw values
    (zero points 0, as TFLite's kernel ignores them) divide by 16 rounding halves away from zero.
    A phase writes runs of one pixel's depth, a short burst each: its staged form
    (``staged_writes``) writes them to an intermediate map, then copies it in whole rows."""
    i = ifm.shape4d
    name = _op_name(op)
    copy = Tensor(f"{name}_rb_init", ifm.shape, ifm.dtype, ifm.quant)
    ops = [_pool(op, f"{name}_rb_init_avgpool", ifm, copy, i, Kernel(), Resampling.NONE, Activation.NONE)]
    for index, ((row, column), kernel, padding) in enumerate(_PHASES):
        weights = np.repeat(np.asarray(kernel, dtype=np.int8)[np.newaxis, :, :, np.newaxis], i.c, axis=3)
        ops.append(NpuOp(
            name=f"{name}_depthwise_conv_{index}", tflite_type=op.type, op_type="DepthwiseConv2DBias",
            block_type=BlockType.DEPTHWISE, ifm=copy, ifm_shape=i, ofm=ofm, ofm_shape=i, weights=weights,
            weight_tensor=Tensor(f"{name}_weights_{index}", weights.shape, DataType.INT8, _SIXTEENTH, weights),
            bias=np.zeros(i.c, dtype=np.int64), kernel=Kernel(2, 2, padding=padding), activation=activation,
            ofm_write_offset=Shape4D(0, row, column, 0), ofm_step=(2, 2), rescale=_sixteenths_rounded_away(),
            edge_padding=True, source_index=op.index,
        ))
    return tuple(ops)


# ---------------------------------------------------------------- transpose convolution
def transpose_conv_reason(op: Op) -> str | None:
    """Why a TRANSPOSE_CONV stays on the CPU, or None (Vela 5.2.0's constraints)."""
    weights, ifm, ofm = op.inputs[1], op.inputs[2], op.outputs[0]
    assert weights is not None and ifm is not None
    if not weights.is_constant or len(weights.shape) != 4:
        return "Weight tensor must be constant"
    if weights.dtype not in (DataType.INT8, DataType.UINT8):
        return f"Weight tensor must be 8-bit (it is {weights.dtype})"
    if not _four_d(ifm, ofm):
        return "IFM and OFM must be 4D"
    sh, sw = int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1))
    _, kh, kw, _ = weights.shape
    ih, iw = ifm.shape4d.h, ifm.shape4d.w
    if not ((sh, sw) in ((1, 1), (2, 2)) or (sw == 2 and sh == 1 and ih == 1 and kh == 1)):
        return f"Stride values WxH must be 1x1 or 2x2, or 2x1 when IFM height and kernel height are 1 (they are {sw}x{sh})"
    oh, ow = ofm.shape4d.h, ofm.shape4d.w
    if op.options.get("padding") == "SAME" and (oh != ih * sh or ow != iw * sw):
        return f"SAME padding: OFM dimensions must equal IFM dimensions multiplied by stride ({list(ofm.shape)})"
    if op.options.get("padding") == "VALID" and (oh != ih * sh + max(kh - sh, 0) or ow != iw * sw + max(kw - sw, 0)):
        return (f"VALID padding: OFM dimensions must equal IFM dimensions multiplied by stride, plus the kernel "
                f"less the stride ({list(ofm.shape)})")
    return None


def _span_padding(out_size: int, upscaled: int, kernel: int, stride: int, same: bool) -> tuple[int, int]:
    """Padding (before, after) of the stride-1 convolution with the flipped kernel over ``upscaled``
    rows (the IFM with ``stride - 1`` zeros after each row) that computes the transpose convolution.

    TFLite's reference puts input row i at output rows ``i * stride - p + k`` (``p`` its padding of
    the output: half the SAME total, rounded down; 0 for VALID), so output row y reads the upscaled
    rows from ``y - (kernel - 1 - p)``: that is the padding before (Vela's
    ``calc_upscaled_padding_and_skirt`` gives the same), the rest of the window's overhang after."""
    tfl = 0
    if same:
        tfl = max((-(-out_size // stride) - 1) * stride + kernel - out_size, 0) // 2
    before = max(kernel - 1 - tfl, 0)
    return before, max(out_size + kernel - 1 - upscaled - before, 0)


def convert_transpose_conv(op: Op) -> tuple[NpuOp, ...]:
    """TRANSPOSE_CONV -> a stride-1 convolution over the IFM upscaled by the stride (zeros inserted)."""
    weights, ifm, ofm = op.inputs[1], op.inputs[2], op.outputs[0]
    bias = op.inputs[3] if len(op.inputs) > 3 else None
    assert weights is not None and weights.data is not None and ifm is not None
    _, kh, kw, _ = weights.shape
    sh, sw = int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1))
    i, o = ifm.shape4d, ofm.shape4d
    upscaled = max(sh, sw) > 1
    same = op.options.get("padding") == "SAME"
    top, bottom = _span_padding(o.h, i.h * (2 if upscaled and i.h > 1 else 1), kh, sh, same)
    left, right = _span_padding(o.w, i.w * (2 if upscaled else 1), kw, sw, same)
    return (
        NpuOp(
            name=_op_name(op), tflite_type=op.type, op_type="Conv2DBackpropInputSwitchedBias",
            block_type=BlockType.CONV, ifm=ifm, ifm_shape=i, ofm=ofm, ofm_shape=o,
            weights=weights.data[:, ::-1, ::-1, :], weight_tensor=weights,
            bias=bias.data if bias is not None else None, bias_tensor=bias,
            kernel=Kernel(kh, kw, padding=Padding(top, left, bottom, right)),
            activation=fused_activation(op.options),
            resampling=Resampling.TRANSPOSE if upscaled else Resampling.NONE, source_index=op.index,
        ),
    )
